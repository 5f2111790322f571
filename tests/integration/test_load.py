"""Bulk loads through the public API on a real backend: what a load writes is read back.

A property over generated entity classes (small: every example writes to the backend), and
the guarantees one at a time: unique guards kept, a version check kept, a throttle that
outlasts the retries reported with exactly what is stored.
"""

from __future__ import annotations

import io
import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.tooling.bulk.lines import JsonLines
from singletable.tooling.bulk.load_units import LOAD_KIND
from singletable.tooling.jobs.local import run_units
from singletable.tooling.jobs.units import LeaseLost
from tests.cli.running import model_module
from tests.integration._executors import connect
from tests.integration.models import bulk_models
from tests.strategies import (
    build_simple_entity,
    simple_entity_specs,
    simple_entity_table,
    simple_entity_values,
)
from tests.unit_contexts import TakenOver

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

_partitions = itertools.count()


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(hs.data())
def test_a_load_writes_exactly_the_given_items(
    dynamodb_client: DynamoDBClient, table_name: str, data: hs.DataObject
) -> None:
    name = f"{table_name}-{next(_partitions)}"
    table = simple_entity_table(name)
    specs = [data.draw(simple_entity_specs()) for _ in range(2)]
    models = [build_simple_entity(spec, table) for spec in specs]
    db = connect(dynamodb_client)
    db.create_table(table)
    try:
        given_items: dict[str, Any] = {}  # by stored key: a load refuses a key twice
        for spec, model in zip(specs, models, strict=True):
            for values in data.draw(hs.lists(simple_entity_values(spec), max_size=30)):
                obj = model(**values)
                given_items.setdefault(stored_key(obj), obj)
        objects = data.draw(hs.permutations(list(given_items.values())))
        result = st.load(db, objects, out=io.StringIO())
        assert result.written == len(objects)
        stored = st.BatchGet((type(o).plan(), key_values(o)) for o in objects).run(db)
        assert {stored_key(o): o for o in stored} == given_items
        assert len(db.call("scan", {"TableName": name})["Items"]) == len(objects)
    finally:
        db.delete_table(table)


def stored_key(obj: Any) -> str:
    return repr(sorted(obj.key().items()))


def key_values(obj: Any) -> dict[str, Any]:
    return {f: getattr(obj, f) for f in type(obj).plan().primary.fields}


def test_unique_and_versioned_entities_keep_their_guarantees(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    table, Thing, Member, Counter = bulk_models(table_name)
    db = connect(dynamodb_client)
    db.create_table(table)
    objects = [
        *(Thing(box="b", n=i) for i in range(30)),
        Member(mid="1", email="a@x"),
        Member(mid="2", email="b@x"),
        Counter(name="c"),
    ]
    result = st.load(db, objects, out=io.StringIO())
    assert result.by_entity == {"Thing": 30, "Member": 2, "Counter": 1}
    assert len(Thing.query(box="b").all(db)) == 30
    # The guards were written: the unique value is taken.
    with pytest.raises(st.UniqueConstraintError):
        Member.create(Member(mid="3", email="a@x")).run(db)
    assert Counter.get(name="c").run(db).version == 1
    # A second load of a member with a unique value another member holds stops there.
    with pytest.raises(st.LoadError) as caught:
        st.load(db, [Thing(box="c", n=1), Member(mid="9", email="b@x")], out=io.StringIO())
    error = caught.value
    assert isinstance(error.cause, st.UniqueConstraintError)
    assert error.written == 0
    assert [p for p, _ in error.unwritten] == [0, 1]
    assert Thing.query(box="c").all(db) == []
    # An object whose version is behind the stored one is a conflict, not an overwrite.
    with pytest.raises(st.LoadError) as stale:
        st.load(db, [Counter(name="c", hits=5)], out=io.StringIO())
    assert isinstance(stale.value.cause, st.ConditionFailedError)
    assert Counter.get(name="c").run(db).hits == 0


class _ThrottledAfter:
    """Delegates to a real client; BatchWriteItem calls after the first ``ok`` are throttled."""

    def __init__(self, client: DynamoDBClient, ok: int) -> None:
        self._client = client
        self._ok = ok

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def batch_write_item(self, **params: Any) -> Any:
        if self._ok <= 0:
            raise ClientError(
                {"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}},
                "BatchWriteItem",
            )
        self._ok -= 1
        return self._client.batch_write_item(**params)


def test_a_load_stopped_by_a_throttle_says_exactly_what_is_stored(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    table, Thing, _, _ = bulk_models(table_name)
    st.Connection(dynamodb_client).create_table(table)
    things = [Thing(box="b", n=i) for i in range(80)]
    throttled = st.Connection(_ThrottledAfter(dynamodb_client, ok=2))  # type: ignore[arg-type]
    with pytest.raises(st.LoadError) as caught:
        st.load(throttled, iter(things), out=io.StringIO())
    error = caught.value
    assert isinstance(error.cause, st.BatchWriteIncompleteError)
    assert error.cause.code == "ThrottlingException"
    assert error.written == 50
    assert error.resume_from == 50
    assert [obj for _, obj in error.unwritten] == things[50:75]
    assert error.next_position == 75  # items 75.. were never taken from the iterator
    db = st.Connection(dynamodb_client)
    assert Thing.query(box="b").all(db) == things[:50]
    # Loading from resume_from finishes the load.
    st.load(db, things[error.resume_from :], out=io.StringIO())
    assert Thing.query(box="b").all(db) == things


def test_an_export_of_versioned_items_loads_into_an_empty_table_at_their_versions(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    # Issue 21: every item failed ("this write expected version 1, but no item is stored").
    table, _, _, Counter = bulk_models(table_name)
    db = connect(dynamodb_client)
    db.create_table(table)
    try:
        for name, puts in (("a", 1), ("b", 3)):
            counter = Counter(name=name)
            for hits in range(puts):
                counter = st.Put(counter.model_copy(update={"hits": hits})).run(db)
        out = io.StringIO()
        st.export(db, Counter, out, progress_out=io.StringIO())
        stored = sorted(Counter.scan().all(db), key=lambda c: c.name)
        assert [c.version for c in stored] == [1, 3]
        db.delete_table(table)
        db.create_table(table)
        # Sorted: "a" first, whatever the backend's scan order.
        lines = sorted(out.getvalue().encode("utf-8").splitlines())
        result = st.load(db, JsonLines([table]).objects(lines), out=io.StringIO())
        assert result.written == 2
        assert sorted(Counter.scan().all(db), key=lambda c: c.name) == stored
        # Loading the same file again changes nothing (same versions: a resumed load).
        st.load(db, JsonLines([table]).objects(lines), out=io.StringIO())
        assert sorted(Counter.scan().all(db), key=lambda c: c.name) == stored
        # The loaded items are ordinary versioned items: the next put checks version 3.
        assert st.Put(stored[1]).run(db).version == 4
        # A load over a stored item at another version refuses it, naming both versions.
        with pytest.raises(st.LoadError) as caught:
            st.load(db, JsonLines([table]).objects(lines), out=io.StringIO())
        error = caught.value
        assert isinstance(error.cause, st.VersionConflictError)
        assert "expected no stored item or one at version 3" in str(error)
        assert "the stored item is at version 4" in str(error)
        assert error.written == 1
        assert [p for p, _ in error.unwritten] == [1]
        assert Counter.get(name="b").run(db).version == 4
    finally:
        db.delete_table(table)


def test_a_first_import_batch_writes_versioned_items_into_an_empty_table_only(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    table, Thing, Member, Counter = bulk_models(table_name)
    db = connect(dynamodb_client)
    db.create_table(table)
    try:
        counters = [Counter(name=str(i), hits=i, version=i % 3 + 1) for i in range(30)]
        members = [Member(mid="1", email="a@x"), Member(mid="2", email="b@x")]
        result = st.load(db, [*counters, *members], out=io.StringIO(), first_import=True)
        # 30 counters in 2 batch calls; each member created with its guard, one call each.
        assert (result.written, result.calls) == (32, 4)
        assert sorted(Counter.scan().all(db), key=lambda c: int(c.name)) == counters
        with pytest.raises(st.UniqueConstraintError):
            Member.create(Member(mid="3", email="a@x")).run(db)
        # The table is not empty any more: a first import is refused before any write.
        with pytest.raises(st.LoadError) as caught:
            st.load(db, [Thing(box="x", n=1)], out=io.StringIO(), first_import=True)
        assert "is not empty" in str(caught.value)
        assert caught.value.written == 0
        assert Thing.query(box="x").all(db) == []
    finally:
        db.delete_table(table)


BULK_MODEL = """
import singletable as st

table = st.Table("{table}")

class Thing(st.Entity, table=table, pk="B#{{box}}", sk="T#{{n}}"):
    box: str
    n: int
    label: str = ""

class Member(st.Entity, table=table, pk="M#{{mid}}", sk="M", unique=("email",)):
    mid: str
    email: str

class Counter(st.Entity, table=table, pk="N#{{name}}", sk="N", version_field="version"):
    name: str
    hits: int = 0
    version: int = 0
"""


def test_a_load_job_in_parallel_units_with_a_unit_taken_over_writes_each_line_once(
    dynamodb_client: DynamoDBClient, table_name: str, tmp_path: Path
) -> None:
    with model_module(tmp_path, "load_job", BULK_MODEL.format(table=table_name)) as module:
        lines = [
            *(f'{{"_et": "Thing", "box": "b{i % 3}", "n": {i}}}' for i in range(60)),
            *(f'{{"_et": "Counter", "name": "c{i}", "version": {1 + i % 5}}}' for i in range(30)),
            *(f'{{"_et": "Member", "mid": "{i}", "email": "{i}@x"}}' for i in range(10)),
        ]
        path = tmp_path / "in.jsonl"
        path.write_text("".join(f"{line}\n" for line in lines[::-1]))  # mixed in the chunks
        spec = {"model": module.__name__, "file": str(path), "chunk_bytes": 900, "page_lines": 7}
        units = LOAD_KIND.units(spec)
        assert len(units) > 3
        db = connect(dynamodb_client)
        db.create_table(module.table)
        try:
            work = LOAD_KIND.work(spec, db)
            # The holder of unit 1 writes two pages, saves one, then loses the unit.
            lost = TakenOver(lost_at=1)
            with pytest.raises(LeaseLost):
                work(units[1], lost)
            contexts = run_units(units, work, workers=3, checkpoints={1: lost.checkpoint})
            assert all(ctx.done for ctx in contexts)
            counted = lost.counts["written"] + sum(ctx.counts["written"] for ctx in contexts)
            assert counted == len(lines)  # every line counted once, the repeated page too
            back: list[Any] = list(JsonLines([module.table]).objects(t.encode() for t in lines))
            stored = st.BatchGet((type(o).plan(), key_values(o)) for o in back).run(db)
            assert sorted(stored, key=repr) == sorted(back, key=repr)
            assert len(db.call("scan", {"TableName": module.table.name})["Items"]) == 110
            with pytest.raises(st.UniqueConstraintError):  # the guards are there
                module.Member.create(module.Member(mid="x", email="3@x")).run(db)
        finally:
            db.delete_table(module.table)
