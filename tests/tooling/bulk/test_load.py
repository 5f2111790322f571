"""Bulk loads without a backend: JSON Lines parsing, the validation pass, the accounting.

The load itself runs on a fake executor that answers each call as told (stored,
unprocessed, refused), so what a `LoadError` says can be checked exactly.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as hs
from pydantic import ConfigDict, Field

import singletable as st
from singletable.operations.protocol import Call, Operation
from singletable.tooling.bulk.lines import JsonLines, LineError, check
from singletable.tooling.bulk.load import load
from singletable.tooling.bulk.load_units import LoadWork, file_units, local_path, model_tables
from singletable.tooling.jobs.local import LocalContext
from singletable.tooling.jobs.progress import Progress
from singletable.tooling.jobs.units import LeaseLost
from tests.unit_contexts import TakenOver

app = st.Table("load-app")
other = st.Table("load-other", entity_attribute="kind")


class Customer(st.Entity, table=app, pk="C#{cid}", sk="C", unique=("email",)):
    cid: str
    email: str
    balance: Decimal = Decimal(0)


class Order(st.Entity, table=app, pk="C#{cid}", sk="O#{placed}#{oid}"):
    cid: str
    placed: datetime
    oid: UUID
    total: Decimal
    note: str = Field(default="", alias="comment")


class Counter(st.Entity, table=app, pk="N#{name}", sk="N", version_field="version"):
    name: str
    hits: int = 0
    version: int = 0


class Tag(st.Entity, table=other, pk="T#{tag}", sk="T", name="Order"):
    tag: str


class Strict(st.Entity, table=other, pk="S#{sid}", sk="S"):
    model_config = ConfigDict(extra="forbid")
    sid: Annotated[str, Field(max_length=5)]


UID = "12345678-1234-5678-1234-567812345678"


def lines(*texts: str) -> list[bytes]:
    return [(t + "\n").encode("utf-8") for t in texts]


def errors(*texts: str, entity: str | None = None) -> list[tuple[int, str]]:
    report = check(JsonLines([app, other], entity=entity), lines(*texts))
    return [(e.line, str(e)) for e in report.errors]


# -- parsing -------------------------------------------------------------------------------


def test_exact_values_from_the_json_text() -> None:
    reader = JsonLines([app, other])
    obj = reader.parse(
        '{"_et": "load-app/Order", "cid": "c1", "placed": "2026-01-02T03:04:05.123456Z", '
        f'"oid": "{UID}", "total": "12345678901234567890.10", "comment": "hi"}}'
    )
    assert obj == Order(
        cid="c1",
        placed=datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=timezone.utc),
        oid=UUID(UID),
        total=Decimal("12345678901234567890.10"),
        comment="hi",
    )
    # Given as a string, every digit of the Decimal survives (a JSON number would not).
    assert isinstance(obj, Order)
    assert str(obj.total) == "12345678901234567890.10"
    # A number a float holds exactly may stay a number.
    small = reader.parse('{"_et": "Customer", "cid": "1", "email": "e", "balance": 1.10}')
    assert small.balance == Decimal("1.10")  # type: ignore[attr-defined]


def test_entity_from_the_option_or_each_tables_own_attribute() -> None:
    assert isinstance(
        JsonLines([app], entity="Customer").parse('{"cid": "1", "email": "e"}'), Customer
    )
    # `other` names its entities in "kind"; its "Order" is ambiguous with app's "Order".
    reader = JsonLines([app, other])
    assert isinstance(reader.parse('{"kind": "load-other/Order", "tag": "x"}'), Tag)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "{not json",
            "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 "
            "(char 1)",
        ),
        ("[1, 2]", "expected a JSON object, got an array"),
        ("4.5", "expected a JSON object, got a number"),
        (
            '{"_et": "Customer", "cid": "1", "cid": "2"}',
            "invalid JSON: the key 'cid' appears twice in one object",
        ),
        # pydantic reads JSON numbers through floats: digits a float cannot hold are refused.
        (
            '{"_et": "Customer", "cid": "1", "email": "e", "balance": 12345678901234567890.10}',
            "entity Customer: field 'balance': the JSON number 12345678901234567890.10 cannot "
            "be read exactly (pydantic reads JSON numbers as 64-bit floats: it would become "
            '1.2345678901234567e+19); write it as a string, "12345678901234567890.10", to keep '
            "every digit",
        ),
        (
            '{"_et": "Customer", "cid": "1", "email": "e", "balance": 1e400}',
            "entity Customer: field 'balance': the JSON number 1E+400 cannot be read exactly "
            "(pydantic reads JSON numbers as 64-bit floats: it would become inf); write it as a "
            'string, "1E+400", to keep every digit',
        ),
        (
            '{"cid": "1"}',
            "no entity: give --entity NAME, or name it in the line as '_et' or 'kind'",
        ),
        (
            '{"_et": "Nope"}',
            "unknown entity 'Nope' (the model's entities: Counter, Customer, Order, Strict)",
        ),
        (
            '{"_et": "Order"}',
            "entity 'Order' is ambiguous (load-app/Order@1, load-other/Order@1); name one as "
            "TABLE/NAME@VERSION",
        ),
        ('{"_et": 7}', "the entity name must be a string, got 7"),
        (
            '{"_et": "Customer", "kind": "Strict"}',
            "the line names several entities: ['Customer', 'Strict']",
        ),
        (
            '{"_et": "Customer", "cid": "1", "email": "e", "emial": "x"}',
            "entity Customer: unknown field 'emial'; its fields: cid, email, balance",
        ),
        ('{"_et": "Customer", "cid": "1"}', "entity Customer: field 'email': Field required"),
        (
            '{"_et": "Customer", "cid": 1, "email": "e"}',
            "entity Customer: field 'cid': Input should be a valid string (got 1)",
        ),
        (
            '{"_et": "Customer", "cid": "1", "email": "e", "balance": "abc"}',
            "entity Customer: field 'balance': Input should be a valid decimal (got 'abc')",
        ),
        (
            '{"_et": "Strict", "sid": "toolong"}',
            "entity Strict: field 'sid': String should have at most 5 characters (got 'toolong')",
        ),
        # JSON escapes of a lone surrogate: UTF-8 cannot store it, pydantic refuses it.
        (
            '{"_et": "Customer", "cid": "a\\ud800", "email": "e"}',
            "entity Customer: field 'cid': the text holds the lone surrogate U+D800 at index 1 "
            "(an escape without its pair), which UTF-8 cannot encode",
        ),
    ],
)
def test_each_bad_line_says_what_and_where(text: str, expected: str) -> None:
    assert errors(text) == [(1, expected)]


def test_a_model_that_forbids_extra_fields_still_takes_its_entity_attribute() -> None:
    assert isinstance(JsonLines([other]).parse('{"kind": "Strict", "sid": "a"}'), Strict)


def test_an_entity_option_that_names_nothing_is_refused_up_front() -> None:
    with pytest.raises(LineError, match=r"unknown entity 'Nope'"):
        JsonLines([app], entity="Nope")
    reader = JsonLines([app], entity="Customer")
    with pytest.raises(LineError, match=r"names entity 'Order', not 'Customer' \(--entity\)"):
        reader.parse('{"_et": "Order", "cid": "1", "email": "e"}')


def test_bytes_that_are_not_utf8() -> None:
    bad = b'{"_et": "Customer", "cid": "\xed\xa0\x80", "email": "e"}\n'  # a UTF-8-coded surrogate
    report = check(JsonLines([app]), [bad])
    assert [str(e) for e in report.errors] == ["not UTF-8: byte 0xED at column 29"]


# -- the validation pass ----------------------------------------------------------------------


def test_bom_crlf_and_blank_lines_are_accepted_and_line_numbers_stay_physical() -> None:
    raw = (
        b'\xef\xbb\xbf{"_et": "Customer", "cid": "1", "email": "a"}\r\n'
        b"\r\n"
        b"   \n"
        b'{"_et": "Customer", "cid": "2", "email": "b"}\r\n'
        b'{"_et": "Customer", "cid": 3, "email": "c"}'  # no final newline
    )
    report = check(JsonLines([app]), io.BytesIO(raw))
    assert report.lines == 5
    assert report.blank == [2, 3]
    assert [(e.line, str(e)) for e in report.errors] == [
        (5, "entity Customer: field 'cid': Input should be a valid string (got 3)")
    ]
    assert report.by_entity == {"Customer": 2}
    assert [report.line_of(i) for i in range(3)] == [1, 4, 5]


def test_an_empty_file_is_an_empty_load() -> None:
    report = check(JsonLines([app]), io.BytesIO(b""))
    assert (report.lines, report.items, report.error_count) == (0, 0, 0)


def test_duplicate_keys_and_unique_values_name_both_lines() -> None:
    found = errors(
        '{"_et": "Customer", "cid": "1", "email": "a"}',
        '{"_et": "Customer", "cid": "2", "email": "a"}',
        '{"_et": "Customer", "cid": "1", "email": "b"}',
        '{"_et": "Customer", "cid": "3", "email": "c"}',
    )
    assert found == [
        (
            2,
            "same unique email as line 1 (entity Customer: email='a'): two items cannot hold "
            "one unique value",
        ),
        (
            3,
            "same primary key as line 1 (entity Customer: PK='C#1', SK='C'): the later item "
            "would silently overwrite the earlier one; give each key once",
        ),
    ]


def test_the_same_key_text_on_two_tables_is_no_duplicate() -> None:
    found = errors('{"kind": "Strict", "sid": "a"}', '{"kind": "Strict", "sid": "b"}')
    assert found == []


def test_keys_over_dynamodbs_limits_are_found_before_writing() -> None:
    long = "x" * 2100
    found = errors(f'{{"_et": "Customer", "cid": "{long}", "email": "a"}}')
    assert len(found) == 1
    assert found[0][0] == 1
    assert "key is 2102 bytes; DynamoDB's limit for a partition key is 2048" in found[0][1]


def test_the_error_list_is_capped_but_every_error_counted() -> None:
    report = check(JsonLines([app]), lines(*["{bad"] * 30), max_errors=5)
    assert report.error_count == 30
    assert [e.line for e in report.errors] == [1, 2, 3, 4, 5]


@given(hs.lists(hs.booleans(), max_size=30))
def test_line_of_maps_positions_back_to_lines(blank_at: list[bool]) -> None:
    raw = [
        b"\n" if blank else b'{"_et": "Customer", "cid": "%d", "email": "%d"}\n' % (i, i)
        for i, blank in enumerate(blank_at)
    ]
    report = check(JsonLines([app]), raw)
    item_lines = [i + 1 for i, blank in enumerate(blank_at) if not blank]
    assert [report.line_of(p) for p in range(len(item_lines))] == item_lines


# -- the load ----------------------------------------------------------------------------------


class Fake:
    """Runs operations, answering each call with ``answer(call)`` (raise to refuse it)."""

    def __init__(self, answer: Callable[[Call], dict[str, Any]] | None = None) -> None:
        self.calls: list[Call] = []
        self.answer = answer or (lambda call: {})

    def execute(self, operation: Operation[Any]) -> Any:
        steps = operation.steps()
        try:
            step = next(steps)
            while True:
                if not isinstance(step, Call):  # a Sleep between retries: no time passes
                    step = steps.send(None)
                    continue
                self.calls.append(step)
                try:
                    reply = self.answer(step)
                except st.SingleTableError as exc:
                    step = steps.throw(exc)
                    continue
                step = steps.send(reply)
        except StopIteration as stop:
            return stop.value


def customers(n: int) -> list[Customer]:
    return [Customer(cid=str(i), email=f"{i}@x") for i in range(n)]


def plain(n: int) -> list[Order]:
    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return [Order(cid="c", placed=at, oid=UUID(int=i), total=Decimal(i)) for i in range(n)]


def test_batches_of_25_and_counts_per_entity() -> None:
    fake = Fake()
    result = load(fake, plain(60), out=io.StringIO())
    assert [len(c.params["RequestItems"]["load-app"]) for c in fake.calls] == [25, 25, 10]
    assert (result.written, result.by_entity, result.calls) == (60, {"Order": 60}, 3)


def test_unique_and_versioned_entities_go_one_by_one_with_their_guards() -> None:
    fake = Fake()
    objects: list[Any] = [*plain(3), *customers(2), Counter(name="a")]
    result = load(fake, objects, out=io.StringIO())
    actions = [c.action for c in fake.calls]
    # A unique put reads the values it replaces, then writes item and guard together.
    assert actions == ["get_item", "transact_write_items"] * 2 + ["put_item", "batch_write_item"]
    assert "ConditionExpression" in fake.calls[4].params  # the version check stays
    assert result.by_entity == {"Customer": 2, "Counter": 1, "Order": 3}


def test_a_versioned_item_keeps_its_version_where_none_or_the_same_is_stored() -> None:
    fake = Fake()
    load(fake, [Counter(name="a", version=3), Counter(name="b")], out=io.StringIO())
    exported, new = (c.params for c in fake.calls)
    # An exported item (version 3) goes in at 3, over nothing or over version 3 itself.
    assert exported["Item"]["version"] == {"N": "3"}
    assert exported["ConditionExpression"] == "attribute_not_exists (#n0) OR #n1 = :v0"
    assert exported["ExpressionAttributeValues"] == {":v0": {"N": "3"}}
    # One never stored (version 0) is a first put: version 1 where nothing is.
    assert new["Item"]["version"] == {"N": "1"}
    assert new["ConditionExpression"] == "attribute_not_exists (#n0)"


def test_a_first_import_checks_the_table_empty_then_batch_writes_versioned_items() -> None:
    fake = Fake()
    counters = [Counter(name=str(i), version=i % 2) for i in range(30)]
    result = load(fake, [*counters, *customers(1)], out=io.StringIO(), first_import=True)
    actions = [c.action for c in fake.calls]
    # One scan (one small page) before the table's first write; a unique entity is created
    # in one transaction with its guard, no read first.
    assert actions == ["scan", "batch_write_item", "transact_write_items", "batch_write_item"]
    assert fake.calls[0].params["Limit"] == 25
    versions = [
        r["PutRequest"]["Item"]["version"]["N"]
        for c in fake.calls
        if c.action == "batch_write_item"
        for r in c.params["RequestItems"]["load-app"]
    ]
    assert versions == ["1"] * 30  # version 0 becomes 1, as a first put writes
    put = fake.calls[2].params["TransactItems"][0]["Put"]
    assert put["ConditionExpression"] == "attribute_not_exists (#n0)"
    assert result.by_entity == {"Counter": 30, "Customer": 1}


def test_a_first_import_into_a_table_with_an_item_writes_nothing() -> None:
    stored = {"PK": {"S": "X#1"}, "SK": {"S": "X"}}
    fake = Fake(lambda call: {"Items": [stored], "Count": 1} if call.action == "scan" else {})
    with pytest.raises(st.LoadError) as caught:
        load(fake, plain(3), out=io.StringIO(), first_import=True)
    assert str(caught.value).startswith(
        "load stopped at items[0]: table load-app is not empty (it holds the item PK='X#1', SK='X')"
    )
    assert caught.value.written == 0
    assert [c.action for c in fake.calls] == ["scan"]


def test_a_first_import_looks_past_the_tables_own_bookkeeping() -> None:
    # A load run as a job keeps its job record and leases in the table it loads, and a
    # guard may outlive its item: neither makes the table hold data. The check reads on
    # while a page holds only such items, and finds the data item behind them.
    job = {"PK": {"S": "%JOB#j1"}, "SK": {"S": "UNIT#000000"}}
    guard = {"PK": {"S": "%UNIQUE#Customer#email#a"}, "SK": {"S": "%UNIQUE"}}
    stored = {"PK": {"S": "X#1"}, "SK": {"S": "X"}}
    pages = iter([[job, guard], [stored]])

    def scan(call: Any) -> dict[str, Any]:
        if call.action != "scan":
            return {}
        items = next(pages)
        more = {"LastEvaluatedKey": items[-1]} if items[0] is job else {}
        return {"Items": items, "Count": len(items), **more}

    fake = Fake(scan)
    with pytest.raises(st.LoadError) as caught:
        load(fake, plain(3), out=io.StringIO(), first_import=True)
    assert "it holds the item PK='X#1', SK='X'" in str(caught.value)
    assert [c.action for c in fake.calls] == ["scan", "scan"]


def test_a_first_import_into_a_table_holding_only_bookkeeping_writes() -> None:
    job = {"PK": {"S": "%JOB#j1"}, "SK": {"S": "JOB"}}
    fake = Fake(lambda call: {"Items": [job], "Count": 1} if call.action == "scan" else {})
    result = load(fake, plain(3), out=io.StringIO(), first_import=True)
    assert result.written == 3
    assert [c.action for c in fake.calls] == ["scan", "batch_write_item"]


def test_a_duplicate_stops_the_load_before_its_batch_is_sent() -> None:
    fake = Fake()
    objects = plain(30) + plain(1)  # items[30] repeats items[0]
    with pytest.raises(st.LoadError) as caught:
        load(fake, objects, out=io.StringIO())
    error = caught.value
    assert str(error).startswith("load stopped at items[30]: same primary key as items[0] (")
    assert error.written == 25
    assert [p for p, _ in error.unwritten] == list(range(25, 31))
    assert (error.resume_from, error.next_position) == (25, 31)
    assert len(fake.calls) == 1
    assert "every item before items[25] was written" in str(error)


def test_a_duplicate_within_one_batch_names_both_positions() -> None:
    with pytest.raises(st.LoadError, match=r"at items\[3\]: same primary key as items\[1\]"):
        load(Fake(), plain(3) + plain(2)[1:], out=io.StringIO())


def test_throttled_past_the_retries_says_what_was_written() -> None:
    def answer(call: Call) -> dict[str, Any]:
        if len(fake.calls) == 1:
            return {}
        return {"UnprocessedItems": call.params["RequestItems"]}

    fake = Fake(answer)
    with pytest.raises(st.LoadError) as caught:
        load(fake, plain(40), out=io.StringIO())
    error = caught.value
    assert isinstance(error.cause, st.BatchWriteIncompleteError)
    assert error.written == 25
    assert [p for p, _ in error.unwritten] == list(range(25, 40))
    assert error.resume_from == 25


def test_a_batch_stored_in_part_lists_only_the_rest_as_unwritten() -> None:
    def answer(call: Call) -> dict[str, Any]:
        writes = call.params["RequestItems"]["load-app"]
        return {"UnprocessedItems": {"load-app": writes[-5:]}}  # the last 5, every time

    with pytest.raises(st.LoadError) as caught:
        load(Fake(answer), plain(25), out=io.StringIO())
    error = caught.value
    assert error.written == 20
    assert [p for p, _ in error.unwritten] == [20, 21, 22, 23, 24]
    assert error.resume_from == 20
    assert str(error).startswith("load stopped at items[20]: batch write: 5 of 25 writes")


def test_a_refused_put_of_a_unique_entity_stops_with_the_batch_still_unsent() -> None:
    def answer(call: Call) -> dict[str, Any]:
        if call.action == "transact_write_items":
            raise st.ServiceError("AccessDeniedException", "no")
        return {}

    objects: list[Any] = [*plain(2), *customers(1)]
    with pytest.raises(st.LoadError) as caught:
        load(Fake(answer), objects, out=io.StringIO())
    error = caught.value
    assert error.written == 0
    assert [p for p, _ in error.unwritten] == [0, 1, 2]
    assert str(error).endswith("load again from the start")


def test_something_that_is_no_entity_is_refused_where_it_is() -> None:
    with pytest.raises(st.LoadError, match=r"at items\[1\]: .*not an entity|at items\[1\]"):
        load(Fake(), [plain(1)[0], "text"], out=io.StringIO())  # type: ignore[list-item]


def test_a_value_that_cannot_be_stored_is_found_in_its_batch_before_sending() -> None:
    fake = Fake()
    objects = plain(5)
    objects[3] = objects[3].model_copy(update={"note": "a\ud800"})
    with pytest.raises(st.LoadError) as caught:
        load(fake, objects, out=io.StringIO())
    assert isinstance(caught.value.cause, st.TextEncodeError)
    assert str(caught.value).startswith("load stopped at items[3]: ")
    assert [p for p, _ in caught.value.unwritten] == [0, 1, 2, 3, 4]
    assert fake.calls == []


def test_batch_size_is_checked() -> None:
    with pytest.raises(st.RequestLimitError, match="batch_size must be 1 to 25"):
        load(Fake(), [], batch_size=26)


def test_progress_says_written_of_an_exact_total() -> None:
    out = io.StringIO()
    load(Fake(), plain(50), out=out, progress_interval=0, progress_bar=False)
    first, *_, last = out.getvalue().splitlines()
    assert first.startswith("load: 25 of 50 written (50%), 0 failed; ")
    assert ", ETA " not in first  # not settled yet (see tests/tooling/jobs/test_progress.py)
    assert last.startswith("load: 50 of 50 written (100%), 0 failed; ")
    assert ", took " in last


def test_the_bar_on_a_terminal_counts_written_and_failed() -> None:
    pytest.importorskip("tqdm")
    out = io.StringIO()
    load(Fake(), plain(30), out=out, progress_bar=True, label="load f.jsonl")
    text = out.getvalue()
    assert "load f.jsonl" in text
    assert "30/30" in text
    assert "0 failed" in text


def test_a_migrations_progress_keeps_its_wording() -> None:
    progress = Progress("rewrite", 10, io.StringIO(), bar=False)
    progress.update(scanned=12, rewritten=1)
    assert progress.line().startswith("rewrite: 12 of ~10 scanned (100%), 1 rewritten, 0 skipped")


# -- loads as units ----------------------------------------------------------------------------


@given(
    hs.lists(hs.sampled_from([b"", b"{}", b'{"a": 1}', b"x" * 40, b"\r"]), max_size=30),
    hs.booleans(),
    hs.integers(1, 64),
)
def test_file_units_cover_the_file_in_whole_lines(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], last_newline: bool, chunk: int
) -> None:
    data = b"\n".join(lines) + (b"\n" if last_newline and lines else b"")
    path = tmp_path_factory.mktemp("units") / "in.jsonl"
    path.write_bytes(data)
    units = file_units(str(path), chunk_bytes=chunk)
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    assert [u.spec["start"] for u in units] == sorted({u.spec["start"] for u in units})
    covered = b"".join(data[u.spec["start"] : u.spec["end"]] for u in units)
    assert covered == data  # contiguous, nothing twice
    for unit in units:
        assert unit.spec["start"] in starts  # every unit starts at a line start
        assert unit.spec["line"] == starts.index(unit.spec["start"]) + 1
        assert (unit.index, unit.total, unit.kind) == (units.index(unit), len(units), "load")


def test_a_unit_taken_over_resumes_from_its_checkpoint_and_counts_each_line_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "orders.jsonl"
    path.write_text(
        "".join(
            f'{{"_et": "Order", "cid": "c", "placed": "2026-01-01T00:00:00Z", '
            f'"oid": "{UUID(int=i)}", "total": "{i}"}}\n'
            for i in range(250)
        )
    )
    (unit,) = file_units(str(path))
    fake = Fake()
    work = LoadWork(fake, str(path), JsonLines([app]), page_lines=100)
    first = TakenOver(lost_at=1)
    with pytest.raises(LeaseLost):
        work(unit, first)
    # The first holder saved one page (100 lines) and wrote a second before losing it.
    assert first.checkpoint is not None
    assert first.counts == {"written": 100}
    assert dict(first.checkpoint)["line"] == 101
    second = TakenOver(first.checkpoint)
    work(unit, second)
    assert second.done
    assert second.counts == {"written": 150}  # lines 101..250: the repeated page once
    written = [
        r["PutRequest"]["Item"]["SK"]["S"]
        for c in fake.calls
        for r in c.params["RequestItems"]["load-app"]
    ]
    assert len(written) == 350  # page 2 sent twice, harmless: the same items again
    assert len(set(written)) == 250
    # Every write was announced to the budget first, with the estimator's figure: 1 WCU
    # per order (each under 1 KB, no index), 25 per batch.
    assert second.spent == [(0.0, 25.0)] * 6


def test_a_unit_names_the_lines_it_wrote_when_it_stops(tmp_path: Path) -> None:
    path = tmp_path / "customers.jsonl"
    path.write_text(
        "\n".join(f'{{"_et": "Customer", "cid": "{i}", "email": "{i}@x"}}' for i in range(5))
        + "\n{oops\n"
    )
    (unit,) = file_units(str(path))
    work = LoadWork(Fake(), str(path), JsonLines([app]), parallel=True)
    with pytest.raises(st.LoadError) as caught:
        work(unit, LocalContext())
    assert str(caught.value).startswith("load stopped at line 6: invalid JSON")
    assert str(caught.value).endswith(
        "every item of this unit from line 1 to before line 6 was written (the units beside "
        "it stop at their next page)"
    )


def test_a_job_spec_names_its_model_and_file() -> None:
    here = "tests.tooling.bulk.test_load"
    assert model_tables(f"{here}:app") == [app]
    assert model_tables(f"{here}:Tag") == [other]
    assert model_tables(here) == [app, other]
    for ref, message in [
        (f"{here}:nothing", "AttributeError"),
        ("tests.no_such_module", "ModuleNotFoundError"),
        (f"{here}:UID", "is a str, not a Table, entity class or tables"),
    ]:
        with pytest.raises(st.SingleTableError, match=message):
            model_tables(ref)
    assert local_path("file:///shared/a%20b.jsonl") == "/shared/a b.jsonl"
    assert local_path("in.jsonl") == "in.jsonl"
    with pytest.raises(st.SingleTableError, match="a path or a file:// URL"):
        local_path("s3://bucket/in.jsonl")


class Reading(st.Entity, table=st.Table("load-floats"), pk="R#{rid}", sk="R"):
    rid: str
    value: float
    series: list[float] = Field(default_factory=list)
    note: dict[str, float | None] = Field(default_factory=dict)
    count: int = 0
    exact: Decimal = Decimal(0)


def test_an_integer_a_float_field_would_round_is_refused() -> None:
    # Issue 26: 9007199254740993 loaded as 9007199254740992.0 without a word.
    reader = JsonLines([Reading.plan().table], entity="Reading")
    with pytest.raises(LineError) as caught:
        reader.parse('{"rid": "1", "value": 9007199254740993}')
    assert str(caught.value) == (
        "entity Reading: field 'value': the JSON number 9007199254740993 is not exactly a "
        "float (the field's type): it would be stored as 9007199254740992.0; give a number "
        "the float holds, or make the field an int or a Decimal"
    )
    with pytest.raises(LineError, match=r"field 'series\.1': the JSON number -9007199254740993"):
        reader.parse('{"rid": "1", "value": 1, "series": [1, -9007199254740993]}')
    with pytest.raises(LineError, match=r"field 'note\.k': the JSON number 18014398509481985"):
        reader.parse('{"rid": "1", "value": 1, "note": {"k": 18014398509481985}}')
    # An int or a Decimal field holds every integer; a float holds 2**53 + 2.
    big = reader.parse(
        '{"rid": "1", "value": 9007199254740994, "count": 9007199254740993, '
        '"exact": 123456789012345678901234567890}'
    )
    assert big == Reading(
        rid="1",
        value=9007199254740994.0,
        count=9007199254740993,
        exact=Decimal(123456789012345678901234567890),
    )


@given(number=hs.integers(-(2**70), 2**70), where=hs.sampled_from(["value", "series", "note"]))
def test_an_integer_loads_into_a_float_field_exactly_or_not_at_all(number: int, where: str) -> None:
    reader = JsonLines([Reading.plan().table], entity="Reading")
    shown = {"value": f"{number}", "series": f"[{number}]", "note": f'{{"k": {number}}}'}[where]
    line = (
        f'{{"rid": "1", "{where}": {shown}}}'
        if where == "value"
        else (f'{{"rid": "1", "value": 0, "{where}": {shown}}}')
    )
    if float(number) != number:
        with pytest.raises(LineError, match=f"field '{where}"):
            reader.parse(line)
        return
    obj: Any = reader.parse(line)
    stored = {
        "value": lambda: obj.value,
        "series": lambda: obj.series[0],
        "note": lambda: obj.note["k"],
    }[where]()
    assert stored == number
