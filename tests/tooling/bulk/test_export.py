"""Exports on the embedded backend: the lines `load` reads back, and what is skipped and why.

Every test reads its export back with `JsonLines` (what ``singletable load`` parses with)
and compares it with what was written, so "round-trips" means what a load would do.
"""

from __future__ import annotations

import enum
import io
import json
from collections.abc import Iterator
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID

import pytest
from pydantic import BaseModel, ConfigDict, Field, field_serializer

import singletable as st
from singletable.tooling.bulk.export import ExportResult, export
from singletable.tooling.bulk.lines import JsonLines

app = st.Table("export-app")
other = st.Table("export-other", entity_attribute="kind")


class Shade(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str
    tags: set[str] = Field(default_factory=set)


class Order(st.Entity, table=app, pk="C#{cid}", sk="O#{oid}"):
    cid: str
    oid: int
    total: Decimal
    placed: datetime | None = None
    day: date | None = None
    ref: UUID | None = None
    raw: bytes | None = None
    lines: set[int] = Field(default_factory=set)
    shade: Shade | None = None
    ship_to: Address | None = None
    note: str = ""
    ratio: float | None = None


class Customer(st.Entity, table=app, pk="C#{cid}", sk="C", unique=("email",)):
    cid: str
    email: str


class Counter(st.Entity, table=app, pk="N#{name}", sk="N", version_field="version"):
    name: str
    version: int = 0


class Tag(st.Entity, table=other, pk="T#{tag}", sk="T", name="Order"):
    tag: str


class Blob(st.Entity, table=other, pk="B#{bid}", sk="B"):
    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")
    bid: str
    data: bytes


class Lossy(st.Entity, table=other, pk="L#{lid}", sk="L"):
    lid: str
    amount: Decimal

    @field_serializer("amount")
    def _rounded(self, amount: Decimal) -> str:
        return str(round(amount))


@pytest.fixture
def db() -> Iterator[st.Connection]:
    with st.embedded(app, other) as connection:
        yield connection


def run_export(db: st.Connection, target: Any, **options: Any) -> tuple[ExportResult, str]:
    out = io.StringIO()
    result = export(db, target, out, progress_out=io.StringIO(), **options)
    return result, out.getvalue()


def read_back(text: str, tables: tuple[st.Table, ...] = (app,)) -> list[BaseModel]:
    lines = text.encode("utf-8").splitlines(keepends=True)
    return list(JsonLines(list(tables)).objects(lines))


TRICKY_TEXT = 'a"b\\c\n\r\t\x00\u2028\u2029 é 🎉 {"_et": "x"}\n'

ORDERS = [
    Order(
        cid="c1",
        oid=1,
        total=Decimal("12345678901234567890.123456789"),
        placed=datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=timezone.utc),
        day=date(1, 1, 1),
        ref=UUID("12345678-1234-5678-1234-567812345678"),
        raw=b"utf-8 text \xc3\xa9",
        lines={1, -(10**30)},
        shade=Shade.BLUE,
        ship_to=Address(street=TRICKY_TEXT, tags={"a", "b\nc"}),
        note=TRICKY_TEXT,
        ratio=0.1,
    ),
    Order(cid="c1", oid=2, total=Decimal("-0.000")),
    Order(cid="c#2", oid=3, total=Decimal("1E+100"), ratio=-1.2345678901234567e125),
]


def test_every_field_type_round_trips_exactly(db: st.Connection) -> None:
    st.load(db, ORDERS, out=io.StringIO())
    result, text = run_export(db, Order)
    assert (result.written, result.skipped, result.by_entity) == (3, 0, {"Order": 3})
    lines = text.splitlines()
    # JSON escapes every line break inside a value: one object per line.
    assert len(lines) == 3 == text.count("\n")
    back = read_back(text)
    assert sorted(back, key=lambda o: o.oid) == ORDERS  # type: ignore[attr-defined]
    first = json.loads(next(line for line in lines if '"oid":1' in line))
    # Decimals as strings (every digit), the entity named.
    assert first["total"] == "12345678901234567890.123456789"
    assert first["note"] == TRICKY_TEXT
    # Line ends JSON leaves raw are escaped too: str.splitlines() keeps the line whole.
    assert "\u2028" not in text
    assert "\\u2028" in text
    assert first["_et"] == "Order"


def test_a_table_exports_every_entity_and_no_guard_item(db: st.Connection) -> None:
    st.load(
        db, [*ORDERS[1:], Customer(cid="c1", email="a@x"), Counter(name="n")], out=io.StringIO()
    )
    result, text = run_export(db, app)
    # Customer's unique email is stored as a guard item too: read, not exported, not skipped.
    assert result.scanned == 5
    assert (result.written, result.skipped) == (4, 0)
    assert result.by_entity == {"Order": 2, "Customer": 1, "Counter": 1}
    back = read_back(text)
    assert Customer(cid="c1", email="a@x") in back
    # The stored version (1 after the first put) is exported as it is.
    assert Counter(name="n", version=1) in back


def test_an_entity_export_leaves_other_entities_alone(db: st.Connection) -> None:
    st.load(db, [ORDERS[1], Customer(cid="c1", email="a@x")], out=io.StringIO())
    result, text = run_export(db, Customer)
    assert (result.scanned, result.written, result.skipped) == (3, 1, 0)
    assert read_back(text) == [Customer(cid="c1", email="a@x")]


def test_an_ambiguous_name_is_qualified_as_load_resolves_it(db: st.Connection) -> None:
    st.load(db, [ORDERS[1], Tag(tag="t")], out=io.StringIO())
    _, text = run_export(db, [app, other])
    names = sorted(
        json.loads(line).get("_et") or json.loads(line)["kind"] for line in text.splitlines()
    )
    # Two entities are stored as "Order": each line names its table.
    assert names == ["export-app/Order", "export-other/Order"]
    both = read_back(text, (app, other))
    assert sorted(map(repr, both)) == sorted(map(repr, [ORDERS[1], Tag(tag="t")]))
    # Exported alone, a table's entity needs no qualification.
    _, alone = run_export(db, Tag)
    assert json.loads(alone) == {"kind": "Order", "tag": "t"}


def test_unknown_and_stranded_items_are_counted_and_kept_as_stored(db: st.Connection) -> None:
    st.load(db, [ORDERS[1]], out=io.StringIO())
    stranded = {"PK": {"S": "C#c9"}, "SK": {"S": "O#1"}, "_et": {"S": "Order"}, "_ev": {"N": "1"}}
    db.call("put_item", {"TableName": app.name, "Item": {**stranded, "cid": {"S": "c9"}}})
    foreign = {
        "PK": {"S": "X"},
        "SK": {"S": "Y"},
        "blob": {"B": b"\xff\x00"},
        "text": {"S": "a\x85b\u2028c\nd"},  # line ends to str.splitlines()
    }
    db.call("put_item", {"TableName": app.name, "Item": foreign})
    later = {"PK": {"S": "Z"}, "SK": {"S": "Z"}, "_et": {"S": "Order"}, "_ev": {"N": "2"}}
    db.call("put_item", {"TableName": app.name, "Item": later})
    rejects = io.StringIO()
    result, text = run_export(db, app, rejects=rejects)
    assert read_back(text) == [ORDERS[1]]
    assert result.scanned == 4
    assert result.skipped_by_reason == {"does not decode": 1, "unknown entity": 2}
    assert len(result.skipped_examples) == 3
    assert any("C#c9" in e and "total" in e for e in result.skipped_examples)
    records = [json.loads(line) for line in rejects.getvalue().splitlines()]
    kept = {r["item"]["PK"]["S"]: r for r in records}
    assert set(kept) == {"C#c9", "X", "Z"}
    assert kept["X"]["item"]["blob"] == {"B": "/wA="}  # base64, as DynamoDB exports bytes
    assert kept["X"]["item"]["text"] == {"S": "a\x85b\u2028c\nd"}
    assert "version 2" in kept["Z"]["reason"]
    # An entity export skips the same entity's items at another version, counted.
    result, _ = run_export(db, Order)
    assert result.skipped_by_reason == {"other version": 1, "does not decode": 1}


def test_bytes_that_json_cannot_hold_are_skipped_unless_the_model_says_base64(
    db: st.Connection,
) -> None:
    odd = Order(cid="c1", oid=7, total=Decimal(1), raw=b"\xff\xfe")
    blobs = [Blob(bid="1", data=b"\xff\x00\n"), Blob(bid="2", data=b"")]
    st.load(db, [ORDERS[1], odd, *blobs], out=io.StringIO())
    result, text = run_export(db, [Order, Blob])
    assert result.skipped_by_reason == {"not JSON": 1}
    assert "invalid utf-8" in result.skipped_examples[0]
    both = read_back(text, (app, other))
    assert sorted(map(repr, both)) == sorted(map(repr, [ORDERS[1], *blobs]))


def test_a_line_that_would_load_back_different_is_not_written(db: st.Connection) -> None:
    st.load(
        db,
        [Lossy(lid="1", amount=Decimal("2.5")), Lossy(lid="2", amount=Decimal(3))],
        out=io.StringIO(),
    )
    result, text = run_export(db, Lossy)
    assert result.skipped_by_reason == {"would not load back": 1}
    assert "field(s) amount" in result.skipped_examples[0]
    assert read_back(text, (other,)) == [Lossy(lid="2", amount=Decimal(3))]


def test_an_empty_table_exports_nothing(db: st.Connection) -> None:
    progress = io.StringIO()
    result = export(db, app, io.StringIO(), progress_out=progress)
    assert (result.scanned, result.written, result.skipped) == (0, 0, 0)
    assert progress.getvalue().startswith("export: 0 scanned, 0 written, 0 skipped;")


def test_parallel_segments_export_the_same_lines(db: st.Connection) -> None:
    many = [Order(cid=f"c{i % 5}", oid=i, total=Decimal(i)) for i in range(60)]
    st.load(db, many, out=io.StringIO())
    one, text_one = run_export(db, Order)
    four, text_four = run_export(db, Order, segments=4)
    assert one.written == four.written == 60
    assert sorted(text_one.splitlines()) == sorted(text_four.splitlines())


def test_progress_shows_the_approximate_total(db: st.Connection) -> None:
    st.load(db, ORDERS, out=io.StringIO())
    progress = io.StringIO()
    export(db, Order, io.StringIO(), progress_out=progress, progress_interval=0)
    last = progress.getvalue().splitlines()[-1]
    assert last.startswith("export: 3 of ~3 scanned (100%), 3 written, 0 skipped;")


def test_a_missing_table_fails_before_anything_is_written() -> None:
    with st.embedded(other) as db:
        out = io.StringIO()
        with pytest.raises(st.ServiceError, match=r"ResourceNotFound|not found|non-existent"):
            export(db, app, out, progress_out=io.StringIO())
        assert out.getvalue() == ""


def test_segments_out_of_range_are_refused(db: st.Connection) -> None:
    with pytest.raises(st.RequestLimitError, match="segments must be 1 to 1,000,000"):
        export(db, app, io.StringIO(), segments=0)
    with pytest.raises(st.EntityTypeError, match="entity classes and tables"):
        export(db, [object()], io.StringIO())  # type: ignore[list-item]
