"""The generated wire encoder (singletable.model.wire) against ``to_item`` + one JSON dump.

For every instance: either both refuse it with the same error and message, or the wire
bytes load into exactly the JSON form of ``to_item()`` (what the lean transport sends),
with the same key identity; ``None`` only for text UTF-8 cannot encode, which the batch
then refuses through its request-wide check.
"""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from decimal import Decimal
from typing import Annotated, Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from pydantic_core import TzInfo

from singletable import Entity, KeyFormat, NativeGSI, Table
from singletable.attributes.size import MAX_ITEM_SIZE
from singletable.errors import ItemTooDeepError
from singletable.examples import AuditEvent, sample_items
from singletable.model.plan import EntityPlan
from singletable.model.wire import (
    build_wire_encoder,
    encode_other,
    item_from_wire,
    key_identity,
    wire_encoder,
)
from tests.model.test_codegen import (
    RICH,
    Event,
    FlatEvent,
    Inner,
    Name,
    Path,
    event,
    same_encoding,
    unvalidated,
)
from tests.strategies import (
    ATTRIBUTE_KINDS,
    AttributeKind,
    AttributeSpec,
    EntitySpec,
    build_entity,
    entity_instances,
    entity_of_attributes,
    entity_specs,
    nesting,
)

LONE = "\ud800"


def outcome(func: Any, arg: Any) -> tuple[str, Any]:
    try:
        return "ok", func(arg)
    except Exception as exc:  # compared by type and message
        return type(exc).__name__, str(exc)


def same_wire(plan: EntityPlan, obj: Any, encoder: Any = None) -> tuple[str, Any]:
    """Assert the wire encoder agrees with ``to_item``; return to_item's outcome."""
    encoder = encoder or wire_encoder(plan)
    reference = outcome(plan.to_item, obj)
    wire = outcome(encoder, obj)
    if reference[0] != "ok":
        assert wire == reference
        return reference
    item = reference[1]
    assert wire[0] == "ok", wire
    try:
        expected = orjson.dumps(item, default=encode_other)
    except TypeError:  # a lone surrogate in an attribute: left to the request-wide check
        assert wire[1] is None
        return reference
    assert wire[1] is not None
    ident, body = wire[1]
    assert orjson.loads(body) == orjson.loads(expected)
    assert item_from_wire(body) == item  # the dict form a batch gives the boto3 transport
    assert ident == key_identity(plan.table.name, plan.key_of_item(item))
    return reference


def test_worked_examples_go_to_the_wire_like_to_item() -> None:
    for obj in sample_items():
        assert same_wire(type(obj).plan(), obj)[0] == "ok"


@pytest.mark.parametrize("obj", RICH, ids=range(len(RICH)))
@pytest.mark.parametrize("model", [Event, FlatEvent])
def test_rich_models_go_to_the_wire_like_to_item(model: type[Event], obj: Event) -> None:
    # Event has a sparse index (keys made under a condition), FlatEvent has none.
    same = model(**obj.model_dump())
    assert same_wire(model.plan(), same)[0] == "ok"


def test_both_models_have_a_generated_wire_encoder() -> None:
    for model in (Event, FlatEvent):
        encoder = wire_encoder(model.plan())
        assert "def to_wire(obj):" in encoder.__singletable_source__  # type: ignore[union-attr]


ADVERSARIAL: list[dict[str, Any]] = [
    # text: lone surrogates (keys refuse them; attributes leave them to the batch), NUL,
    # quotes, backslashes, control characters, non-BMP
    {"actor_id": LONE},
    {"actor_id": "a" + LONE + "b"},
    {"target": LONE},
    {"note": LONE},
    {"note": "\udfff\ud800"},
    {"tags": ["ok", LONE]},
    {"meta": {LONE: "v"}},
    {"meta": {"k": LONE}},
    {"labels": {LONE}},
    {"extras": {"a": [LONE]}},
    {"actor_id": "\x00"},
    {"note": "\x00\x01\x1f\x7f"},
    {"note": '"\\/\b\f\n\r\t'},
    {"target": '\\"'},
    {"note": "é€😀\u2028\u2029"},
    {"meta": {'"\\': "\n"}},
    # numbers: huge, edge Decimals, floats at the ends of DynamoDB's range
    {"count": 10**38 - 1},
    {"count": 10**38},
    {"count": -(10**38)},
    {"count": 10**400},
    {"rank": 10**50},
    {"amount": Decimal("-0")},
    {"amount": Decimal("0E-10")},
    {"amount": Decimal("1E+125")},
    {"amount": Decimal("1E+126")},
    {"amount": Decimal("1E-130")},
    {"amount": Decimal("1E-131")},
    {"amount": Decimal("1." + "1" * 37)},
    {"amount": Decimal("1." + "1" * 38)},
    {"amount": Decimal("NaN")},
    {"amount": Decimal("sNaN")},
    {"amount": Decimal("Infinity")},
    {"ratio": float("nan")},
    {"ratio": -float("inf")},
    {"ratio": 5e-324},
    {"ratio": 1.7976931348623157e308},
    {"ratio": -0.0},
    # empties where refused (a key, a map key, a set inside a list) and where omitted
    {"actor_id": ""},
    {"labels": set()},
    {"scores": frozenset()},
    {"meta": {"": "x"}},
    {"extras": {"a": [set()]}},
    {"blob": b""},
    {"blob": bytes(range(256))},
    {"tags": []},
    {"names": ()},
    # off the fast paths
    {"actor_id": Name("sub#class")},
    {"note": Name("n")},
    {"seq": 10**6},
    {"seq": True},
    {"ts": dt.datetime(2026, 6, 23)},
    {"ts": dt.datetime(2026, 6, 23, tzinfo=dt.timezone(dt.timedelta(hours=-5)))},
    {"session": "not-a-uuid"},
    {"session": uuid.UUID(int=0)},
    {"flag": 1},
    {"inner": Inner(name=LONE)},
    {"inner": Inner.model_construct(name="n", score=Decimal("NaN"), labels=set())},
    {"expires_at": "soon"},
    {"expires_at": dt.datetime(1969, 12, 31, tzinfo=dt.timezone.utc)},
    # sizes: just under and over the item limit
    {"note": "a" * (MAX_ITEM_SIZE - 1000)},
    {"note": "a" * MAX_ITEM_SIZE},
    {"note": "😀" * (MAX_ITEM_SIZE // 4 - 300)},
    {"blob": b"\xff" * (MAX_ITEM_SIZE - 1000)},
    {"actor_id": "x" * 3000},
]


@pytest.mark.parametrize("model", [Event, FlatEvent])
@pytest.mark.parametrize("overrides", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_adversarial_values_go_to_the_wire_like_to_item(
    model: type[Event], overrides: dict[str, Any]
) -> None:
    same_wire(model.plan(), unvalidated(model, **overrides))


def test_a_lone_surrogate_in_an_attribute_gives_no_wire_form() -> None:
    # to_item stores it; the request-wide check (the batch's) must name where it is.
    assert wire_encoder(FlatEvent.plan())(unvalidated(FlatEvent, note=LONE)) is None  # type: ignore[misc]


def test_empty_and_long_keys_are_refused_like_to_item() -> None:
    for path in ("", "p" * 1024, "p" * 1025, "é" * 600, "\x00", '"'):
        same_wire(Path.plan(), Path(account="a", path=path))


@settings(max_examples=60, deadline=None)
@given(
    size=hs.integers(MAX_ITEM_SIZE - 3000, MAX_ITEM_SIZE + 100),
    char=hs.sampled_from(["a", "é", "€", "😀", '"', "\x01"]),
    where=hs.sampled_from(["note", "tags", "meta", "blob", "labels"]),
)
def test_the_size_limit_is_enforced_like_to_item(size: int, char: str, where: str) -> None:
    text = char * (size // len(char.encode("utf-8")))
    value: Any = {
        "note": text,
        "tags": [text[: len(text) // 2], text[len(text) // 2 :]],
        "meta": {"k": text},
        "blob": text.encode("utf-8"),
        "labels": {text},
    }[where]
    obj = FlatEvent(**event(**{where: value}).model_dump())
    same_wire(FlatEvent.plan(), obj)


def test_the_size_bound_never_undercounts() -> None:
    # With the limit at 0 every item goes to to_item: same results as the fast path.
    plan = FlatEvent.plan()
    low = build_wire_encoder(plan, size_limit=0)
    for obj in RICH:
        flat = FlatEvent(**obj.model_dump())
        assert outcome(low, flat) == outcome(wire_encoder(plan), flat)


_TEXT = hs.text(hs.characters(codec=None), max_size=6) | hs.sampled_from(
    [LONE, "\x00", '"', "\\", "é€😀", ""]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    actor_id=_TEXT,
    target=_TEXT,
    note=hs.none() | _TEXT,
    tags=hs.lists(_TEXT, max_size=3),
    meta=hs.dictionaries(_TEXT, _TEXT, max_size=3),
    labels=hs.sets(_TEXT, max_size=3),
    count=hs.none() | hs.integers(-(10**40), 10**40),
    amount=hs.decimals(allow_nan=True, allow_infinity=True),
    ratio=hs.floats(),
    blob=hs.binary(max_size=8),
)
def test_random_values_go_to_the_wire_like_to_item(**values: Any) -> None:
    same_wire(FlatEvent.plan(), unvalidated(FlatEvent, **values))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hs.data(), spec=entity_specs())
def test_generated_entity_classes_go_to_the_wire_like_to_item(
    data: hs.DataObject, spec: EntitySpec
) -> None:
    # Every class shape (templates, key kinds, attribute kinds, optional fields, GSIs,
    # delimiter/escape) gets a wire encoder that agrees with to_item.
    model = build_entity(spec)
    for _ in range(3):
        same_wire(model.plan(), data.draw(entity_instances(spec, model)))


DEEP_KINDS = [kind for kind in ATTRIBUTE_KINDS if kind.name.startswith("deep_")]


@pytest.mark.parametrize("kind", DEEP_KINDS, ids=[kind.name for kind in DEEP_KINDS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hs.data())
def test_values_nested_deeper_than_dynamodb_stores_are_refused_on_every_path(
    kind: AttributeKind, data: hs.DataObject
) -> None:
    # DynamoDB refuses a request holding more than 31 levels of lists and maps in an
    # attribute. The generated encoder, the reference, the wire encoder and the field's
    # codec (what updates encode with) refuse exactly those values, by the field's name.
    model, obj = entity_of_attributes(data, AttributeSpec("a0", kind, optional=False))
    plan = model.plan()
    value = obj.__dict__["a0"]
    too_deep = nesting(value) > 31
    status, message = same_encoding(plan, obj)
    assert same_wire(plan, obj) == (status, message)
    codec = plan.fields["a0"].codec
    try:
        codec.to_av(value)
        by_codec = "ok"
    except ItemTooDeepError as exc:
        by_codec = str(exc)
    if too_deep:
        assert "more than 31 levels deep" in by_codec
        assert by_codec.startswith(codec.where)
        # The keys are encoded first: a key the strategy made unstorable is refused first.
        assert status == "ItemTooDeepError" or status.startswith("Key")
        assert message == by_codec or status.startswith("Key")
    else:
        assert by_codec == "ok"
        assert status == "ok" or status.startswith("Key")


class KeyedMaps(Entity, table=Table("wirekeyed"), pk="K#{kid}", sk="K"):
    kid: str
    texts: dict[str, str] | None = None
    counts: dict[str, int] | None = None
    lists: dict[str, list[int]] | None = None
    inners: dict[str, Inner] | None = None
    anything: dict[str, Any] | None = None


_KEY_CHARS = hs.sampled_from(["k", "é", "€", "😀"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    field=hs.sampled_from(["texts", "counts", "lists", "inners", "anything"]),
    char=_KEY_CHARS,
    nbytes=hs.integers(65_500, 65_560) | hs.integers(1, 70_000),
    nested=hs.booleans(),
)
def test_map_keys_past_dynamodb_name_limit_are_refused_on_every_path(
    field: str, char: str, nbytes: int, nested: bool
) -> None:
    # DynamoDB refuses an attribute name (a map key too) over 65,535 UTF-8 bytes. Every
    # encoding path refuses exactly those keys, naming the field.
    key = "a" * (nbytes % len(char.encode())) + char * (nbytes // len(char.encode()))
    element: Any = {"texts": "v", "counts": 1, "lists": [1], "inners": Inner(name="i")}.get(
        field, {"deeper": {key: 1}} if nested else 1
    )
    value = {"small": element, key: element}
    obj = KeyedMaps.model_construct(kid="k")
    obj.__dict__[field] = value
    status, message = same_encoding(KeyedMaps.plan(), obj)
    assert same_wire(KeyedMaps.plan(), obj) == (status, message)
    if len(key.encode()) > 65_535:
        assert status == "ItemEncodeError"
        assert message.startswith(f"KeyedMaps.{field}")
        assert "UTF-8 bytes" in message
    else:
        assert status == "ok"


class _Blank(enum.Enum):
    EMPTY = ""
    FULL = "f"


_NATIVE = Table("wirenative", indexes=[NativeGSI("ByArea", pk=["tenant", "kind"], sk=["region"])])


class Area(Entity, table=_NATIVE, pk="R#{rid}", sk="R"):
    rid: str
    tenant: str
    region: str | None = None
    kind: _Blank = _Blank.FULL
    blob: bytes | None = None


@pytest.mark.parametrize(
    "values",
    [
        {"tenant": "a"},
        {"tenant": ""},
        {"tenant": "a", "region": ""},
        {"tenant": "a", "region": "r"},
        {"tenant": "a", "kind": _Blank.EMPTY},
        {"tenant": "a", "blob": b""},
        {"tenant": Name("")},
    ],
)
def test_native_gsi_parts_are_refused_empty_like_to_item(values: dict[str, Any]) -> None:
    obj = Area.model_construct(rid="1", **{"region": None, "kind": _Blank.FULL, **values})
    same_wire(Area.plan(), obj)


_ZONES = hs.sampled_from(
    [
        None,
        dt.timezone.utc,
        dt.timezone(dt.timedelta(0), "GMT"),
        TzInfo(0),  # pydantic's, for a datetime it parses from "...Z"
        dt.timezone(dt.timedelta(hours=-5)),
    ]
)


class NaiveKeyed(Entity, table=Table("naive"), pk="N#{rid}", sk="AT#{ts}"):
    """A key datetime whose codec takes naive values as UTC (its attribute stays naive)."""

    rid: str
    ts: Annotated[dt.datetime, KeyFormat(naive="utc")]


@pytest.mark.parametrize("model", [AuditEvent, NaiveKeyed], ids=["aware-key", "naive-utc-key"])
@settings(max_examples=200, deadline=None)
@given(ts=hs.datetimes(timezones=_ZONES | hs.timezones()), seq=hs.integers(0, 999_999))
def test_a_key_datetime_attribute_goes_to_the_wire_like_to_item(
    model: type[Entity], ts: dt.datetime, seq: int
) -> None:
    # The attribute's text is derived from the key's text of the same field (one
    # isoformat): any year, fraction and zone gives to_item's item, or its error.
    plan = model.plan()
    start = dt.datetime(2026, 6, 23, tzinfo=dt.timezone.utc)
    if model is AuditEvent:
        obj: Entity = AuditEvent(actor_id="a", ts=start, seq=seq, action="x", target="y")
    else:
        obj = NaiveKeyed(rid=str(seq), ts=start)
    obj.__dict__["ts"] = ts  # any value, as an assignment without validation leaves it
    same_wire(plan, obj)
    if model is not AuditEvent:
        return
    if ts.tzinfo is dt.timezone.utc:
        body = build_wire_encoder(plan)(obj)
        assert body is not None
        assert orjson.loads(body[1])["ts"] == {"S": ts.isoformat(timespec="microseconds")}


def test_a_key_datetime_is_formatted_once_on_the_wire() -> None:
    source: str = build_wire_encoder(AuditEvent.plan()).__singletable_source__  # type: ignore[attr-defined]
    # One statement formats it: the key codec's (the text orjson gives it, sliced).
    formatting = [line for line in source.splitlines() if "[1:20]" in line or "isoformat(" in line]
    assert len(formatting) == 1
