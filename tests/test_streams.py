"""Typed change streams, pure: Lambda events and stream records decoded without a backend."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from pydantic import Field

import singletable as st
from singletable.tooling.jobs.leases import JobRecord, PutJob, PutUnit
from singletable.tooling.jobs.units import WorkUnit

table = st.Table("shop", stream="NEW_AND_OLD_IMAGES")


class Customer(st.Entity, table=table, pk="CUST#{cid}", sk="PROFILE", unique="email"):
    cid: str
    email: str
    avatar: bytes | None = None


class Order(st.Entity, table=table, pk="CUST#{cid}", sk="ORDER#{oid}"):
    cid: str
    oid: int
    total: int
    tags: set[str] = Field(default_factory=set)


class Doc(st.Entity, table=table, pk="DOC#{did}", sk="DOC"):
    did: str
    data: dict[str, Any] = Field(default_factory=dict)


def _json_av(av: Any) -> Any:
    """What Lambda delivers for one AttributeValue: JSON, binary values base64-encoded.

    Walked by structure (a map's keys are names, whatever they spell), as a test oracle.
    """
    ((tag, inner),) = av.items()
    if tag == "B":
        return {tag: base64.b64encode(inner).decode()}
    if tag == "BS":
        return {tag: [base64.b64encode(v).decode() for v in inner]}
    if tag == "M":
        return {tag: {name: _json_av(v) for name, v in inner.items()}}
    if tag == "L":
        return {tag: [_json_av(v) for v in inner]}
    return {tag: inner}


def _json_image(image: Any) -> Any:
    return None if image is None else {name: _json_av(v) for name, v in image.items()}


def lambda_record(
    event: str, key: dict[str, Any], old: Any = None, new: Any = None, seq: str = "1"
) -> dict[str, Any]:
    change: dict[str, Any] = {
        "Keys": _json_image(key),
        "SequenceNumber": seq,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if old is not None:
        change["OldImage"] = _json_image(old)
    if new is not None:
        change["NewImage"] = _json_image(new)
    record = {
        "eventID": f"e{seq}",
        "eventName": event,
        "eventSource": "aws:dynamodb",
        "dynamodb": change,
    }
    decoded: dict[str, Any] = json.loads(json.dumps(record))
    return decoded


@settings(max_examples=100, deadline=None)
@given(
    hs.text(min_size=1, max_size=8),
    hs.integers(0, 10**6),
    hs.integers(-(10**9), 10**9),
    hs.integers(-(10**9), 10**9),
    hs.sets(hs.text(max_size=3), max_size=3),
)
def test_modify_records_round_trip(
    cid: str, oid: int, before: int, after: int, tags: set[str]
) -> None:
    old = Order(cid=cid, oid=oid, total=before)
    new = Order(cid=cid, oid=oid, total=after, tags=tags)
    event = {"Records": [lambda_record("MODIFY", old.key(), old.to_item(), new.to_item())]}
    (change,) = st.decode_event(table, event)
    assert (change.entity, change.event, change.key) == (Order, "MODIFY", {"cid": cid, "oid": oid})
    assert (change.old, change.new, change.item) == (old, new, new)


def test_binary_values_of_lambda_events_are_decoded() -> None:
    customer = Customer(cid="c1", email="a@x", avatar=b"\x00\xffpng")
    (change,) = st.decode_event(
        table, {"Records": [lambda_record("INSERT", customer.key(), new=customer.to_item())]}
    )
    assert change.new == customer


def test_keys_only_records_name_the_entity_by_its_key() -> None:
    record = {
        "eventName": "REMOVE",
        "dynamodb": {"Keys": Order(cid="c1", oid=7, total=1).key(), "StreamViewType": "KEYS_ONLY"},
    }
    (change,) = st.decode_records(table, [record])
    assert (change.entity, change.key, change.old, change.new) == (
        Order,
        {"cid": "c1", "oid": 7},
        None,
        None,
    )
    # A key no entity's templates parse is reported as unknown, not dropped.
    raw = {"eventName": "INSERT", "dynamodb": {"Keys": {"PK": {"S": "X"}, "SK": {"S": "Y"}}}}
    (unknown,) = st.decode_records(table, [raw])
    assert unknown.unknown
    assert unknown.entity is None


def test_guard_records_are_recognised() -> None:
    customer = Customer(cid="c1", email="a@x")
    guard = Customer.create(customer).params()["TransactItems"][1]["Put"]["Item"]
    (change,) = st.decode_event(
        table,
        {"Records": [lambda_record("INSERT", {k: guard[k] for k in ("PK", "SK")}, new=guard)]},
    )
    assert change.is_guard
    assert not change.unknown
    assert change.entity is None
    assert change.guard is not None
    assert (change.guard.entity, change.guard.values) == ("Customer", {"email": "a@x"})


def test_job_records_are_recognised_and_passed_to_no_handler() -> None:
    record = PutJob(table, JobRecord("j", "touch", {}, total=1)).params()["Item"]
    unit = PutUnit(table, WorkUnit("j", "touch", 0, 1)).params()["Item"]
    records = [
        lambda_record("INSERT", {k: i[k] for k in ("PK", "SK")}, new=i) for i in (record, unit)
    ]
    changes = list(st.decode_event(table, {"Records": records}))
    assert [(c.job, c.unknown, c.entity, c.guard) for c in changes] == [
        (True, False, None, None)
    ] * 2
    router = st.StreamRouter(table)
    seen: list[st.ChangeRecord] = []
    router.on_unknown(seen.append)
    report = router.dispatch(records, lambda_json=True)
    assert (seen, report.unknown, report.handled, report.unhandled) == ([], [], 0, 0)


def test_malformed_records_are_refused() -> None:
    with pytest.raises(st.StreamDecodeError, match="not a DynamoDB stream record"):
        list(st.decode_records(table, [{"eventName": "PUT"}]))
    with pytest.raises(st.StreamDecodeError, match="Records"):
        list(st.decode_event(table, {"records": []}))


def test_router_stops_at_the_first_failure_and_reports_it() -> None:
    router = st.StreamRouter(table)
    seen: list[int] = []

    @router.on(Order, "INSERT")
    def placed(change: st.ChangeRecord) -> None:
        assert isinstance(change.new, Order)
        if change.new.total < 0:
            raise ValueError("negative total")
        seen.append(change.new.oid)

    orders = [Order(cid="c", oid=i, total=-1 if i == 2 else 1) for i in range(4)]
    event = {
        "Records": [
            lambda_record("INSERT", o.key(), new=o.to_item(), seq=str(100 + o.oid)) for o in orders
        ]
    }
    assert router.handle(event) == {"batchItemFailures": [{"itemIdentifier": "102"}]}
    assert seen == [0, 1]  # records after the failure are left for Lambda's retry
    assert st.batch_item_failures(["1", "2"])["batchItemFailures"][1] == {"itemIdentifier": "2"}


def test_router_refuses_bad_subscriptions() -> None:
    router = st.StreamRouter(st.Table("other"))
    with pytest.raises(st.SingleTableError, match="not on this router's table"):
        router.on(Order)
    with pytest.raises(st.SingleTableError, match="unknown stream event"):
        st.StreamRouter(table).on(Order, "UPDATE")  # type: ignore[arg-type]


TYPE_TAGS = ("S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS")
#: Map keys: every type tag, and other names.
_names = hs.sampled_from(TYPE_TAGS) | hs.text(min_size=1, max_size=4)
_scalars = (
    hs.none()
    | hs.booleans()
    | hs.integers(-(10**12), 10**12)
    | hs.text(max_size=6)
    | hs.binary(max_size=6)
    | hs.frozensets(hs.text(max_size=3), min_size=1, max_size=3)
    | hs.frozensets(hs.binary(max_size=3), min_size=1, max_size=3)
    | hs.frozensets(hs.integers(-99, 99), min_size=1, max_size=3)
)
#: Nested values whose maps use type tags as keys, at every depth.
_values = hs.recursive(
    _scalars,
    lambda inner: hs.lists(inner, max_size=3) | hs.dictionaries(_names, inner, max_size=4),
    max_leaves=12,
)


def _local_image(av: Any) -> Any:
    """An AttributeValue as DynamoDB Local 3.3's stream images show it: ``{}`` for an
    empty map (``{"M": {}}``), at any depth."""
    ((tag, inner),) = av.items()
    if tag == "M":
        return {"M": {name: _local_image(v) for name, v in inner.items()}} if inner else {}
    if tag == "L":
        return {"L": [_local_image(v) for v in inner]}
    return av


@settings(max_examples=150, deadline=None)
@given(hs.dictionaries(_names, _values, max_size=5))
def test_maps_whose_keys_spell_type_tags_decode_from_every_source(data: dict[str, Any]) -> None:
    # Types come from the AttributeValue structure, never from a map's key names: the
    # Lambda event (base64 binaries), the GetRecords records (bytes) and DynamoDB Local's
    # images (an untagged empty map) all decode to the item that was written.
    doc = Doc(did="d", data=data)
    item = doc.to_item()
    lambda_event = {"Records": [lambda_record("INSERT", doc.key(), new=item)]}
    local = {name: _local_image(v) for name, v in item.items()}
    get_records = [
        {"eventName": "INSERT", "dynamodb": {"Keys": doc.key(), "NewImage": image}}
        for image in (item, local)
    ]
    changes = [*st.decode_event(table, lambda_event), *st.decode_records(table, get_records)]
    assert [(c.entity, c.new, c.new_image) for c in changes] == [(Doc, doc, item)] * 3
    router = st.StreamRouter(table)
    seen: list[st.ChangeRecord] = []
    router.on(Doc)(seen.append)
    assert router.handle(lambda_event) == {"batchItemFailures": []}
    assert [c.new for c in seen] == [doc]


def test_a_map_key_named_bs_is_a_name_not_a_binary_set() -> None:
    # The reported event: {"BS": "Bahamas"} raised binascii.Error in decode_event, and
    # StreamRouter.handle failed the record on every retry, blocking its shard.
    doc = Doc(did="d", data={"BS": "Bahamas", "S": {"N": 1}, "M": [{"L": None}]})
    event = {"Records": [lambda_record("INSERT", doc.key(), new=doc.to_item(), seq="7")]}
    (change,) = st.decode_event(table, event)
    assert change.new == doc
    assert st.StreamRouter(table).handle(event) == {"batchItemFailures": []}


def test_an_untagged_empty_map_is_the_dynamodb_local_quirk() -> None:
    # DynamoDB Local 3.3 writes an empty map into stream images as {} without its "M"
    # (the table read returns {"M": {}}); tests/integration/test_streams.py reads it back.
    # No valid AttributeValue is empty, so {} can only mean an empty map.
    doc = Doc(did="d", data={"e": {}, "l": [{}]})
    image = {**doc.to_item(), "data": {"M": {"e": {}, "l": {"L": [{}]}}}}
    record = {"eventName": "INSERT", "dynamodb": {"Keys": doc.key(), "NewImage": image}}
    (change,) = st.decode_records(table, [record])
    assert change.new == doc
    assert change.new_image is not None
    assert change.new_image["data"] == {"M": {"e": {"M": {}}, "l": {"L": [{"M": {}}]}}}


@pytest.mark.parametrize(
    ("image", "message"),
    [
        ({"data": {"B": "not base64!"}}, "attribute 'data': a binary value is not base64"),
        ({"data": {"S": "a", "N": "1"}}, "attribute 'data': not an AttributeValue"),
        ({"data": {"M": {"x": "bare"}}}, "attribute 'data': not an AttributeValue"),
        ({"data": {"L": {"S": "x"}}}, "attribute 'data': the value of a 'L' attribute is dict"),
    ],
)
def test_malformed_attribute_values_are_refused_with_the_attribute(
    image: dict[str, Any], message: str
) -> None:
    key = Doc(did="d").key()
    record = {"eventName": "INSERT", "dynamodb": {"Keys": key, "NewImage": {**key, **image}}}
    with pytest.raises(st.StreamDecodeError, match=message):
        list(st.decode_event(table, {"Records": [record]}))
