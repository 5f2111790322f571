"""The capacity estimator: DOMAIN.md's figures, write and index rules, and its errors.

The same rules are checked against DynamoDB Local's reported ConsumedCapacity by
``tests/integration/test_capacity_oracle.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from singletable.attributes.size import item_size
from singletable.entity import Entity
from singletable.errors import EstimateError
from singletable.model.plan import IndexKeys
from singletable.model.table import GSI, LSI, Projection, Table
from singletable.operations.batch import BatchGet, BatchWrite
from singletable.operations.transactions import TransactGet, TransactWrite
from singletable.tooling.cost.capacity import estimate_capacity
from singletable.tooling.cost.report import CapacityEstimate
from singletable.tooling.cost.sizes import index_entry, read_units, write_units
from singletable.types import Item

app = Table(
    "cap-app",
    indexes=[
        GSI("ByOwner", pk="GSI1PK", sk="GSI1SK"),
        GSI("ByTag", pk="GSI2PK", projection=Projection.keys_only()),
        LSI("ByRank", sk="LSI1SK", projection=Projection.include("note")),
    ],
)


class Doc(
    Entity,
    table=app,
    pk="DOC#{doc_id}",
    sk="V#{rev}",
    indexes={
        "ByOwner": IndexKeys(pk="OWNER#{owner}", sk="{rev}"),
        "ByTag": IndexKeys(pk="TAG#{tag}"),
        "ByRank": IndexKeys(sk="{rank}"),
    },
):
    doc_id: str
    rev: int
    owner: str | None = None
    tag: str | None = None
    rank: int | None = None
    note: str = ""
    body: str = ""


def doc(size: int, *, doc_id: str = "d", rev: int = 1, **fields: Any) -> Doc:
    """A Doc whose stored item is exactly ``size`` bytes (padded through ``body``)."""
    base = Doc(doc_id=doc_id, rev=rev, **fields)
    pad = size - item_size(base.to_item())  # the empty body is stored (4 bytes of name)
    assert pad >= 0, f"{size} bytes is too small for {fields}"
    result = base.model_copy(update={"body": "x" * pad})
    assert item_size(result.to_item()) == size
    return result


def test_unit_rules() -> None:
    assert read_units(0) == 0.0
    assert read_units(1) == 0.5
    assert read_units(4096) == 0.5
    assert read_units(4097) == 1.0
    assert read_units(4097, consistent=True) == 2.0
    assert read_units(4097, transactional=True) == 4.0
    assert write_units(1024) == 1.0
    assert write_units(1025) == 2.0
    assert write_units(1025, transactional=True) == 4.0


def test_domain_ten_2kb_items_one_query_vs_ten_gets() -> None:
    items = [doc(2048, rev=i).to_item() for i in range(10)]
    query = Doc.query(doc_id="d")
    assert estimate_capacity(query, read=items).rcu == 2.5
    assert estimate_capacity(query.consistent(), read=items).rcu == 5.0
    gets = [estimate_capacity(Doc.get(doc_id="d", rev=i), read=items[i]) for i in range(10)]
    assert sum(g.rcu for g in gets) == 5.0
    strong = [
        estimate_capacity(Doc.get(doc_id="d", rev=i, consistent=True), read=items[i])
        for i in range(10)
    ]
    assert sum(g.rcu for g in strong) == 10.0


def test_domain_put_1024_and_1025_bytes() -> None:
    assert estimate_capacity(Doc.put(doc(1024))).wcu == 1.0
    assert estimate_capacity(Doc.put(doc(1025))).wcu == 2.0
    assert estimate_capacity(Doc.put(doc(1025))).rcu == 0.0


def test_get_of_a_missing_item_costs_one_block() -> None:
    assert estimate_capacity(Doc.get(doc_id="d", rev=1), read=None).rcu == 0.5
    assert estimate_capacity(Doc.get(doc_id="d", rev=1, consistent=True)).rcu == 1.0


def test_projection_does_not_reduce_a_get() -> None:
    stored = doc(5000).to_item()
    get = Doc.get(doc_id="d", rev=1).project("rev")
    assert estimate_capacity(get, read=stored).rcu == 1.0


def test_put_over_an_existing_item_bills_the_larger() -> None:
    big = doc(3000).to_item()
    small = doc(100)
    assert estimate_capacity(Doc.put(small), existing=big).wcu == 3.0
    assert estimate_capacity(Doc.put(doc(3000)), existing=small.to_item()).wcu == 3.0


def test_delete_bills_the_deleted_item_or_one_unit() -> None:
    delete = Doc.delete(doc_id="d", rev=1)
    assert estimate_capacity(delete, existing=doc(5000).to_item()).wcu == 5.0
    assert estimate_capacity(delete, existing=None).wcu == 1.0


def test_update_bills_the_larger_of_before_and_after() -> None:
    before = doc(500).to_item()
    after = doc(3000).to_item()
    update = Doc.update(doc_id="d", rev=1).set(body="y")
    assert estimate_capacity(update, existing=before, after=after).wcu == 3.0
    assert estimate_capacity(update, existing=after, after=before).wcu == 3.0
    assert estimate_capacity(update, existing=None, after=before).wcu == 1.0


def test_update_without_after_is_refused() -> None:
    with pytest.raises(EstimateError, match=r"entity Doc: estimating an update needs after="):
        estimate_capacity(Doc.update(doc_id="d", rev=1).set(body="y"), existing=None)


def test_index_entry_projections() -> None:
    item = doc(2000, owner="ann", tag="t", rank=3, note="n").to_item()
    assert index_entry(app, "ByOwner", item) == item  # ALL
    assert set(index_entry(app, "ByTag", item) or {}) == {"PK", "SK", "GSI2PK"}
    # INCLUDE carries the entity and version attributes too, as the table is created.
    assert set(index_entry(app, "ByRank", item) or {}) == {
        "PK",
        "SK",
        "LSI1SK",
        "note",
        app.entity_attribute,
        app.version_attribute,
    }
    assert index_entry(app, "ByOwner", doc(100).to_item()) is None  # sparse


def test_index_writes_put_move_update_leave() -> None:
    first = doc(1500, owner="ann")
    created = estimate_capacity(Doc.put(first))
    assert created.table_units == 2.0
    assert created.index_units == {"ByOwner": 2.0}

    same = estimate_capacity(Doc.put(first), existing=first.to_item())
    assert same.index_units == {}  # an unchanged index entry costs nothing
    assert same.table_units == 2.0  # ...but the table write is still billed

    moved = doc(1500, owner="bob")
    move = estimate_capacity(Doc.put(moved), existing=first.to_item())
    assert move.index_units == {"ByOwner": 4.0}
    assert [line.what.split(" (")[0] for line in move.lines if line.index] == [
        "index ByOwner: delete",
        "index ByOwner: put",
    ]

    grown = doc(2500, owner="bob")
    assert estimate_capacity(Doc.put(grown), existing=moved.to_item()).index_units == {
        "ByOwner": 3.0
    }
    left = estimate_capacity(Doc.put(doc(100)), existing=grown.to_item())
    assert left.index_units == {"ByOwner": 3.0}  # delete of the 2,500-byte entry


def test_keys_only_index_ignores_non_key_changes() -> None:
    before = doc(3000, tag="t").to_item()
    after = doc(3100, tag="t").to_item()
    estimate = estimate_capacity(Doc.put(doc(3100, tag="t")), existing=before)
    assert estimate.index_units == {}
    assert estimate.table_units == 4.0
    assert item_size(after) == 3100


def test_query_pages_follow_the_limit_and_round_once_per_page() -> None:
    items = [doc(1000, rev=i).to_item() for i in range(10)]
    estimate = estimate_capacity(Doc.query(doc_id="d").page_size(4), read=items)
    # pages of 4000, 4000 and 2000 bytes: one 4 KB block each
    assert [line.units for line in estimate.lines] == [0.5, 0.5, 0.5]
    assert estimate_capacity(Doc.query(doc_id="d"), read=[]).rcu == 0.0


def test_index_query_is_billed_on_index_entries() -> None:
    items = [doc(4000, rev=i, tag="t").to_item() for i in range(3)]
    # A KEYS_ONLY index returns key fields only, so the query projects them.
    by_tag = Doc.query(index="ByTag", tag="t").project("doc_id", "rev", "tag")
    estimate = estimate_capacity(by_tag, read=items)
    assert estimate.index_units["ByTag"] == 0.5  # keys only: a few dozen bytes each
    with pytest.raises(EstimateError, match=r"index 'ByTag' lacks that index's key"):
        estimate_capacity(by_tag, read=[doc(100).to_item()])


def test_scan_is_billed_like_a_query() -> None:
    items = [doc(3000, rev=i).to_item() for i in range(3)]
    assert estimate_capacity(Doc.scan(), read=items).rcu == 1.5
    assert estimate_capacity(Doc.scan().consistent(), read=items).rcu == 3.0


def test_batch_get_rounds_per_item_and_missing_keys_are_free() -> None:
    keys = [(Doc.plan(), {"doc_id": "d", "rev": i}) for i in range(3)]
    read: list[Item | None] = [doc(1000).to_item(), doc(5000).to_item(), None]
    assert estimate_capacity(BatchGet(keys), read=read).rcu == 1.5
    assert estimate_capacity(BatchGet(keys, consistent=True), read=read).rcu == 3.0
    with pytest.raises(EstimateError, match=r"the batch get has 3 entries but read= has 1"):
        estimate_capacity(BatchGet(keys), read=read[:1])


def test_batch_write_per_item() -> None:
    puts = [doc(1000, rev=1), doc(1700, rev=2, owner="o")]
    batch = BatchWrite(puts, [(Doc.plan(), {"doc_id": "d", "rev": 3})] * 1)
    estimate = estimate_capacity(
        batch, existing=[None, None, doc(5000, rev=3).to_item()], tables=[app]
    )
    assert estimate.table_units == 1 + 2 + 5
    assert estimate.index_units == {"ByOwner": 2.0}
    missing = estimate_capacity(batch, tables=[app])
    assert missing.table_units == 1 + 2 + 2  # DynamoDB Local bills 2 for a missing delete


def test_batch_write_needs_its_tables() -> None:
    batch = BatchWrite([doc(1000)])
    with pytest.raises(EstimateError, match=r"a batch write writes to table 'cap-app'"):
        estimate_capacity(batch)


def test_transactions_double() -> None:
    tw = TransactWrite()
    tw = tw.put(Doc.put(doc(1500, rev=1, owner="o")))
    tw = tw.update(Doc.update(doc_id="d", rev=2).set(body="b"))
    tw = tw.delete(Doc.delete(doc_id="d", rev=3))
    tw = tw.check(Doc.plan(), {"doc_id": "d", "rev": 4}, Doc.f.body.exists())
    existing = [None, doc(1000, rev=2).to_item(), None, doc(5000, rev=4).to_item()]
    after = [None, doc(2500, rev=2).to_item(), None, None]
    estimate = estimate_capacity(tw, existing=existing, after=after, tables=[app])
    assert [line.units for line in estimate.lines] == [4.0, 4.0, 6.0, 1.0, 4.0]
    assert estimate.index_units == {"ByOwner": 4.0}
    with pytest.raises(EstimateError, match=r"transaction entry #1 \(entity Doc\) is an update"):
        estimate_capacity(tw, existing=existing, tables=[app])

    tg = TransactGet().get(Doc.get(doc_id="d", rev=1)).get(Doc.get(doc_id="d", rev=2))
    assert estimate_capacity(tg, read=[doc(5000).to_item(), None]).rcu == 4.0 + 2.0


def test_explain_is_plain_data() -> None:
    explained = estimate_capacity(Doc.put(doc(1025, owner="o"))).explain()
    assert explained["wcu"] == 4.0
    assert explained["indexes"] == {"ByOwner": 2.0}
    assert explained["breakdown"][0] == {
        "kind": "write",
        "units": 2.0,
        "table": "cap-app",
        "index": None,
        "item": 0,
        "what": "put (1,025 B)",
        "bytes": 1025,
    }
    assert (CapacityEstimate() + estimate_capacity(Doc.put(doc(100)))).total == 1.0


def test_unknown_operation_is_refused() -> None:
    with pytest.raises(EstimateError, match=r"cannot estimate the capacity of a str"):
        estimate_capacity("get")  # type: ignore[arg-type]


def test_update_of_an_lsi_field_leaves_the_table_key_alone() -> None:
    # DynamoDB refuses "SET PK = ..." even to the same value; an LSI's partition key is PK.
    for value, verb in ((5, "SET "), (None, "REMOVE ")):
        params = Doc.update(doc_id="d", rev=1).set(rank=value).params()
        names = {v: k for k, v in params["ExpressionAttributeNames"].items()}
        expression = params["UpdateExpression"]
        assert expression.startswith(verb)
        assert names["LSI1SK"] in expression
        assert names["PK"] not in expression  # PK appears only in the existence condition
        assert names["PK"] in params["ConditionExpression"]


def test_meter_keeps_per_index_units() -> None:
    from singletable.io.connection import CapacityMeter

    meter = CapacityMeter()
    meter.record(
        "put_item",
        {
            "ConsumedCapacity": {
                "TableName": "t",
                "CapacityUnits": 8.0,
                "Table": {"CapacityUnits": 3.0},
                "GlobalSecondaryIndexes": {"G": {"CapacityUnits": 4.0}},
                "LocalSecondaryIndexes": {"L": {"CapacityUnits": 1.0}},
            }
        },
    )
    meter.record(
        "batch_write_item", {"ConsumedCapacity": [{"TableName": "t", "CapacityUnits": 2.0}]}
    )
    assert (meter.total_units, meter.write_units, meter.last_units) == (10.0, 10.0, 2.0)
    assert meter.by_index == {"G": 4.0, "L": 1.0}
    meter.reset()
    assert (meter.total_units, meter.by_index, meter.last_units) == (0.0, {}, 0.0)
