"""Batch writes and gets over DynamoDB's per-call limits, and transactions, on the backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

import singletable as st
from tests.integration.models import Models

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any


def _things(m: Models, n: int, box: str = "b") -> list[Any]:
    return [m.Thing(box=box, thing_id=f"t{i:03d}", name=f"n{i}", size=i) for i in range(n)]


# --------------------------------------------------------------------------- batches


def test_batch_write_over_25_items_is_chunked(m: Models) -> None:
    things = _things(m, 60)
    op = st.BatchWrite(puts=things)
    assert [len(c["RequestItems"][m.table.name]) for c in op.chunks()] == [25, 25, 10]
    result = op.run(m.db)
    assert result == st.BatchWriteResult(put=60, deleted=0, calls=3, retries=0)
    assert m.Thing.query(box="b").all(m.db) == things


def test_batch_write_deletes_and_puts_together(m: Models) -> None:
    things = _things(m, 30)
    st.BatchWrite(puts=things).run(m.db)
    plan = m.Thing.plan()
    deletes = [(plan, {"box": "b", "thing_id": t.thing_id}) for t in things[:27]]
    extra = _things(m, 3, box="c")
    result = st.BatchWrite(puts=extra, deletes=deletes).run(m.db)
    assert result == st.BatchWriteResult(put=3, deleted=27, calls=2, retries=0)
    assert m.Thing.query(box="b").all(m.db) == things[27:]
    assert m.Thing.query(box="c").all(m.db) == extra


def test_batch_write_refuses_the_same_key_twice(m: Models) -> None:
    thing = _things(m, 1)[0]
    with pytest.raises(
        st.RequestLimitError,
        match=r"^entity Thing: the same key \(PK='BOX#b', SK='THING#t000'\) appears twice in one "
        r"batch write",
    ):
        st.BatchWrite(puts=[thing, thing.model_copy(update={"name": "other"})])


def test_batch_get_over_100_keys_returns_found_items_in_key_order(m: Models) -> None:
    things = _things(m, 120)
    st.BatchWrite(puts=things).run(m.db)
    plan = m.Thing.plan()
    wanted = [f"t{i:03d}" for i in range(119, -1, -1)] + [f"x{i:03d}" for i in range(30)]
    op = st.BatchGet([(plan, {"box": "b", "thing_id": t}) for t in wanted])
    assert [len(c["RequestItems"][m.table.name]["Keys"]) for c in op.chunks()] == [100, 50]
    got = op.run(m.db)
    assert got == list(reversed(things))  # missing keys skipped, key order kept


def test_batch_get_mixes_entities_and_reads_consistently(m: Models) -> None:
    thing = _things(m, 1)[0]
    doc = m.Doc.put(m.Doc(doc_id="d1", owner="ann")).run(m.db)
    st.BatchWrite(puts=[thing]).run(m.db)
    op = st.BatchGet(
        [(m.Doc.plan(), {"doc_id": "d1"}), (m.Thing.plan(), {"box": "b", "thing_id": "t000"})],
        consistent=True,
    )
    assert op.params()["RequestItems"][m.table.name]["ConsistentRead"] is True
    assert op.run(m.db) == [doc, thing]


# --------------------------------------------------------------------------- transactions


def test_transaction_success(m: Models) -> None:
    a, b, c = _things(m, 3)
    st.BatchWrite(puts=[b, c]).run(m.db)
    Thing = m.Thing
    tx = (
        st.TransactWrite()
        .put(Thing.create(a))
        .update(Thing.update(box="b", thing_id=b.thing_id).add(count=5))
        .delete(Thing.delete(box="b", thing_id=c.thing_id))
        .check(m.Doc.plan(), {"doc_id": "nope"}, m.Doc.f.owner.not_exists())
    )
    assert tx.run(m.db) is None
    assert Thing.query(box="b").all(m.db) == [a, b.model_copy(update={"count": 5})]
    assert st.TransactGet().get(Thing.get(box="b", thing_id=a.thing_id)).get(
        Thing.get(box="b", thing_id=c.thing_id)
    ).run(m.db) == [a, None]


def test_transaction_cancellation_names_each_reason(m: Models) -> None:
    a, b = _things(m, 2)
    m.Thing.put(a).run(m.db)
    Thing = m.Thing
    tx = (
        st.TransactWrite()
        .put(Thing.create(b))
        .put(Thing.create(a.model_copy(update={"name": "dup"})))
    )
    with pytest.raises(
        st.TransactionCanceledError,
        match=r"^transaction cancelled: #1 entity Thing: ConditionalCheckFailed$",
    ) as exc:
        tx.run(m.db)
    reasons = exc.value.reasons
    assert [(r["index"], r["entity"], r["code"]) for r in reasons] == [
        (0, "entity Thing", "None"),
        (1, "entity Thing", "ConditionalCheckFailed"),
    ]
    # Nothing was written: b is still missing, a unchanged.
    assert Thing.query(box="b").all(m.db) == [a]


def test_transaction_refuses_the_same_item_twice(m: Models) -> None:
    a = _things(m, 1)[0]
    tx = st.TransactWrite().put(m.Thing.put(a))
    with pytest.raises(
        st.RequestLimitError,
        match=r"^entity Thing: the item with key \(PK='BOX#b', SK='THING#t000'\) appears twice "
        r"in one transaction; DynamoDB allows each item once$",
    ):
        tx = tx.update(m.Thing.update(box="b", thing_id=a.thing_id).set(name="x"))


def test_transaction_refuses_more_than_100_items(m: Models) -> None:
    tx = st.TransactWrite()
    for thing in _things(m, 100):
        tx = tx.put(m.Thing.put(thing))
    extra = m.Thing(box="b", thing_id="t100", name="x")
    with pytest.raises(
        st.RequestLimitError,
        match=r"^entity Thing: a transaction holds at most 100 items and this one already "
        r"holds 100 \(100 of entity Thing\); split the work$",
    ):
        tx = tx.put(m.Thing.put(extra))
    get = st.TransactGet()
    for i in range(100):
        get = get.get(m.Thing.get(box="b", thing_id=f"t{i:03d}"))
    with pytest.raises(
        st.RequestLimitError,
        match=r"^entity Thing: a transaction holds at most 100 items and this one already "
        r"holds 100 \(100 of entity Thing\); split the work$",
    ):
        get = get.get(m.Thing.get(box="b", thing_id="t100"))
    # The full 100-item transaction itself goes through.
    tx.run(m.db)
    assert len(m.Thing.query(box="b").all(m.db)) == 100


def test_batch_write_refuses_versioned_entities_before_sending(m: Models) -> None:
    with pytest.raises(st.RequestLimitError, match=r"Doc uses optimistic locking.*version"):
        st.BatchWrite(puts=[m.Doc(doc_id="d9", owner="ann")])


def test_transact_get_refuses_the_same_item_twice(m: Models) -> None:
    get = m.Thing.get(box="b", thing_id="t000")
    with pytest.raises(
        st.RequestLimitError,
        match=r"Thing: the item with key \(PK='BOX#b', SK='THING#t000'\) appears twice",
    ):
        st.TransactGet().get(get).get(m.Thing.get(box="b", thing_id="t000"))
