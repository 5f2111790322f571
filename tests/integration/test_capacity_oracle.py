"""The capacity estimator against DynamoDB Local's ConsumedCapacity, exactly.

DynamoDB Local computes ConsumedCapacity from item sizes the way the service does; moto
reports fixed figures (1.0 per put, 0.5 per get, nothing for transactions, see
``test_backend_quirks.py``), so these tests only run on the DynamoDB Local tier:

    scripts/dynamodb-local run -- python3 -m pytest tests/integration/test_capacity_oracle.py \\
        --backend dynamodb-local

Every operation runs with ``ReturnConsumedCapacity="INDEXES"``; the meter's total and
per-index figures for that one call must equal `estimate_capacity` to the unit.

One DynamoDB Local quirk is applied to the estimate before comparing, and pinned by its
own test: in a TransactWriteItems, items whose per-item capacity figures are *equal*
(same table units, same index units) are counted once, as if the emulator collected them
in a set. The service bills every item; the estimator does too.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as hs
from pydantic import Field

from singletable.attributes.size import item_size
from singletable.entity import Entity
from singletable.io.connection import Connection
from singletable.model.plan import IndexKeys
from singletable.model.table import GSI, LSI, NativeGSI, Projection, Table
from singletable.operations.batch import BatchGet, BatchWrite
from singletable.operations.items import Delete, Get, Put
from singletable.operations.transactions import TransactGet, TransactWrite
from singletable.operations.update import Update
from singletable.tooling.cost import CapacityEstimate, estimate_capacity
from singletable.types import Item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.dynamodb_local_only(
    "moto reports fixed ConsumedCapacity whatever the item size; DynamoDB Local is the oracle"
)

oracle = Table(
    f"st-capacity-oracle-{uuid.uuid4().hex[:8]}",
    indexes=[
        GSI("ByOwner", pk="GSI1PK", sk="GSI1SK"),
        GSI("ByTag", pk="GSI2PK", projection=Projection.keys_only()),
        LSI("ByRank", sk="LSI1SK", projection=Projection.include("note", "flag")),
        # Every item has an entry in this ALL LSI: each write pays its 100-byte overhead.
        LSI("ByRev", sk="LSI2SK"),
        # A native GSI over two partition parts and a sort part, sized from the parts' own
        # attributes: an entry exactly while owner is set (part and rev always are).
        # Parts all present or all absent: DynamoDB Local 3.3.0 bills an index write for
        # an overwrite that changes parts of an item in the index neither before nor after.
        NativeGSI(
            "ByPart", pk=["owner", "part"], sk=["rev"], projection=Projection.include("note")
        ),
    ],
)


class Rec(
    Entity,
    table=oracle,
    pk="P#{part}",
    sk="R#{rev}",
    indexes={
        "ByOwner": IndexKeys(pk="OWNER#{owner}", sk="{rev}"),
        "ByTag": IndexKeys(pk="TAG#{tag}"),
        "ByRank": IndexKeys(sk="{rank}"),
        "ByRev": IndexKeys(sk="{rev}"),
    },
):
    part: str
    rev: int
    owner: str | None = None
    tag: str | None = None
    rank: int | None = None
    note: str = ""
    flag: bool | None = None
    num: Decimal | None = None
    count: int | None = None
    blob: bytes | None = None
    nums: list[int] = Field(default_factory=list)
    meta: dict[str, str] = Field(default_factory=dict)
    labels: set[str] = Field(default_factory=set)
    body: str = ""


PLAN = Rec.plan()
CAP: Final = "INDEXES"

# Sizes on both sides of the write (1 KB) and read (4 KB) block boundaries.
_boundaries = [b + d for b in (1024, 2048, 4096, 8192) for d in (-1, 0, 1)]
sizes = hs.one_of(hs.sampled_from(_boundaries), hs.integers(0, 9000))
text = hs.text(max_size=12)
fields = hs.fixed_dictionaries(
    {},
    optional={
        "owner": hs.sampled_from(["ann", "bob", "cé"]),
        "tag": hs.sampled_from(["t1", "t2"]),
        "rank": hs.integers(0, 10**6),
        "note": text,
        "flag": hs.booleans(),
        "num": hs.decimals(
            min_value=Decimal("-1e20"),
            max_value=Decimal("1e20"),
            places=4,
            allow_nan=False,
            allow_infinity=False,
        ),
        "count": hs.integers(-(10**30), 10**30),
        "blob": hs.binary(max_size=40),
        "nums": hs.lists(hs.integers(-(10**9), 10**9), max_size=5),
        # DynamoDB refuses an empty map key ("Empty attribute name"); the codec lets it
        # through today, so keys here are non-empty.
        "meta": hs.dictionaries(hs.text(min_size=1, max_size=12), text, max_size=3),
        "labels": hs.sets(text, max_size=3),
    },
)


def make(part: str, rev: int, data: dict[str, Any], size: int) -> Rec:
    """A record padded through ``body`` to ``size`` bytes, when ``size`` is reachable."""
    rec = Rec(part=part, rev=rev, **data)
    pad = size - item_size(rec.to_item())
    return rec.model_copy(update={"body": "x" * pad}) if pad > 0 else rec


records = hs.tuples(fields, sizes)


def _local_transaction_figures(estimate: CapacityEstimate) -> tuple[float, dict[str, float]]:
    """DynamoDB Local's total for a TransactWriteItems: equal per-item figures counted once."""
    per_item: dict[int, tuple[float, frozenset[tuple[str, float]]]] = {}
    for line in estimate.lines:
        table, indexes = per_item.get(line.item, (0.0, frozenset()))
        if line.index is None:
            table += line.units
        else:
            merged = dict(indexes)
            merged[line.index] = merged.get(line.index, 0.0) + line.units
            indexes = frozenset(merged.items())
        per_item[line.item] = (table, indexes)
    total = 0.0
    by_index: dict[str, float] = {}
    for table, indexes in set(per_item.values()):
        total += table + sum(units for _, units in indexes)
        for name, units in indexes:
            by_index[name] = by_index.get(name, 0.0) + units
    return total, by_index


class Oracle:
    """Runs operations and compares the meter with the estimate, call by call."""

    def __init__(self, db: Connection) -> None:
        self.db = db
        self.stored: dict[tuple[str, int], Rec] = {}
        self.checked: dict[str, int] = {}

    def item(self, part: str, rev: int) -> Item | None:
        rec = self.stored.get((part, rev))
        return None if rec is None else rec.to_item()

    def check(self, kind: str, estimate: CapacityEstimate, run: Any) -> Any:
        self.db.meter.reset()
        result = run()
        expected_total, expected_index = estimate.total, estimate.index_units
        if kind.startswith("transact write"):
            expected_total, expected_index = _local_transaction_figures(estimate)
        reported_index = {k: v for k, v in self.db.meter.by_index.items() if v}
        assert (kind, self.db.meter.total_units) == (kind, expected_total), estimate.explain()
        assert reported_index == {k: v for k, v in expected_index.items() if v}, (
            kind,
            estimate.explain(),
        )
        self.checked[kind] = self.checked.get(kind, 0) + 1
        return result

    def put(self, rec: Rec, kind: str = "put") -> None:
        op = Put(rec, capacity=CAP)
        key = (rec.part, rec.rev)
        estimate = estimate_capacity(op, existing=self.item(*key))
        self.check(kind, estimate, lambda: op.run(self.db))
        self.stored[key] = rec

    def clear(self) -> None:
        for part, rev in list(self.stored):
            Delete(PLAN, {"part": part, "rev": rev}).run(self.db)
        self.stored.clear()


@pytest.fixture(scope="module")
def oracle_db(dynamodb_client: DynamoDBClient) -> Iterator[Connection]:
    db = Connection(dynamodb_client)
    db.create_table(oracle)
    try:
        yield db
    finally:
        db.delete_table(oracle)


# The session-scoped DynamoDB Local client is behind a function-scoped fixture; this
# module needs one table for all its examples, so it builds its own module-scoped one.
@pytest.fixture(scope="module")
def dynamodb_client(_dynamodb_local_client: Any) -> Any:
    return _dynamodb_local_client


@settings(
    max_examples=30,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    first=records,
    second=records,
    changes=records,
    extra=hs.lists(records, min_size=1, max_size=4),
    page_size=hs.one_of(hs.none(), hs.integers(1, 4)),
)
def test_estimate_equals_dynamodb_local(
    oracle_db: Connection,
    first: tuple[dict[str, Any], int],
    second: tuple[dict[str, Any], int],
    changes: tuple[dict[str, Any], int],
    extra: list[tuple[dict[str, Any], int]],
    page_size: int | None,
) -> None:
    o = Oracle(oracle_db)
    o.clear()
    part = "p" + uuid.uuid4().hex[:6]
    try:
        _scenario(o, part, first, second, changes, extra, page_size)
    finally:
        o.clear()


def _update_values(rec: Rec) -> dict[str, Any]:
    """Every non-key field of ``rec`` for ``Update.set``; ``None`` (or an empty set) removes."""
    values: dict[str, Any] = {}
    for name in PLAN.fields:
        if name not in ("part", "rev"):
            value = getattr(rec, name)
            values[name] = None if value == set() else value
    return values


def _scenario(
    o: Oracle,
    part: str,
    first: tuple[dict[str, Any], int],
    second: tuple[dict[str, Any], int],
    changes: tuple[dict[str, Any], int],
    extra: list[tuple[dict[str, Any], int]],
    page_size: int | None,
) -> None:
    db = o.db
    # put new, put over an existing item
    o.put(make(part, 1, *first), "put new")
    o.put(make(part, 1, *second), "put overwrite")
    # the same item again, estimated against the item as DynamoDB stored it: numbers in
    # normal form ("35.5" where the put sent "35.50") are the same values, so no index
    # entry changes
    rec = o.stored[(part, 1)]
    stored = db.client.get_item(TableName=oracle.name, Key=PLAN.key(rec), ConsistentRead=True)[
        "Item"
    ]
    put = Put(rec, capacity=CAP)
    o.check("put unchanged", estimate_capacity(put, existing=stored), lambda: put.run(db))

    # gets: eventual, strong, missing
    for consistent in (False, True):
        for rev in (1, 99):
            get: Get[Rec] = Get(
                PLAN, {"part": part, "rev": rev}, consistent=consistent, capacity=CAP
            )
            estimate = estimate_capacity(get, read=o.item(part, rev))
            o.check("get strong" if consistent else "get", estimate, lambda g=get: g.run(db))

    # update: set every field of a fresh random record (index keys move, appear, vanish)
    data, size = changes
    target = make(part, 1, data, size)
    update: Update[Rec] = Update(PLAN, {"part": part, "rev": 1}, capacity=CAP)
    update = update.set(**_update_values(target))
    before = o.item(part, 1)
    estimate = estimate_capacity(update, existing=before, after=target.to_item())
    result = o.check("update", estimate, lambda: update.run(db))
    assert result == target  # as models: a set read back may list its elements in any order
    o.stored[(part, 1)] = target

    # more items in the partition, by batch write (plus a missing delete)
    news = [make(part, 10 + i, d, s) for i, (d, s) in enumerate(extra)]
    batch = BatchWrite(news, [(PLAN, {"part": part, "rev": 98})], capacity=CAP)
    estimate = estimate_capacity(batch, existing=[None] * (len(news) + 1), tables=[oracle])
    o.check("batch write", estimate, lambda: batch.run(db))
    for rec in news:
        o.stored[(part, rec.rev)] = rec

    # queries (table, paged, strong) and index queries, scan
    in_part = [r.to_item() for (p, _), r in sorted(o.stored.items()) if p == part]
    for consistent in (False, True):
        query = Rec.query(part=part).capacity(CAP).consistent(consistent)
        if page_size is not None:
            query = query.page_size(page_size)
        estimate = estimate_capacity(query, read=in_part)
        o.check("query strong" if consistent else "query", estimate, lambda q=query: q.all(db))
    owners = {r.owner for r in o.stored.values() if r.owner is not None}
    for owner in sorted(owners):
        rows = [r.to_item() for r in o.stored.values() if r.owner == owner]
        query = Rec.query(index="ByOwner", owner=owner).capacity(CAP)
        o.check("query gsi", estimate_capacity(query, read=rows), lambda q=query: q.all(db))
    tags = {r.tag for r in o.stored.values() if r.tag is not None}
    for tag in sorted(tags):
        rows = [r.to_item() for r in o.stored.values() if r.tag == tag]
        # KEYS_ONLY: the rows hold key fields only, so the query projects them.
        query = Rec.query(index="ByTag", tag=tag).project("part", "rev", "tag").capacity(CAP)
        o.check(
            "query keys-only gsi", estimate_capacity(query, read=rows), lambda q=query: q.all(db)
        )
    ranked = [r.to_item() for r in o.stored.values() if r.rank is not None]
    query = Rec.query(index="ByRank", part=part).capacity(CAP)
    o.check("query lsi", estimate_capacity(query, read=ranked), lambda: query.all(db))
    # naming an attribute the LSI does not project: every item is fetched from the table
    fetch = Rec.query(index="ByRank", part=part).project("body", "num").capacity(CAP)
    if page_size is not None:
        fetch = fetch.page_size(page_size)
    ranked_in_order = sorted(ranked, key=lambda i: i["LSI1SK"]["S"])
    o.check(
        "query lsi fetch",
        estimate_capacity(fetch, read=ranked_in_order),
        lambda: fetch.all(db),
    )
    scan = Rec.scan().capacity(CAP)
    everything = [r.to_item() for r in o.stored.values()]
    o.check("scan", estimate_capacity(scan, read=everything), lambda: scan.all(db))

    # batch get: every stored key and a missing one
    revs = [*sorted(rev for (_, rev) in o.stored), 97]
    for consistent in (False, True):
        bget = BatchGet(
            [(PLAN, {"part": part, "rev": rev}) for rev in revs],
            consistent=consistent,
            capacity=CAP,
        )
        estimate = estimate_capacity(bget, read=[o.item(part, rev) for rev in revs])
        o.check("batch get", estimate, lambda b=bget: b.run(db))

    # transactions
    tget = TransactGet(capacity=CAP)
    for rev in revs:
        tget = tget.get(Get(PLAN, {"part": part, "rev": rev}))
    estimate = estimate_capacity(tget, read=[o.item(part, rev) for rev in revs])
    o.check("transact get", estimate, lambda: tget.run(db))

    tw = TransactWrite(capacity=CAP)
    fresh = make(part, 50, *first)
    tw = tw.put(Put(fresh))
    moved = make(part, 1, *second)
    tw_update: Update[Rec] = Update(PLAN, {"part": part, "rev": 1})
    tw_update = tw_update.set(**_update_values(moved))
    tw = tw.update(tw_update)
    tw = tw.delete(Delete(PLAN, {"part": part, "rev": 10}))
    tw = tw.delete(Delete(PLAN, {"part": part, "rev": 96}))
    rev_checked = news[-1].rev if len(news) > 1 else 95
    condition = Rec.f.rev.exists() if rev_checked != 95 else Rec.f.rev.not_exists()
    tw = tw.check(PLAN, {"part": part, "rev": rev_checked}, condition)
    existing = [None, o.item(part, 1), o.item(part, 10), None, o.item(part, rev_checked)]
    after: list[Item | None] = [None, moved.to_item(), None, None, None]
    estimate = estimate_capacity(tw, existing=existing, after=after, tables=[oracle])
    o.check("transact write", estimate, lambda: tw.run(db))
    o.stored[(part, 50)] = fresh
    o.stored[(part, 1)] = moved
    del o.stored[(part, 10)]

    # deletes: existing and missing
    for rev in (1, 94):
        delete: Delete[Rec] = Delete(PLAN, {"part": part, "rev": rev}, capacity=CAP)
        estimate = estimate_capacity(delete, existing=o.item(part, rev))
        o.check("delete", estimate, lambda d=delete: d.run(db))
        o.stored.pop((part, rev), None)


def test_transaction_quirk_equal_items_counted_once(oracle_db: Connection) -> None:
    """Pins the DynamoDB Local quirk the oracle corrects for (two equal puts report half)."""
    o = Oracle(oracle_db)
    part = "q" + uuid.uuid4().hex[:6]
    tw = TransactWrite(capacity=CAP)
    tw = tw.put(Put(Rec(part=part, rev=1)))
    tw = tw.put(Put(Rec(part=part, rev=2)))
    estimate = estimate_capacity(tw, tables=[oracle])
    # What the service bills: 2 items x (1 table WCU + 1 WCU for the ByRev LSI entry) x 2.
    assert estimate.total == 8.0
    oracle_db.meter.reset()
    tw.run(oracle_db)
    assert oracle_db.meter.total_units == 4.0 == _local_transaction_figures(estimate)[0]
    o.stored = {(part, 1): Rec(part=part, rev=1), (part, 2): Rec(part=part, rev=2)}
    o.clear()
