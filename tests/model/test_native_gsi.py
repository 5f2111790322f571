"""Native (multi-attribute) GSIs: the declaration, who feeds it, what class creation refuses."""

from __future__ import annotations

import datetime as dt
import enum
import itertools
import uuid
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as hs

import singletable as st
from singletable.attributes.codecs import AttributeCodec, attribute_codec_for
from singletable.model.definition import create_table_request
from singletable.model.plan import native_key_types, plan_of
from singletable.testing.strategies import key_decimals, key_floats
from tests.model.test_codegen import same_encoding
from tests.model.test_wire import same_wire
from tests.strategies import Level, Shade


def _table(*indexes: st.NativeGSI | st.GSI) -> st.Table:
    return st.Table("t", indexes=indexes)


def _entity(table: st.Table, name: str, **annotations: Any) -> type[st.Entity]:
    namespace: dict[str, Any] = {"__annotations__": {"rid": str, **annotations}}
    for field, annotation in annotations.items():
        if type(None) in getattr(annotation, "__args__", ()):
            namespace[field] = None
    return type(name, (st.Entity,), namespace, table=table, pk="R#{rid}", sk="R")


class _Plain(enum.Enum):
    A = "b"
    B = "a"


BY_AREA = st.NativeGSI("ByArea", pk=["tenant", "region"], sk=["day", "seq"])


def test_an_entity_with_every_part_feeds_the_index_in_part_order() -> None:
    table = _table(st.GSI("GSI1", pk="GSI1PK"), BY_AREA)
    reading = _entity(table, "Reading", seq=int, day=int, region=str | None, tenant=str)
    native = plan_of(reading).native_indexes["ByArea"]
    assert [(p.field, p.type) for p in native.pk] == [("tenant", "S"), ("region", "S")]
    assert [(p.field, p.type) for p in native.sk] == [("day", "N"), ("seq", "N")]
    assert native.optional_fields == {"region"}
    assert native.in_index(reading(rid="1", seq=1, day=1, region="x", tenant="a"))
    assert not native.in_index(reading(rid="1", seq=1, day=1, region=None, tenant="a"))
    # Nothing is written for the index: the item holds the fields as they are.
    item = plan_of(reading).to_item(reading(rid="1", seq=1, day=1, region=None, tenant="a"))
    assert "region" not in item
    assert item["day"] == {"N": "1"}


def test_an_entity_missing_a_part_does_not_feed_it() -> None:
    table = _table(BY_AREA)
    other = _entity(table, "Other", tenant=str, day=int)
    assert plan_of(other).native_indexes == {}


def test_create_table_lists_parts_in_order_with_their_types() -> None:
    table = _table(st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), BY_AREA)
    _entity(table, "Reading", tenant=str, region=str, day=int, seq=Decimal)
    request = create_table_request(table)
    assert request["GlobalSecondaryIndexes"][1] == {
        "IndexName": "ByArea",
        "KeySchema": [
            {"AttributeName": "tenant", "KeyType": "HASH"},
            {"AttributeName": "region", "KeyType": "HASH"},
            {"AttributeName": "day", "KeyType": "RANGE"},
            {"AttributeName": "seq", "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "ALL"},
    }
    definitions = {d["AttributeName"]: d["AttributeType"] for d in request["AttributeDefinitions"]}
    assert definitions == {
        "PK": "S",
        "SK": "S",
        "GSI1PK": "S",
        "GSI1SK": "S",
        "tenant": "S",
        "region": "S",
        "day": "N",
        "seq": "N",
    }


def test_a_declared_type_needs_no_entity_and_an_undeclared_one_does() -> None:
    declared = _table(st.NativeGSI("ByDay", pk=[st.KeyPart("tenant", "S")], sk=[("day")]))
    with pytest.raises(st.ModelDefinitionError, match="no entity stores part 'day'"):
        create_table_request(declared)
    _entity(declared, "Reading", tenant=str, day=dt.date)
    assert native_key_types(declared) == {"tenant": "S", "day": "S"}


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        # two entities storing one index attribute with different types
        ({"tenant": int}, "Reading.tenant stores the same attribute as S"),
        # a field whose stored form has no key type
        ({"region": bool}, "stored as BOOL, and a key attribute must be S, N or B"),
        ({"region": set[str]}, "stored as set"),
    ],
)
def test_class_creation_refuses(annotations: dict[str, Any], message: str) -> None:
    table = _table(BY_AREA)
    _entity(table, "Reading", tenant=str, region=str, day=int, seq=int)
    with pytest.raises(st.ModelDefinitionError, match=message):
        _entity(table, "Bad", **annotations)


@pytest.mark.parametrize(
    ("day", "message"),
    [
        (dt.datetime, "a sk part needs a stored form that orders .*key order: equality"),
        (dt.time, "key order: none"),
        (_Plain, "key order: equality"),
    ],
)
def test_a_sort_part_must_order_like_its_values(day: Any, message: str) -> None:
    with pytest.raises(st.ModelDefinitionError, match=message):
        _entity(_table(BY_AREA), "Bad", tenant=str, region=str, day=day, seq=int)


def test_a_datetime_may_be_a_partition_part_but_not_a_sort_part() -> None:
    table = _table(st.NativeGSI("ByHour", pk=["hour"], sk=["seq"]))
    hourly = _entity(table, "Hourly", hour=dt.datetime, seq=int)
    assert not plan_of(hourly).native_indexes["ByHour"].pk[0].ordered


def test_the_declared_type_must_match_the_field() -> None:
    table = _table(st.NativeGSI("ByDay", pk=[st.KeyPart("tenant", "N")]))
    with pytest.raises(st.ModelDefinitionError, match="declares the attribute as N"):
        _entity(table, "Reading", tenant=str)


def test_none_stored_as_null_cannot_be_a_part() -> None:
    table = _table(st.NativeGSI("ByRegion", pk=["region"]))
    with pytest.raises(st.ModelDefinitionError, match="stored as NULL"):
        type(
            "Reading",
            (st.Entity,),
            {"__annotations__": {"rid": str, "region": str | None}, "region": "eu"},
            table=table,
            pk="R#{rid}",
            sk="R",
        )


@pytest.mark.parametrize(
    ("pk", "sk", "message"),
    [
        (["a", "b", "c", "d", "e"], [], "5 partition and 0 sort key attributes"),
        (["a"], ["b", "c", "d", "e", "f"], "1 partition and 5 sort key attributes"),
        ([], [], "0 partition"),
        (["a"], ["a"], "'a' is named twice"),
    ],
)
def test_more_than_four_and_four_parts_are_refused(
    pk: list[str], sk: list[str], message: str
) -> None:
    with pytest.raises(st.ModelDefinitionError, match=message):
        st.NativeGSI("X", pk=pk, sk=sk)


def test_four_and_four_parts_are_taken() -> None:
    index = st.NativeGSI("X", pk=["a", "b", "c", "d"], sk=["e", "f", "g", "h"])
    assert len(index.parts) == 8


@pytest.mark.parametrize("attribute", ["PK", "SK", "GSI1PK", "_et", "_ev"])
def test_a_part_cannot_be_a_template_key_or_bookkeeping_attribute(attribute: str) -> None:
    with pytest.raises(st.ModelDefinitionError, match="not one an entity field stores"):
        st.Table(
            "t",
            indexes=[st.GSI("GSI1", pk="GSI1PK"), st.NativeGSI("X", pk=[attribute])],
        )


def test_native_and_template_indexes_share_the_name_space_and_the_quota() -> None:
    with pytest.raises(st.ModelDefinitionError, match="declared twice"):
        st.Table("t", indexes=[st.GSI("X", pk="GSI1PK"), st.NativeGSI("X", pk=["a"])])
    many = [st.GSI(f"G{i}", pk=f"P{i}") for i in range(20)]
    with pytest.raises(st.ModelDefinitionError, match="21 GSIs declared"):
        st.Table("t", indexes=[*many, st.NativeGSI("X", pk=["a"])])


# -- the key order of the attribute codecs, checked against DynamoDB's comparison ---------


def _dynamodb_sort_key(av: dict[str, Any]) -> Any:
    """How DynamoDB orders key values: numbers by value, strings and binary by bytes."""
    ((kind, value),) = av.items()
    if kind == "N":
        return Decimal(value)
    if kind == "S":
        return value.encode("utf-8")
    return bytes(value)


ORDERED_VALUES: dict[Any, hs.SearchStrategy[Any]] = {
    str: hs.text(hs.characters(codec="utf-8")),
    int: hs.integers(-(10**37), 10**37),
    float: key_floats(),
    Decimal: key_decimals(),
    bytes: hs.binary(),
    dt.date: hs.dates(),
    uuid.UUID: hs.uuids(),
    Shade: hs.sampled_from(Shade),
    Level: hs.sampled_from(Level),
}


@pytest.mark.parametrize("annotation", list(ORDERED_VALUES), ids=lambda a: a.__name__)
def test_the_ordered_codecs_are_the_ones_tested_here(annotation: Any) -> None:
    assert attribute_codec_for(annotation, where="x").key_order == "ordered"


def _storable(codec: AttributeCodec, value: Any) -> bool:
    try:
        codec.to_av(value)
    except st.ItemEncodeError:
        return False
    return True


@given(hs.data())
def test_an_ordered_codec_stores_values_in_their_order(data: hs.DataObject) -> None:
    annotation = data.draw(hs.sampled_from(list(ORDERED_VALUES)))
    codec = attribute_codec_for(annotation, where="x")
    # Numbers DynamoDB cannot hold are refused on write; the order is of the rest.
    values = data.draw(
        hs.lists(
            ORDERED_VALUES[annotation].filter(lambda v: _storable(codec, v)), min_size=2, max_size=6
        )
    )
    stored = [codec.to_av(v) for v in values]
    for (a, sa), (b, sb) in itertools.combinations(zip(values, stored, strict=True), 2):
        assert (a < b) == (_dynamodb_sort_key(sa) < _dynamodb_sort_key(sb))  # type: ignore[arg-type]
        assert (a == b) == (_dynamodb_sort_key(sa) == _dynamodb_sort_key(sb))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("annotation", "order"),
    [(dt.datetime, "equality"), (_Plain, "equality"), (dt.time, "none"), (bool, "none")],
)
def test_codecs_that_do_not_order(annotation: Any, order: str) -> None:
    assert attribute_codec_for(annotation, where="x").key_order == order


_SIZED = st.Table(
    "sized", indexes=[st.NativeGSI("BySize", pk=["tenant", "zone"], sk=["name", "tag"])]
)


class Sized(st.Entity, table=_SIZED, pk="S#{sid}", sk="S"):
    sid: str
    tenant: str = "t"
    zone: str | None = None
    name: str = "n"
    tag: bytes = b"x"
    count: int = 0


def _text(data: hs.DataObject, low: int, high: int) -> str:
    char = data.draw(hs.sampled_from(["a", "é", "€", "😀"]))
    return char * max(1, data.draw(hs.integers(low, high)) // len(char.encode()))


@given(hs.data())
def test_native_parts_are_refused_exactly_past_their_sides_limit(data: hs.DataObject) -> None:
    # Every path (generated, reference, wire) refuses the item exactly when one side's
    # parts total more than DynamoDB's key limit for that side.
    tenant = _text(data, 1, 2100)
    zone = data.draw(hs.none() | hs.builds(lambda n: "z" * n, hs.integers(1, 60)))
    name = _text(data, 1, 1100)
    tag = b"x" * data.draw(hs.integers(1, 60))
    obj = Sized(sid="s", tenant=tenant, zone=zone, name=name, tag=tag)
    partition = len(tenant.encode()) + (0 if zone is None else len(zone))
    sort = len(name.encode()) + len(tag)
    status, message = same_wire(Sized.plan(), obj)
    assert same_encoding(Sized.plan(), obj) == (status, message)
    if partition > 2048 or sort > 1024:
        assert status == "KeyTooLargeError"
        assert ("partition" if partition > 2048 else "sort") in message
    else:
        assert status == "ok"
