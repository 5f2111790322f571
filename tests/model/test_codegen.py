"""The generated to_item/from_item (singletable/_codegen.py) against the plain reference.

Every result and every error of the generated functions must equal those of
``EntityPlan._to_item_reference`` / ``_from_item_reference``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Annotated, Any, Literal
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import assume as hs_assume
from hypothesis import strategies as hs
from pydantic import BaseModel, ConfigDict, Field

from singletable import GSI, Entity, IndexKeys, KeyFormat, Table
from singletable.attributes import fastpath as fastpath_module
from singletable.attributes.codecs import AttributeCodec, attribute_codec_for
from singletable.attributes.fastpath import Writer, emit_attribute
from singletable.attributes.size import MAX_ITEM_SIZE, attribute_value_size, item_size
from singletable.errors import ModelDefinitionError
from singletable.examples import sample_items
from singletable.model.codegen import build_item_encoder
from singletable.model.plan import EntityPlan, epoch_seconds
from singletable.testing.strategies import key_text
from tests.strategies import (
    ATTRIBUTE_KINDS,
    AttributeKind,
    AttributeSpec,
    EntitySpec,
    build_entity,
    entity_instances,
    entity_of_attributes,
    entity_specs,
)

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 6, 23, 8, 0, tzinfo=UTC)

table = Table(
    "codegen",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")],
    ttl_attribute="expires",
)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Inner(BaseModel):
    name: str
    score: Decimal | None = None
    labels: set[str] = Field(default_factory=set)


class Name(str):
    pass


class Event(
    Entity,
    table=table,
    pk="ACTOR#{actor_id}",
    sk="EVT#{ts}#{seq}",
    indexes={
        "GSI1": IndexKeys(pk="TARGET#{target}#{level}", sk="{ts}#{session}#{flag}"),
        "GSI2": IndexKeys(pk="G#{group}", sk="{rank}#{amount}#{ratio}#{color}#{day}"),
    },
    ttl="expires_at",
):
    actor_id: str
    ts: dt.datetime
    seq: Annotated[int, KeyFormat(width=6)]
    target: str
    level: Level
    session: uuid.UUID
    flag: bool
    group: str | None = None
    rank: int = 0
    amount: Decimal = Decimal("1.5")
    ratio: float = 0.25
    color: Color = Color.RED
    day: dt.date = dt.date(2026, 6, 23)
    kind: Literal["a", "b"] = "a"
    note: str | None = None
    count: int | None = None
    ok: bool | None = None
    when: dt.datetime | None = None
    blob: bytes = b""
    tags: list[str] = Field(default_factory=list)
    pair: tuple[str, int] = ("x", 1)
    names: tuple[str, ...] = ()
    meta: dict[str, str] = Field(default_factory=dict)
    loose: dict[str, str | None] = Field(default_factory=dict)
    labels: set[str] = Field(default_factory=set)
    scores: frozenset[int] = frozenset()
    inner: Inner | None = None
    anything: Any = None
    extras: dict[str, Any] = Field(default_factory=dict)
    bag: list[Any] = Field(default_factory=list)
    expires_at: dt.datetime | None = None


class FlatEvent(Event, table=table, pk="FLAT#{actor_id}", sk="EVT#{ts}#{seq}"):
    """Event without the sparse index: its items are built by one dict display."""


class Path(Entity, table=table, pk="DRIVE#{account}", sk="{path}"):
    account: str
    path: str


PLAN = Event.plan()
FLAT_PLAN = FlatEvent.plan()


def event(**overrides: Any) -> Event:
    values: dict[str, Any] = {
        "actor_id": "u_8814",
        "ts": T0,
        "seq": 42,
        "target": "doc/1",
        "level": Level.HIGH,
        "session": uuid.UUID(int=7),
        "flag": True,
    }
    values.update(overrides)
    return Event(**values)


def outcome(func: Any, arg: Any) -> tuple[str, Any]:
    try:
        return "ok", func(arg)
    except Exception as exc:  # compared by type and message
        return type(exc).__name__, str(exc)


def same_encoding(plan: EntityPlan, obj: Any) -> tuple[str, Any]:
    generated = outcome(plan.to_item, obj)
    reference = outcome(plan._to_item_reference, obj)
    assert generated == reference
    if generated[0] == "ok":
        assert list(generated[1]) == list(reference[1])  # same attribute order too
    return generated


def same_decoding(plan: EntityPlan, item: Any) -> tuple[str, Any]:
    generated = outcome(plan.from_item, item)
    assert generated == outcome(plan._from_item_reference, item)
    return generated


def test_worked_examples_encode_and_decode_like_the_reference() -> None:
    for obj in sample_items():
        plan = type(obj).plan()
        status, item = same_encoding(plan, obj)
        assert status == "ok"
        assert same_decoding(plan, item) == ("ok", obj)


RICH = [
    event(),
    event(
        actor_id="a#b%c d",
        target="",
        group="g/1",
        rank=-5,
        amount=Decimal("-0.001"),
        ratio=-1e-100,
        color=Color.BLUE,
        note="é€😀",
        count=10**40,
        ok=False,
        when=dt.datetime(2026, 1, 1),
        blob=b"\x00\x01",
        tags=["a", "", "#"],
        pair=("y", -3),
        names=("p", "q"),
        meta={"k": "v", "j": ""},
        loose={"k": None, "j": "x"},
        labels={"x", "y"},
        scores=frozenset({1, 2}),
        inner=Inner(name="n", score=Decimal("2.50"), labels={"z"}),
        anything={"a": [1, "b", None]},
        extras={"s": "é", "i": 3, "b": True, "n": None, "d": {"l": [1, ["t", False]]}},
        bag=["x", 2, False, {"k": [None]}, b"\x00"],
        expires_at=T0 + dt.timedelta(days=30),
    ),
    event(ts=dt.datetime(2026, 6, 23, 10, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))),
    event(ts=dt.datetime(2026, 6, 23, 8, 0, 0, 123456, tzinfo=UTC), seq=0, flag=False),
    event(group="", rank=10**50),
]


@pytest.mark.parametrize("obj", RICH, ids=range(len(RICH)))
def test_rich_models_encode_and_decode_like_the_reference(obj: Event) -> None:
    status, item = same_encoding(PLAN, obj)
    assert status == "ok"
    assert same_decoding(PLAN, item) == ("ok", obj)


def unvalidated(model: type[Event], **overrides: Any) -> Event:
    obj = model(**event().model_dump())
    for name, value in overrides.items():
        obj.__dict__[name] = value
    return obj


@pytest.mark.parametrize("model", [Event, FlatEvent])
@pytest.mark.parametrize(
    "overrides",
    [
        {"seq": 10**6},
        {"seq": -1},
        {"seq": True},
        {"seq": "7"},
        {"ts": dt.datetime(2026, 6, 23)},
        {"ts": dt.datetime(2026, 6, 23, tzinfo=dt.timezone(dt.timedelta(hours=-5)))},
        {"ts": "2026-06-23"},
        {"actor_id": None},
        {"actor_id": Name("sub#class")},
        {"actor_id": "x" * 3000},
        {"target": 5},
        {"session": "not-a-uuid"},
        {"flag": 1},
        {"level": 3},
        {"note": Name("subclass")},
        {"note": 5},
        {"count": True},
        {"count": 1.5},
        {"ok": 0},
        {"when": "2026"},
        {"tags": ["a", 1]},
        {"tags": ("a", Name("b"))},
        {"tags": "abc"},
        {"tags": None},
        {"names": ["a"]},
        {"meta": {"a": 1}},
        {"meta": {1: "a"}},
        {"meta": {Name("k"): Name("v")}},
        {"meta": None},
        {"meta": {"": "empty key"}},
        {"loose": {"a": 1}},
        {"labels": set()},
        {"labels": {1}},
        {"labels": {"a", Name("b")}},
        {"labels": frozenset({"a", "b"})},
        {"labels": ["a"]},
        {"labels": None},
        {"scores": {True}},
        {"scores": {1, 1.5}},
        {"scores": {10**40}},
        {"scores": set()},
        {"extras": {"": 1}},
        {"extras": {1: "a"}},
        {"extras": {"a": {"": 1}}},
        {"extras": {"a": [{2: "b"}]}},
        {"extras": {"a": set()}},
        {"extras": {"a": [set()]}},
        {"extras": {"a": Name("b"), "c": (1, Color.RED, 10**40, float("nan"))}},
        {"extras": {"a": {"b": uuid.UUID(int=1), "c": Inner(name="n")}}},
        {"bag": [{"": 1}]},
        {"bag": [set(), 1]},
        {"bag": ("a", [True, None], {"k": b"v"}, 0.5, (1, "t"))},
        {"bag": {"not": "a list"}},
        {"amount": Decimal("NaN")},
        {"ratio": float("inf")},
        {"group": None, "rank": 1},
    ],
)
def test_bad_values_fail_like_the_reference(model: type[Event], overrides: dict[str, Any]) -> None:
    # Event's items are built field by field (it has a sparse index), FlatEvent's by one
    # dict display with its guards: each fast path's fallback is taken both ways.
    same_encoding(model.plan(), unvalidated(model, **overrides))


def test_empty_and_long_keys_fail_like_the_reference() -> None:
    for path in ("", "p" * 1024, "p" * 1025, "é" * 600):
        same_encoding(Path.plan(), Path(account="a", path=path))


@settings(max_examples=300, deadline=None)
@given(
    actor_id=key_text(max_size=8),
    target=key_text(max_size=8),
    note=hs.none() | hs.text(max_size=5),
    tags=hs.lists(hs.text(max_size=4), max_size=3),
    meta=hs.dictionaries(hs.text(max_size=3), hs.text(max_size=3), max_size=3),
    seq=hs.integers(0, 999_999),
    minutes=hs.integers(-(10**6), 10**6),
)
def test_random_events_encode_and_decode_like_the_reference(
    actor_id: str,
    target: str,
    note: str | None,
    tags: list[str],
    meta: dict[str, str],
    seq: int,
    minutes: int,
) -> None:
    obj = event(
        actor_id=actor_id,
        target=target,
        note=note,
        tags=tags,
        meta=meta,
        seq=seq,
        ts=T0 + dt.timedelta(minutes=minutes),
    )
    status, item = same_encoding(PLAN, obj)
    if status == "ok":
        assert same_decoding(PLAN, item) == ("ok", obj)


@settings(max_examples=60, deadline=None)
@given(
    size=hs.integers(MAX_ITEM_SIZE - 3000, MAX_ITEM_SIZE + 100),
    char=hs.sampled_from(["a", "é", "€", "😀"]),
    where=hs.sampled_from(["note", "tags", "meta", "blob", "labels"]),
)
def test_size_limit_is_enforced_exactly(size: int, char: str, where: str) -> None:
    width = len(char.encode("utf-8"))
    text = char * (size // width)
    value: Any = {
        "note": text,
        "tags": [text[: len(text) // 2], text[len(text) // 2 :]],
        "meta": {"k": text},
        "blob": text.encode("utf-8"),
        "labels": {text},
    }[where]
    obj = event(**{where: value})
    status, result = same_encoding(PLAN, obj)  # the reference computes the exact size
    if status == "ok":
        assert item_size(result) <= MAX_ITEM_SIZE
    else:
        assert status == "ItemTooLargeError"


@pytest.mark.parametrize(
    "change",
    [
        {"note": {"N": "1"}},
        {"note": {"NULL": True}},
        {"count": {"N": "1.5"}},
        {"count": {"N": "x"}},
        {"count": {"S": "1"}},
        {"ok": {"S": "true"}},
        {"ok": {"NULL": True}},
        {"target": {"N": "1"}},
        {"target": None},
        {"seq": None},
        {"ts": {"S": "not a date"}},
        {"session": {"S": "nope"}},
        {"labels": {"L": []}},
        {"tags": {"SS": ["a"]}},
        {"inner": {"M": {"name": {"N": "1"}}}},
        {"actor_id": None, "PK": None},
    ],
)
def test_malformed_items_fail_like_the_reference(change: dict[str, Any]) -> None:
    item = PLAN.to_item(RICH[1])
    for name, av in change.items():
        if av is None:
            item.pop(name, None)
        else:
            item[name] = av
    same_decoding(PLAN, item)


@pytest.mark.parametrize("plan", [PLAN, FLAT_PLAN], ids=["sparse", "flat"])
def test_items_missing_attributes_decode_like_the_reference(plan: EntityPlan) -> None:
    # The generated decoder reads fields back from the keys only when a key field is
    # missing (not whenever a field is): every attribute removed in turn, then pairs of
    # them, key attributes and optional fields included, decodes as the reference does.
    for obj in RICH:
        item = plan.to_item(plan.model(**obj.__dict__))
        names = sorted(item)
        for removed in [(a,) for a in names] + list(zip(names, names[1:] + names[:1], strict=True)):
            same_decoding(plan, {k: v for k, v in item.items() if k not in removed})


@pytest.mark.parametrize("capitals", [0, 1])
@pytest.mark.parametrize("amount", ["1E+200", "1E-200", "1E+5", "NaN", "-Infinity", "0E+3"])
def test_decimals_in_exponent_form_encode_like_the_reference(capitals: int, amount: str) -> None:
    # The Decimal fast path tests the value (finite, adjusted exponent in range), not its
    # text for 'E': with the context's capitals at 0 the text holds 'e', and 1E+200 was
    # stored instead of refused.
    value = Decimal(amount)  # set unvalidated: pydantic refuses NaN on construction
    obj = event(extras={"d": value}).model_copy(update={"amount": value})
    with decimal.localcontext() as context:
        context.capitals = capitals
        same_encoding(PLAN, obj)
        same_encoding(FLAT_PLAN, FlatEvent.model_construct(**obj.__dict__))


def test_generated_source_is_kept_and_readable() -> None:
    PLAN.from_item(PLAN.to_item(RICH[0]))  # generated on first use
    source = PLAN._item_encoder.__singletable_source__  # type: ignore[attr-defined]
    assert "def to_item(obj):" in source
    assert "'EVT#'" in source
    assert "def from_item(item, check=False):" in PLAN._item_decoder.__singletable_source__  # type: ignore[attr-defined]


def test_the_field_by_field_encoder_is_compiled_on_its_first_call() -> None:
    table = Table("lazy-fill")

    class Reading(Entity, table=table, pk="R#{rid}", sk="R"):
        rid: str
        level: float

    def fill_fields() -> Any:
        cells = dict(zip(encode.__code__.co_freevars, encode.__closure__ or (), strict=True))
        return cells["fill_fields"].cell_contents

    encode = build_item_encoder(Reading.plan(), epoch_seconds=epoch_seconds)
    assert encode(Reading(rid="a", level=1.5))["level"] == {"N": "1.5"}
    stub = fill_fields()
    assert not hasattr(stub, "__singletable_source__")  # the fast branch never called it
    off_fast_path = Reading.model_construct(rid="a", level=2)  # an int: the codec converts
    assert encode(off_fast_path) == Reading.plan()._to_item_reference(off_fast_path)
    compiled = fill_fields()
    assert compiled is not stub
    assert "item['level']" in compiled.__singletable_source__
    assert encode(off_fast_path) == Reading.plan()._to_item_reference(off_fast_path)
    assert fill_fields() is compiled  # compiled once


def test_a_class_overriding_model_validate_is_decoded_through_its_override() -> None:
    # The decoder calls the class's validator directly only when model_validate is
    # pydantic's own; an override keeps being called, as the reference calls it.
    table = Table("validate-override")
    seen: list[Any] = []

    class Audited(Entity, table=table, pk="A#{aid}", sk="A"):
        aid: str

        @classmethod
        def model_validate(cls, obj: Any, **kwargs: Any) -> Any:
            seen.append(obj)
            return super().model_validate(obj, **kwargs)

    plan = Audited.plan()
    assert plan.from_item(plan.to_item(Audited(aid="x"))) == Audited(aid="x")
    assert seen == [{"aid": "x"}]
    source = plan._item_decoder.__singletable_source__  # type: ignore[attr-defined]
    assert "__pydantic_validator__" not in source
    PLAN.from_item(PLAN.to_item(RICH[0]))
    assert "__pydantic_validator__" in PLAN._item_decoder.__singletable_source__  # type: ignore[attr-defined]


# -- generated entity classes ------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hs.data(), spec=entity_specs())
def test_generated_entity_classes_encode_and_decode_like_the_reference(
    data: hs.DataObject, spec: EntitySpec
) -> None:
    # Every class shape (template shapes x key kinds x attribute kinds x optional fields x
    # GSIs x delimiter/escape) gets generated code that agrees with the reference path.
    model = build_entity(spec)
    plan = model.plan()
    for _ in range(3):
        obj = data.draw(entity_instances(spec, model))
        status, item = same_encoding(plan, obj)
        if status != "ok":
            continue  # refused the same way by both paths (e.g. an over-long key)
        assert same_decoding(plan, item) == ("ok", obj)
        # Keys parse back into the fields they were built from.
        for template in plan.primary.templates():
            parsed = template.parse(item[template.attribute][template.key_type])
            assert parsed == {name: getattr(obj, name) for name in template.fields}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hs.data(), spec=entity_specs())
def test_the_size_bound_never_undercounts_an_item(data: hs.DataObject, spec: EntitySpec) -> None:
    # The generated encoder measures an item exactly only when its bound (static bytes
    # folded into the limit, plus the counters) exceeds the limit: under any limit below
    # the item's exact size, the item must be measured.
    model = build_entity(spec)
    plan = model.plan()
    obj = data.draw(entity_instances(spec, model))
    status, item = same_encoding(plan, obj)
    hs_assume(status == "ok")
    limit = data.draw(hs.integers(-1, item_size(item) - 1))
    measured: list[Any] = []
    encoder = build_item_encoder(
        plan,
        epoch_seconds=epoch_seconds,
        size_limit=limit,
        check_size=lambda item, where: measured.append(item),
    )
    assert encoder(obj) == item
    assert measured == [item]


def test_an_optional_set_reads_back_none_for_absence_whatever_was_written() -> None:
    # DynamoDB stores no empty set: None and set() are both written as absence. A plain set
    # field reads an empty set back; an Optional one reads None (both paths agree).
    table = Table("optional-sets")

    class Tagged(Entity, table=table, pk="T#{tid}", sk="T"):
        tid: str
        plain: set[str] = Field(default_factory=set)
        maybe: set[str] | None = Field(default_factory=set)

    plan = Tagged.plan()
    written: set[str] | None
    for written in (None, set()):
        status, item = same_encoding(plan, Tagged(tid="t", maybe=written))
        assert status == "ok"
        assert "maybe" not in item
        assert "plain" not in item
        assert same_decoding(plan, item) == ("ok", Tagged(tid="t", plain=set(), maybe=None))
    status, item = same_encoding(plan, Tagged(tid="t", plain={"a"}, maybe={"b"}))
    assert same_decoding(plan, item) == ("ok", Tagged(tid="t", plain={"a"}, maybe={"b"}))


def test_a_required_any_field_holding_none_reads_back_none() -> None:
    table = Table("any-none")

    class Loose(Entity, table=table, pk="L#{lid}", sk="L"):
        lid: str
        anything: Any

    plan = Loose.plan()
    status, item = same_encoding(plan, Loose(lid="x", anything=None))
    assert status == "ok"
    assert "anything" not in item
    assert same_decoding(plan, item) == ("ok", Loose(lid="x", anything=None))


@pytest.mark.parametrize("kind", ATTRIBUTE_KINDS, ids=[k.name for k in ATTRIBUTE_KINDS])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hs.data())
def test_every_attribute_kind_encodes_decodes_and_bounds_its_size_like_the_reference(
    kind: AttributeKind, data: hs.DataObject
) -> None:
    # Each kind has its own fast path (or none): every one is compared with the reference,
    # required and optional, and the generated size bound is never below the exact size
    # (an encoder whose limit is one byte under the item's size must check that item).
    model, obj = entity_of_attributes(
        data, AttributeSpec("a0", kind, False), AttributeSpec("a1", kind, True)
    )
    plan = model.plan()
    status, item = same_encoding(plan, obj)
    if status != "ok":
        return  # refused alike by both paths (out of range, empty map key, ...)
    assert same_decoding(plan, item) == ("ok", obj)


def _fast_path_function(codec: AttributeCodec) -> Callable[[Any], tuple[list[Any], int]]:
    """The codec's emitted fast path as a function: (values it stored, its size bound)."""
    w = Writer(depth=1)
    w("n = 0")
    w("exact = 0")
    w("out = []")
    emit_attribute(w, codec.fast, "x", "out.append({})", codec.where)
    w(f"return out, {w.static} + exact + 4 * n")
    scope = dict(w.values)
    exec("def function(x):\n" + "\n".join(w.lines), scope)
    function: Callable[[Any], tuple[list[Any], int]] = scope["function"]
    return function


@pytest.mark.parametrize("kind", ATTRIBUTE_KINDS, ids=[k.name for k in ATTRIBUTE_KINDS])
@settings(max_examples=60, deadline=None)
@given(data=hs.data())
def test_every_fast_path_stores_what_its_codec_stores_within_its_size_bound(
    kind: AttributeKind, data: hs.DataObject
) -> None:
    codec = attribute_codec_for(kind.annotation, where="Kinds.value")
    encode = _fast_path_function(codec)
    value = data.draw(kind.values)
    hs_assume(value is not None)  # a top-level None is omitted before any codec runs
    expected = outcome(codec.to_av, value)
    got = outcome(encode, value)
    if expected[0] != "ok":
        assert got == expected
        return
    stored, bound = got[1]
    assert stored == ([] if expected[1] is None else [expected[1]])
    if stored:
        assert bound >= attribute_value_size(stored[0])


_TEXT_VALUES = (
    hs.builds(
        lambda value, zero: value.replace(microsecond=0) if zero else value,
        hs.datetimes(timezones=hs.none() | hs.just(dt.timezone.utc) | hs.timezones()),
        hs.booleans(),
    )
    | hs.dates()
    | hs.uuids()
)


@settings(max_examples=400, deadline=None)
@given(value=_TEXT_VALUES, with_orjson=hs.booleans())
def test_datetime_date_and_uuid_fast_paths_store_the_codecs_text_with_or_without_orjson(
    value: dt.date | uuid.UUID, with_orjson: bool
) -> None:
    # orjson writes these values' text where it is installed (the lean extra), isoformat
    # and str where not: the same text as the codec's, at any year, offset and fraction.
    codec = attribute_codec_for(type(value), where="Kinds.value")
    dumps = fastpath_module.orjson_dumps() if with_orjson else None
    with patch.object(fastpath_module, "_orjson_dumps", dumps):
        encode = _fast_path_function(codec)
    stored, _ = encode(value)
    assert stored == [codec.to_av(value)]
    uses_orjson = any(v is fastpath_module.orjson_dumps() for v in encode.__globals__.values())
    assert uses_orjson == with_orjson


def test_the_generated_encoder_becomes_each_class_to_item_and_keeps_classes_apart() -> None:
    # The first to_item installs the class's own encoder as its to_item (no frame of
    # Entity.to_item); a subclass, concrete or abstract, keeps encoding as before.
    table = Table("bind-to-item")

    class Parent(Entity, table=table, pk="P#{pid}", sk="P"):
        pid: str

    class Child(Parent, table=table, pk="C#{pid}", sk="C"):
        pass

    class Shared(Parent):  # abstract: no pk of its own
        pass

    parent, child, shared = Parent(pid="x"), Child(pid="x"), Shared(pid="x")
    assert Parent.__dict__["to_item"] is Entity.to_item
    assert parent.to_item() == Parent.plan()._to_item_reference(parent)
    installed = Parent.__dict__["to_item"]
    assert installed is not Entity.to_item
    assert installed.__doc__ == Entity.to_item.__doc__
    # One compiled code object: the class's method is the plan's encoder with its `own`
    # closure variable true (an instance of another class goes to Entity.to_item).
    encoder = Parent.plan()._item_encoder
    assert installed is not encoder
    assert installed.__code__ is encoder.__code__
    assert "if own and type(obj) is not" in installed.__singletable_source__  # type: ignore[attr-defined]
    assert Parent.plan().to_item(child) == Parent.plan()._to_item_reference(child)
    assert Parent.plan().to_item(child)["PK"] == {"S": "P#x"}  # the plan's own encoding
    assert parent.to_item() == Parent.plan()._to_item_reference(parent)
    assert child.to_item() == Child.plan()._to_item_reference(child)
    assert child.to_item()["PK"] == {"S": "C#x"}
    assert Parent.to_item(child) == child.to_item()  # as Entity.to_item: the object's plan
    for call in (shared.to_item, lambda: Parent.to_item(shared)):
        with pytest.raises(ModelDefinitionError, match="Shared is abstract"):
            call()

    class Custom(Entity, table=table, pk="K#{pid}", sk="K"):
        pid: str

        def to_item(self) -> dict[str, Any]:
            return {"custom": {"S": self.pid}}

    class CustomChild(Custom, table=table, pk="KC#{pid}", sk="K"):
        pass

    for obj in (Custom(pid="y"), CustomChild(pid="y")):
        obj.plan().to_item(obj)  # generates the encoder: the override stays
        assert obj.to_item() == {"custom": {"S": "y"}}


def _keyed_on(delimiter: str, escape: str) -> type[Entity]:
    keyed_table = Table(f"keyed-{ord(delimiter)}-{ord(escape)}", delimiter=delimiter, escape=escape)
    d = delimiter

    class Keyed(Entity, table=keyed_table, pk=f"A{d}{{a}}", sk=f"{{b}}{d}B{d}{{c}}"):
        a: str
        b: str
        c: str

    return Keyed


_DELIMITERS = [(d, e) for d in "!#$" for e in "#$%&'()*+,-./" if d < e]
_KEYED = {pair: _keyed_on(*pair) for pair in _DELIMITERS}


@settings(max_examples=400, deadline=None)
@given(
    pair=hs.sampled_from(_DELIMITERS),
    values=hs.lists(
        hs.one_of(
            key_text(max_size=12),
            hs.uuids().map(str),
            hs.text(hs.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=2).map(
                lambda lone: "k" + lone
            ),
        ),
        min_size=3,
        max_size=3,
    ),
)
def test_key_text_is_escaped_like_the_reference_for_any_delimiter_and_escape(
    pair: tuple[str, str], values: list[str]
) -> None:
    # The generated encoder proves most key text needs no escaping without the regex
    # (identifiers, ASCII text with no byte at or below the escape character); text it
    # cannot prove so, lone surrogates included, must still come out as the reference's.
    model = _KEYED[pair]
    a, b, c = values
    obj = model.model_construct(a=a, b=b, c=c)
    same_encoding(model.plan(), obj)


@pytest.mark.parametrize("strict", ["field", "model", "lax"])
def test_empty_sets_and_frozensets_read_back_in_their_own_type(strict: str) -> None:
    # DynamoDB stores no empty set: both are written as absence, and read back as the
    # field's own empty container, which a strict frozenset field needs (it refuses set()).
    table = Table("empty-sets")
    kind = Field(strict=True) if strict == "field" else Field()

    class Holder(Entity, table=table, pk="H#{hid}", sk="H", name=f"Holder{strict}"):
        model_config = ConfigDict(strict=True) if strict == "model" else ConfigDict(strict=False)
        hid: str
        frozen: Annotated[frozenset[int], kind] = frozenset({1})
        plain: Annotated[set[str], kind] = Field(default_factory=lambda: {"x"})

    obj = Holder(hid="h", frozen=frozenset(), plain=set())
    item = obj.to_item()
    assert "frozen" not in item
    assert "plain" not in item
    plan = Holder.plan()
    for decode in (plan._from_item_reference, plan.from_item):
        back = decode(item)
        assert back == obj
        assert type(back.frozen) is frozenset
        assert type(back.plain) is set
