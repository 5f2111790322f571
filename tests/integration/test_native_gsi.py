"""Native (multi-attribute) GSIs on both backends, through the public API.

The property tests generate entity classes whose parts are drawn from the attribute kinds
of `tests.strategies` (those whose codec's `key_order` allows them in that role), write
random items, and check that a query returns exactly the Python selection of the model
values in the order of the sort parts' values, and that index membership follows
updates and removes exactly. Each example makes its own table: the parts' types differ.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.attributes.codecs import attribute_codec_for
from tests.integration._executors import connect
from tests.strategies import ATTRIBUTE_KINDS, AttributeKind

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

PROPERTY_SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_tables = itertools.count()


def _order(kind: AttributeKind) -> str:
    return attribute_codec_for(kind.annotation, where=kind.name).key_order


# The "_wide" kinds draw values DynamoDB cannot store; the rest are stored as drawn.
SORT_KINDS = [k for k in ATTRIBUTE_KINDS if _order(k) == "ordered" and "wide" not in k.name]
PARTITION_KINDS = [k for k in ATTRIBUTE_KINDS if _order(k) != "none" and "wide" not in k.name]


def test_the_generated_kinds_cover_every_key_type() -> None:
    types = {attribute_codec_for(k.annotation, where="").params()["type"] for k in SORT_KINDS}
    assert types == {"S", "N", "B"}
    equality_only = {k.name for k in PARTITION_KINDS} - {k.name for k in SORT_KINDS}
    assert equality_only == {"datetime", "naive_datetime"}


@pytest.fixture
def make_table(dynamodb_client: DynamoDBClient, table_name: str) -> Iterator[Any]:
    made: list[str] = []

    def create(*indexes: st.NativeGSI | st.GSI) -> tuple[st.Table, st.Connection]:
        name = f"{table_name}-{next(_tables)}"
        made.append(name)
        return st.Table(name, indexes=indexes), connect(dynamodb_client)

    yield create
    for name in made:
        with contextlib.suppress(dynamodb_client.exceptions.ResourceNotFoundException):
            dynamodb_client.delete_table(TableName=name)


def _create(dynamodb_client: DynamoDBClient, table: st.Table) -> None:
    dynamodb_client.create_table(**st.create_table_request(table))
    dynamodb_client.get_waiter("table_exists").wait(
        TableName=table.name, WaiterConfig={"Delay": 1, "MaxAttempts": 60}
    )


# -- one model, by example ------------------------------------------------------------------


def test_order_sparse_membership_cursors_and_mixed_entities(
    dynamodb_client: DynamoDBClient, make_table: Any
) -> None:
    table, db = make_table(
        st.GSI("GSI1", pk="GSI1PK"),
        st.NativeGSI("ByArea", pk=["tenant", "region"], sk=["day", "seq"]),
    )

    class Reading(st.Entity, table=table, pk="R#{rid}", sk="R"):
        rid: str
        tenant: str
        region: str | None = None
        day: int
        seq: int

    class Alarm(st.Entity, table=table, pk="A#{rid}", sk="A"):
        rid: str
        tenant: str
        region: str
        day: int
        seq: int

    _create(dynamodb_client, table)
    rows = [("a", "x", 10, 1), ("a", "x", 9, 5), ("a", "x", 100, 0), ("a", None, 1, 1)]
    for i, (tenant, region, day, seq) in enumerate(rows):
        Reading.put(Reading(rid=str(i), tenant=tenant, region=region, day=day, seq=seq)).run(db)
    Alarm.put(Alarm(rid="z", tenant="a", region="x", day=10, seq=3)).run(db)
    area = Reading.query(index="ByArea", tenant="a", region="x")
    # Numbers in numeric order (9 < 10 < 100), the item without a region left out, the
    # Alarm in the same partition filtered out.
    assert [(r.day, r.seq) for r in area.all(db)] == [(9, 5), (10, 1), (100, 0)]
    assert [(r.day, r.seq) for r in area.descending().all(db)] == [(100, 0), (10, 1), (9, 5)]
    assert [
        r.rid
        for r in Reading.query(index="ByArea", tenant="a", region="x", day=10).gt(seq=0).all(db)
    ] == ["0"]
    assert area.count(db) == 3
    assert area.lt(day=100).count(db) == 2
    first = area.limit(2).page(db)
    rest = area.limit(2).page(db, first.cursor)
    assert [r.day for r in first.items + rest.items] == [9, 10, 100]
    assert rest.cursor is None
    # A scan of the index: the items holding every part, resumed by cursor.
    scan = Reading.scan(index="ByArea")
    assert sorted(r.rid for r in scan.all(db)) == ["0", "1", "2"]
    page = scan.limit(2).page(db)
    assert len(page.items + scan.limit(2).page(db, page.cursor).items) == 3
    # A collection over the native GSI: both entities of a partition, each as its class.
    area_items = st.Collection("area", Reading, Alarm, index="ByArea")
    mixed = area_items.query(tenant="a", region="x", day=10).all(db)
    assert [(type(x).__name__, x.seq) for x in mixed] == [("Reading", 1), ("Alarm", 3)]
    newest = area_items.query(tenant="a", region="x").descending().limit(2).all(db)
    assert [(type(x).__name__, x.day) for x in newest] == [("Reading", 100), ("Alarm", 10)]
    head = area_items.query(tenant="a", region="x").limit(3).page(db)
    tail = area_items.query(tenant="a", region="x").limit(3).page(db, head.cursor)
    assert [x.day for x in head.items + tail.items] == [9, 10, 10, 100]
    with pytest.raises(st.QueryError, match="needs equality on every partition part"):
        area_items.query(tenant="a")
    alarms = Alarm.query(index="ByArea", tenant="a", region="x", day=10).all(db)
    assert [a.rid for a in alarms] == ["z"]
    # Membership follows the value: set the region, the item joins; clear it, it leaves.
    Reading.update(rid="3").set(region="x").run(db)
    assert [r.rid for r in area.all(db)] == ["3", "1", "0", "2"]
    Reading.update(rid="1").remove("region").run(db)
    Reading.update(rid="0").set(region=None).run(db)
    assert [r.rid for r in area.all(db)] == ["3", "2"]
    Reading.delete(rid="2").run(db)
    assert [r.rid for r in area.all(db)] == ["3"]


def test_refusals_name_the_rule_before_sending(make_table: Any) -> None:
    table, _ = make_table(st.NativeGSI("ByArea", pk=["tenant", "region"], sk=["day", "seq"]))

    class Reading(st.Entity, table=table, pk="R#{rid}", sk="R"):
        rid: str
        tenant: str
        region: str | None = None
        day: int
        seq: int = 0
        label: str = ""

    area = Reading.query(index="ByArea", tenant="a", region="x")
    refusals: dict[str, Callable[[], object]] = {
        "equality on every partition part": lambda: Reading.query(index="ByArea", tenant="a"),
        "left to right with no gap": lambda: Reading.query(
            index="ByArea", tenant="a", region="x", seq=1
        ),
        "must be on 'day'": lambda: area.gt(seq=1),
        "needs a string sort part": lambda: area.begins_with(day="1"),
        "above the high bound": lambda: area.between(day=(10, 9)),
        "only one sort part condition": lambda: area.gt(day=1).lt(day=5),
        "None is never in a native GSI": lambda: Reading.query(
            index="ByArea", tenant="a", region=None
        ),
        "empty key value": lambda: Reading.query(index="ByArea", tenant="", region="x"),
        "not a part of native GSI": lambda: Reading.query(
            index="ByArea", tenant="a", region="x", label="l"
        ),
        "every sort part fixed": lambda: Reading.query(
            index="ByArea", tenant="a", region="x", day=1, seq=2
        ).gt(seq=1),
    }
    for message, build in refusals.items():
        with pytest.raises(st.QueryError, match=message):
            build()
    with pytest.raises(st.ItemEncodeError, match="native GSI 'ByArea'"):
        Reading.put(Reading(rid="1", tenant="", region="x", day=1, seq=1)).params()
    with pytest.raises(st.ItemEncodeError, match="empty value"):
        Reading.update(rid="1").set(tenant="").params()
    with pytest.raises(st.ExpressionError, match="not Optional"):
        Reading.update(rid="1").remove("label", "seq")


def test_key_parts_past_their_sides_limit_are_refused_before_anything_is_sent(
    dynamodb_client: DynamoDBClient, make_table: Any
) -> None:
    # DynamoDB (Local 3.3.0: "Aggregate size for RANGE key attributes ...") refuses an
    # item whose partition parts total over 2,048 bytes, or sort parts over 1,024,
    # counting the parts present even when the item is not in the index. A batch would
    # have written the chunks before it.
    table, db = make_table(st.NativeGSI("ByLabel", pk=["tenant", "zone"], sk=["name", "tag"]))

    class Doc(st.Entity, table=table, pk="D#{did}", sk="D"):
        did: str
        tenant: str = "t"
        zone: str | None = None
        name: str = "n"
        tag: bytes = b"x"

    _create(dynamodb_client, table)
    fits = [
        Doc(did="a", zone="z", name="é" * 511, tag=b"xy"),  # 1,022 + 2: the sort limit
        Doc(did="b", tenant="t" * 2047, zone="z"),  # 2,048 bytes: the partition limit
        Doc(did="c", name="n" * 1000, tag=b"y" * 24),  # no zone: not in the index
    ]
    too_large = [
        Doc(did="x", zone="z", name="é" * 511, tag=b"xyz"),
        Doc(did="x", tenant="t" * 2048, zone="z"),
        Doc(did="x", name="n" * 1000, tag=b"y" * 25),
    ]
    for doc in too_large:
        batch = [Doc(did=f"ok{i}", zone="z") for i in range(60)] + [doc]
        with pytest.raises(st.KeyTooLargeError, match="native GSI 'ByLabel'"):
            db.execute(st.BatchWrite(puts=batch))
        with pytest.raises(st.KeyTooLargeError, match="native GSI 'ByLabel'"):
            Doc.put(doc).run(db)
    assert Doc.scan().all(db) == []
    db.execute(st.BatchWrite(puts=fits))
    assert sorted(Doc.scan().all(db), key=lambda d: d.did) == fits
    # A query's sort part value past 1,024 bytes is refused too (DynamoDB Local does);
    # one at the limit is asked.
    by_zone = Doc.query(index="ByLabel", tenant="t", zone="z")
    with pytest.raises(st.KeyTooLargeError, match=r"'name'.* 1025 bytes"):
        by_zone.gt(name="n" * 1025).all(db)
    assert by_zone.gt(name="é" * 512).all(db) == []
    assert by_zone.lt(name="é" * 512).all(db) == [fits[0]]


def test_params_and_explain_show_the_parts(make_table: Any) -> None:
    table, _ = make_table(st.NativeGSI("ByArea", pk=["tenant"], sk=["day", "code"]))

    class Reading(st.Entity, table=table, pk="R#{rid}", sk="R"):
        rid: str
        tenant: str
        day: int
        code: str | None = None

    query = Reading.query(index="ByArea", tenant="a", day=3).begins_with(code="X-")
    assert query.params() == {
        "TableName": table.name,
        "IndexName": "ByArea",
        "KeyConditionExpression": "#n0 = :v0 AND #n1 = :v1 AND begins_with (#n2, :v2)",
        "ExpressionAttributeNames": {"#n0": "tenant", "#n1": "day", "#n2": "code"},
        "ExpressionAttributeValues": {":v0": {"S": "a"}, ":v1": {"N": "3"}, ":v2": {"S": "X-"}},
    }
    item = Reading.plan().to_item(Reading(rid="1", tenant="a", day=3, code="X-1"))
    explained = st.explain(query, read=[item])
    assert explained["request"] == query.params()
    assert explained["capacity"]["rcu"] == 0.5
    # The index entry is the whole item (ALL), its key the parts' own attributes.
    put = st.explain(Reading.put(Reading(rid="1", tenant="a", day=3, code="X-1")), existing=None)
    assert put["capacity"]["indexes"] == {"ByArea": 1.0}
    assert [line["index"] for line in put["capacity"]["breakdown"]] == [None, "ByArea"]
    # Without a part the item has no entry: the update deletes it from the index.
    after = {k: v for k, v in item.items() if k != "code"}
    removed = st.explain(Reading.update(rid="1").remove("code"), existing=item, after=after)
    assert [line["what"] for line in removed["capacity"]["breakdown"]][1:] == [
        "index ByArea: delete (46 B)"
    ]


# -- generated entity classes -----------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """A generated native index: the kinds of its partition and sort parts."""

    pk: tuple[AttributeKind, ...]
    sk: tuple[AttributeKind, ...]
    sparse: str | None  # the part whose field is Optional

    @property
    def parts(self) -> list[tuple[str, AttributeKind]]:
        return [(f"p{i}", k) for i, k in enumerate(self.pk)] + [
            (f"s{i}", k) for i, k in enumerate(self.sk)
        ]


@hs.composite
def shapes(draw: hs.DrawFn) -> Shape:
    pk = tuple(draw(hs.lists(hs.sampled_from(PARTITION_KINDS), min_size=1, max_size=2)))
    sk = tuple(draw(hs.lists(hs.sampled_from(SORT_KINDS), min_size=1, max_size=3)))
    names = [f"p{i}" for i in range(len(pk))] + [f"s{i}" for i in range(len(sk))]
    return Shape(pk, sk, draw(hs.none() | hs.sampled_from(names)))


def _storable(kind: AttributeKind, value: Any) -> bool:
    codec = attribute_codec_for(kind.annotation, where=kind.name)
    try:
        av = codec.to_av(value)
    except st.ItemEncodeError:
        return False
    return av is not None and bool(next(iter(av.values())))


def _build(shape: Shape, table: st.Table, name: str) -> type[st.Entity]:
    annotations: dict[str, Any] = {"rid": int}
    namespace: dict[str, Any] = {}
    for field, kind in shape.parts:
        if field == shape.sparse:
            annotations[field] = kind.annotation | None
            namespace[field] = None
        else:
            annotations[field] = kind.annotation
    namespace["__annotations__"] = annotations
    return type(name, (st.Entity,), namespace, table=table, pk="R#{rid}", sk=name)


@hs.composite
def scenarios(draw: hs.DrawFn) -> tuple[Shape, list[dict[str, Any]], list[Any]]:
    """A shape, the items' part values (from small pools, so they collide), queries."""
    shape = draw(shapes())
    pools = {
        field: draw(hs.lists(kind.values.filter(partial(_storable, kind)), min_size=1, max_size=3))
        for field, kind in shape.parts
    }
    values = draw(
        hs.lists(
            hs.fixed_dictionaries(
                {
                    field: hs.sampled_from(pool) | hs.none()
                    if field == shape.sparse
                    else hs.sampled_from(pool)
                    for field, pool in pools.items()
                }
            ),
            max_size=8,
        )
    )
    queries = []
    for _ in range(draw(hs.integers(1, 3))):
        fixed = draw(hs.integers(0, len(shape.sk)))
        given = {
            f: draw(hs.sampled_from(pools[f])) for f, _ in shape.parts[: len(shape.pk) + fixed]
        }
        op = None
        if fixed < len(shape.sk):
            ops = ["between", "gt", "ge", "lt", "le"]
            if shape.sk[fixed].annotation is str:
                ops.append("begins_with")
            op = draw(hs.none() | hs.sampled_from(ops))
        bounds: tuple[Any, ...] = ()
        if op is not None:
            pool = pools[f"s{fixed}"]
            if op == "begins_with":
                bounds = (draw(hs.sampled_from(pool).map(lambda t: t[: len(t) // 2 + 1])),)
            elif op == "between":
                bounds = tuple(
                    sorted(draw(hs.lists(hs.sampled_from(pool), min_size=2, max_size=2)))
                )
            else:
                bounds = (draw(hs.sampled_from(pool)),)
        queries.append((given, fixed, op, bounds, draw(hs.booleans())))
    return shape, values, queries


def _matches(value: Any, op: str | None, bounds: tuple[Any, ...]) -> bool:
    if op is None:
        return True
    if op == "between":
        return bool(bounds[0] <= value <= bounds[1])
    if op == "begins_with":
        return bool(value.startswith(bounds[0]))
    low = bounds[0]
    return bool({"gt": value > low, "ge": value >= low, "lt": value < low, "le": value <= low}[op])


def _check_query(
    db: st.Connection,
    model: Any,
    shape: Shape,
    stored: dict[int, Any],
    query: tuple[dict[str, Any], int, str | None, tuple[Any, ...], bool],
) -> None:
    given, fixed, op, bounds, descending = query
    sk_fields = [f"s{i}" for i in range(len(shape.sk))]
    selected = [
        obj
        for obj in stored.values()
        if all(getattr(obj, f) is not None for f, _ in shape.parts)
        and all(getattr(obj, f) == v for f, v in given.items())
        and (fixed == len(sk_fields) or _matches(getattr(obj, sk_fields[fixed]), op, bounds))
    ]
    built = model.query(index="Native", **given)
    if op == "between":
        built = built.between(**{sk_fields[fixed]: bounds})
    elif op is not None:
        built = getattr(built, op)(**{sk_fields[fixed]: bounds[0]})
    if descending:
        built = built.descending()
    got = built.all(db)

    def order(obj: Any) -> tuple[Any, ...]:
        return tuple(getattr(obj, f) for f in sk_fields)

    assert {o.rid for o in got} == {o.rid for o in selected}, built.params()
    # Items with equal sort parts come in no defined order: compare the parts' values.
    assert [order(o) for o in got] == sorted(map(order, selected), reverse=descending)
    assert built.count(db) == len(selected)


@PROPERTY_SETTINGS
@given(scenario=scenarios(), data=hs.data())
def test_queries_return_the_python_selection_in_part_order(
    dynamodb_client: DynamoDBClient,
    make_table: Any,
    scenario: tuple[Shape, list[dict[str, Any]], list[Any]],
    data: hs.DataObject,
) -> None:
    shape, values, queries = scenario
    table, db = make_table(
        st.NativeGSI(
            "Native",
            pk=[f for f, _ in shape.parts[: len(shape.pk)]],
            sk=[f for f, _ in shape.parts[len(shape.pk) :]],
        )
    )
    model = _build(shape, table, "Gen")
    # Another entity storing every part: it is in the index, never in Gen's results.
    other = _build(shape, table, "Other")
    _create(dynamodb_client, table)
    stored = {i: model(rid=i, **v) for i, v in enumerate(values)}
    writes: list[st.Entity] = [*stored.values(), *(other(rid=i, **v) for i, v in enumerate(values))]
    if writes:
        st.BatchWrite(writes).run(db)
    for query in queries:
        _check_query(db, model, shape, stored, query)
    if not stored:
        return
    # Updates and removes: membership follows the new values exactly.
    for rid in data.draw(hs.lists(hs.sampled_from(sorted(stored)), max_size=3, unique=True)):
        field, kind = data.draw(hs.sampled_from(shape.parts))
        current = stored[rid]
        if field == shape.sparse and data.draw(hs.booleans()):
            update = model.update(rid=rid)
            update = (
                update.remove(field) if data.draw(hs.booleans()) else update.set(**{field: None})
            )
            new_value = None
        else:
            new_value = data.draw(kind.values.filter(partial(_storable, kind)))
            update = model.update(rid=rid).set(**{field: new_value})
        update.run(db)
        stored[rid] = current.model_copy(update={field: new_value})
    for query in queries:
        _check_query(db, model, shape, stored, query)
