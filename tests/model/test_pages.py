"""singletable.model.pages: a response body decoded into entities, as the item decoder would.

Every item the page decoder hands back as an entity must be the very result the plan's
generated decoder gives for that item (value, field types, tzinfo classes, fields set);
every other item must come back as the attribute-value dict it was sent as.
"""

from __future__ import annotations

import enum
import json
import re
import uuid
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import event as label
from hypothesis import strategies as hs
from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    computed_field,
    field_validator,
    model_validator,
)

from singletable import Entity, KeyFormat, Table
from singletable.io.lean import has_binary_keys
from singletable.model.pages import PageDecoder, entity_schema, page_decoder
from singletable.model.plan import EntityPlan
from singletable.types import Item
from tests.comparisons import same_result
from tests.strategies import EntitySpec, build_entity, entity_instances, entity_specs

table = Table("pages")
T0 = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)
#: A number in exponent form, anywhere in an item's JSON.
EXPONENT = re.compile(r"\d[eE][+-]?\d")


class Event(Entity, table=table, pk="ACTOR#{actor_id}", sk="EVT#{ts}#{seq}"):
    actor_id: str
    ts: datetime
    seq: Annotated[int, KeyFormat(width=6)]
    action: str
    ip: str | None = None
    note: str = "none"
    score: float = 0.0
    flags: set[str] = Field(default_factory=set)
    maybe: str | None
    details: dict[str, str] = Field(default_factory=dict)


def event(i: int, **changes: Any) -> Event:
    values: dict[str, Any] = {
        "actor_id": "u1",
        "ts": T0 + timedelta(minutes=i),
        "seq": i,
        "action": "login",
        "ip": f"198.51.100.{i}",
        "flags": {"a", "b"},
        "maybe": "m",
        "details": {"client": "web"},
        **changes,
    }
    return Event(**values)


def body_of(items: list[Item], **rest: Any) -> bytes:
    return json.dumps({"Items": items, "Count": len(items), **rest}).encode()


def check_page(plan: EntityPlan, items: list[Item]) -> list[Any]:
    """Decode a page of ``items`` and check each result against the plan's decoder."""
    decoder = page_decoder(plan)
    assert decoder is not None
    page = decoder(body_of(items))
    assert page is not None
    assert page["Count"] == len(items)
    results = page["Items"]
    assert len(results) == len(items)
    for item, result in zip(items, results, strict=True):
        if result.__class__ is dict:
            assert result == item  # left to the item decoder, as sent
            continue
        assert item[table.entity_attribute] == {"S": plan.name}
        assert item[table.version_attribute] == {"N": str(plan.version)}
        expected = plan._item_decoder(item, True)
        assert same_result(result, expected), (item, result, expected)
    return list(results)


def test_whole_items_are_decoded_from_the_body() -> None:
    events = [event(i) for i in range(20)] + [event(20, ip=None, note="x", flags=set())]
    results = check_page(Event.plan(), [e.to_item() for e in events])
    assert results[:20] == events[:20]
    # The datetime comes out of the codec's own parse, with its timezone.utc.
    assert all(r.ts.tzinfo is timezone.utc for r in results[:20])


def test_the_rest_of_the_response_is_kept() -> None:
    decoder = page_decoder(Event.plan())
    assert decoder is not None
    last = {"PK": {"S": "ACTOR#u1"}, "SK": {"S": "EVT#x"}}
    capacity = {"TableName": "pages", "CapacityUnits": 0.5}
    page = decoder(body_of([event(1).to_item()], LastEvaluatedKey=last, ConsumedCapacity=capacity))
    assert page is not None
    assert page["LastEvaluatedKey"] == last
    assert page["ConsumedCapacity"] == capacity
    assert decoder(b'{"Count": 0}') == {"Count": 0}


@pytest.mark.parametrize(
    "change",
    [
        {"_et": {"S": "Other"}},  # another entity's item
        {"_ev": {"N": "2"}},  # another version's
        {"_ev": None},  # no version: the item decoder's call
        {"seq": None},  # a key field read from the keys
        {"note": {"NULL": True}},  # another type than the decoder's: not the default
        {"note": {"N": "5"}},
        {"ts": {"S": "not a time"}},  # refused: the item decoder's error
        {"ts": {"N": "5"}},
        {"seq": {"S": "x"}},
        {"details": {"L": []}},
        {"action": {"BOOL": True}},
    ],
)
def test_items_the_decoder_must_handle_come_back_as_sent(change: dict[str, Any]) -> None:
    items = [event(i).to_item() for i in range(3)]
    odd = dict(items[1])
    for attribute, value in change.items():
        if value is None:
            del odd[attribute]
        else:
            odd[attribute] = value
    items[1] = odd
    results = check_page(Event.plan(), items)
    assert results[1] == odd
    assert results[0].__class__ is Event
    assert results[2].__class__ is Event


@pytest.mark.parametrize(
    "change",
    [
        {"score": {"N": "NaN"}},
        {"seq": {"N": "1E+1"}},
        {"score": {"N": "-0"}},
        {"ip": {"NULL": True}},
        {"maybe": None},  # a required nullable field read as None
        {"flags": None},  # a set read as an empty set
        {"maybe": None, "flags": None, "ip": None, "details": None},
    ],
)
def test_odd_stored_values_decode_alike_on_either_path(change: dict[str, Any]) -> None:
    item = {**event(1).to_item(), **change}
    for attribute in [a for a, v in change.items() if v is None]:
        del item[attribute]
    check_page(Event.plan(), [item])


def test_absent_sets_and_nullables_are_filled_from_the_body_as_by_the_item_decoder() -> None:
    # Absent, a set reads as an empty set whatever its default, and a required nullable
    # field as None; both count as set, as the item decoder hands them to pydantic.
    class Filled(Entity, table=table, pk="F#{fid}", sk="F"):
        fid: str
        marks: set[str] = Field(default_factory=lambda: {"default"})
        strict_marks: Annotated[frozenset[int], Field(strict=True)] = frozenset({1})
        maybe: str | None
        maybe_set: set[str] | None = None

    item = {
        k: v
        for k, v in Filled(fid="f", maybe=None).to_item().items()
        if k not in ("marks", "strict_marks", "maybe", "maybe_set")
    }
    (result,) = check_page(Filled.plan(), [item])
    assert result.__class__ is Filled
    assert result.model_fields_set == Filled.plan()._item_decoder(item, True).model_fields_set


def test_a_body_pydantic_refuses_outside_the_items_is_left_to_the_caller() -> None:
    decoder = page_decoder(Event.plan())
    assert decoder is not None
    assert decoder(b'{"Items": 5}') is None
    assert decoder(b"not json") is None
    # A number where the datetime's text is stored: the parse's TypeError, the page the
    # caller's (its item decoder reports the item).
    assert decoder(body_of([{**event(1).to_item(), "ts": {"S": 5}}])) is None


def test_models_validating_differently_from_an_item_get_no_page_decoder() -> None:
    class Before(Entity, table=table, pk="B#{bid}", sk="B"):
        bid: str

        @model_validator(mode="before")
        @classmethod
        def seen(cls, data: Any) -> Any:
            return data

    class OwnValidate(Entity, table=table, pk="O#{oid}", sk="O"):
        oid: str

        @classmethod
        def model_validate(cls, obj: Any, **kwargs: Any) -> OwnValidate:
            return super().model_validate(obj, **kwargs)

    for model in (Before, OwnValidate):
        assert entity_schema(model.plan()) is None
        assert page_decoder(model.plan()) is None


class Texts(Entity, table=table, pk="T#{tid}", sk="T"):
    tid: str
    details: dict[str, str] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    short: dict[str, Annotated[str, Field(max_length=3)]] = Field(default_factory=dict)
    few: Annotated[list[str], Field(max_length=2)] = Field(default_factory=list)
    required_map: dict[str, str]


def _texts(**changes: Any) -> Item:
    item = Texts(
        tid="t1",
        details={"a": "x", "b": "é"},
        tags=["p", "q"],
        short={"k": "abc"},
        few=["1"],
        required_map={},
    ).to_item()
    for attribute, value in changes.items():
        if value is None:
            del item[attribute]
        else:
            item[attribute] = value
    return item


def test_text_maps_and_lists_are_read_from_the_body_without_a_python_call() -> None:
    schema, _ = entity_schema(Texts.plan()) or pytest.fail("no page decoder")
    fields = schema["schema"]["fields"]
    for name, container in (("details", "M"), ("tags", "L"), ("short", "M"), ("few", "L")):
        assert fields[name]["validation_alias"] == [[name, container], [name]], name
    results = check_page(Texts.plan(), [_texts(), _texts(details=None, tags=None)])
    assert [r.__class__ for r in results] == [Texts, Texts]
    assert results[0].details == {"a": "x", "b": "é"}
    assert (
        results[1].model_fields_set
        == Texts.plan()._item_decoder(_texts(details=None, tags=None), True).model_fields_set
    )


@pytest.mark.parametrize(
    "change",
    [
        {"details": {"M": {"a": {"N": "1"}}}},  # another type of entry
        {"details": {"M": {"a": {"S": "x", "N": "1"}}}},  # not one attribute value
        {"details": {"M": {"a": {"NULL": True}}}},
        {"details": {"L": [{"S": "x"}]}},  # a list where a map is stored
        {"details": {"NULL": True}},
        {"details": {"M": {}}},
        {"tags": {"L": [{"S": "x"}, {"N": "1"}]}},
        {"tags": {"M": {"S": {"S": "x"}}}},  # a map where a list is stored
        {"tags": {"SS": ["x"]}},
        {"tags": {"L": []}},
        {"short": {"M": {"k": {"S": "abcd"}}}},  # the value's constraint
        {"few": {"L": [{"S": "1"}, {"S": "2"}, {"S": "3"}]}},  # the list's constraint
        {"required_map": None},  # required: the item decoder's to refuse
        {"required_map": {"M": {"": {"S": ""}}}},
    ],
)
def test_odd_text_maps_and_lists_decode_alike_on_either_path(change: dict[str, Any]) -> None:
    items = [_texts(), _texts(**change), _texts()]
    results = check_page(Texts.plan(), items)
    assert results[0].__class__ is Texts
    assert results[2].__class__ is Texts


def test_stored_nulls_decode_from_the_body() -> None:
    """A NULL (None where the default is not None) is read as the item decoder reads it.

    Inside the field's ``nullable`` part, so an ``after`` validator sees ``None`` too.
    """
    seen: list[Any] = []

    class Nullable(Entity, table=table, pk="N#{nid}", sk="N"):
        nid: str
        text: str | None = "t"
        count: int | None = 5
        ratio: float | None = 0.5
        flag: bool | None = True
        amount: Decimal | None = Decimal("1.5")
        day: date | None = date(2026, 1, 1)
        when: datetime | None = T0
        tags: list[str] | None = Field(default_factory=lambda: ["a"])
        checked: str | None = "c"
        required: str | None

        @field_validator("checked", mode="after")
        @classmethod
        def record(cls, value: Any) -> Any:
            seen.append(value)
            return value

    nulls = {name: None for name in Nullable.model_fields if name != "nid"}
    items = [Nullable(nid=str(i), **nulls).to_item() for i in range(3)]
    assert all(items[0][name] == {"NULL": True} for name in nulls if name != "required")
    seen.clear()
    results = check_page(Nullable.plan(), items)
    assert seen == [None] * 6  # the page's three and the item decoder's three (check_page)
    assert [r.__class__ for r in results] == [Nullable] * 3  # none left to the item decoder
    assert results == [Nullable(nid=str(i), **nulls) for i in range(3)]
    # Not a NULL, though under "NULL": the item decoder's to refuse.
    odd = {**items[0], "count": {"NULL": False}}
    assert check_page(Nullable.plan(), [odd]) == [odd]


def test_field_validators_see_what_they_see_from_the_item_decoder() -> None:
    seen: list[Any] = []

    class Checked(Entity, table=table, pk="C#{cid}", sk="C"):
        cid: str
        when: datetime
        count: int

        @field_validator("when", "count", mode="before")
        @classmethod
        def record(cls, value: Any) -> Any:
            seen.append(value)
            return value

    item = Checked(cid="c", when=T0, count=3).to_item()
    seen.clear()
    expected = Checked.plan()._item_decoder(item, True)
    from_item = list(seen)
    seen.clear()
    decoder = page_decoder(Checked.plan())
    assert decoder is not None
    page = decoder(body_of([item]))
    assert page is not None
    assert same_result(page["Items"][0], expected)
    assert seen == from_item
    assert [type(v) for v in seen] == [type(v) for v in from_item]
    assert expected == Checked(cid="c", when=T0, count=3)


def test_the_validator_is_built_once_and_the_class_stays_complete() -> None:
    decoder = page_decoder(Event.plan())
    assert isinstance(decoder, PageDecoder)
    assert page_decoder(Event.plan()) is decoder
    decoder(body_of([event(1).to_item()]))
    assert Event.__pydantic_complete__ is True
    assert Event.model_validate(event(2).model_dump()) == event(2)


# -- generated entity classes ------------------------------------------------------------


def _mutations(item: Mapping[str, Any]) -> hs.SearchStrategy[Item]:
    """``item`` as written, or with one attribute dropped, nulled or of another type."""
    names = sorted(item)
    other = hs.sampled_from([{"NULL": True}, {"S": "x"}, {"N": "1"}, {"BOOL": False}, {"L": []}])

    def dropped(name: str) -> Item:
        return {k: v for k, v in item.items() if k != name}

    def replaced(args: tuple[str, Any]) -> Item:
        return {**item, args[0]: args[1]}

    return hs.one_of(
        hs.just(dict(item)),
        hs.sampled_from(names).map(dropped),
        hs.tuples(hs.sampled_from(names), other).map(replaced),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hs.data(), spec=entity_specs())
def test_generated_entity_classes_decode_from_the_body_like_the_item_decoder(
    data: hs.DataObject, spec: EntitySpec
) -> None:
    model = build_entity(spec)
    plan = model.plan()
    if page_decoder(plan) is None:
        label("no page decoder")
        return  # (validators of the spec's own: the item decoder's alone)
    items: list[Item] = []
    for _ in range(4):
        obj = data.draw(entity_instances(spec, model))
        try:
            item = plan.to_item(obj)
        except ValueError:
            continue  # refused on the way in (an over-long key, say)
        items.append(data.draw(_mutations(item)))
        items.append(item)
    if has_binary_keys(json.dumps(items, default=lambda b: b.hex()).encode()):
        label("binary values: parsed")
        return  # the lean transport parses a body with binary values (`io.lean._parse`)
    note(json.dumps(items)[:2000])
    results = check_page(plan, items)
    label(f"{sum(r.__class__ is model for r in results)} of {len(results)} from the body")
    # Items written whole come back as entities wherever the item decoder takes them
    # without reading keys, filling absences, decoding a key field's NULL (a sparse index
    # key's field, None over a default) or numbers in exponent form (1E+98: text only the
    # codec reads): at least those of none of these. Other fields' NULLs included.
    keys = {plan.fields[name].attribute for name in plan.key_fields()}
    for item, result in zip(items[1::2], results[1::2], strict=True):
        stored = {f.attribute for f in plan.fields.values()}
        text = json.dumps([item[a] for a in stored if a in item])
        null_key = any(item.get(a) == {"NULL": True} for a in keys)
        if stored <= item.keys() and not null_key and not EXPONENT.search(text):
            assert result.__class__ is model, item


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hs.data(), spec=entity_specs(), mode=hs.sampled_from(["before", "wrap", "plain"]))
def test_validators_that_see_the_input_first_see_what_the_item_decoder_hands_them(
    data: hs.DataObject, spec: EntitySpec, mode: Literal["before", "wrap", "plain"]
) -> None:
    """Generated classes with a recording field validator on every attribute field.

    Items as written and mutated (an attribute dropped, nulled or of another type): an
    item the page gives as an entity must be the item decoder's result, with the
    validator handed the same inputs, in the same order; one the item decoder refuses
    must come back as sent.
    """
    seen: list[str] = []

    def record(cls: Any, value: Any) -> Any:
        seen.append(repr(value))
        return value

    def record_around(cls: Any, value: Any, handler: Any) -> Any:
        seen.append(repr(value))
        return handler(value)

    names = [a.name for a in spec.attributes]
    assume(names)
    function = record_around if mode == "wrap" else record
    validator = field_validator(*names, mode=mode)(classmethod(function))
    model = build_entity(spec, validators={"record": validator})
    plan = model.plan()
    decoder = page_decoder(plan)
    assert decoder is not None
    for _ in range(3):
        try:
            item = plan.to_item(data.draw(entity_instances(spec, model)))
        except ValueError:
            continue  # refused on the way in, or by the validator (plain: no coercion)
        for case in (item, data.draw(_mutations(item))):
            if has_binary_keys(json.dumps(case, default=lambda b: b.hex()).encode()):
                continue  # parsed, not decoded from the body (`io.lean._parse`)
            body = body_of([case])
            seen.clear()
            try:
                expected: Any = plan._item_decoder(case, True)
            except ValueError as exc:
                expected = exc
            from_item = list(seen)
            seen.clear()
            page = decoder(body)
            assert page is not None
            (result,) = page["Items"]
            if result.__class__ is dict:
                assert result == case  # left to the item decoder, as sent
                continue
            assert not isinstance(expected, Exception), (case, result, expected)
            assert same_result(result, expected), (case, result, expected)
            assert seen == from_item, case


def test_private_attributes_post_init_and_computed_fields_come_out_alike() -> None:
    class Rich(Entity, table=table, pk="R#{rid}", sk="R"):
        rid: str
        n: int = 0
        _seen: int = PrivateAttr(default=0)

        def model_post_init(self, context: Any) -> None:
            self._seen = self.n * 2

        @computed_field  # type: ignore[prop-decorator]
        @property
        def double(self) -> int:
            return self.n * 2

    item = Rich(rid="a", n=3).to_item()
    (result,) = check_page(Rich.plan(), [item])
    assert result.__class__ is Rich
    assert result.__pydantic_private__ == {"_seen": 6}
    assert result.model_dump() == {"rid": "a", "n": 3, "double": 6}


class Color(enum.Enum):
    RED = "red"


@pytest.mark.parametrize("strict", [True, False])
def test_strict_and_lax_models_of_many_types_decode_alike(strict: bool) -> None:
    # Strict fields get what the item decoder converts (a before-validator); lax ones the
    # stored text, which pydantic parses as it would have from the decoder's dict.
    class Typed(Entity, table=table, pk="T#{tid}", sk="T", name=f"Typed{strict}"):
        model_config = ConfigDict(strict=True) if strict else ConfigDict(strict=False)
        tid: str
        when: datetime
        day: date
        at: time
        uid: uuid.UUID
        amount: Decimal
        ratio: float
        count: int
        color: Color
        tags: set[str] = Field(default_factory=set)
        numbers: list[int] = Field(default_factory=list)
        weights: dict[str, float] = Field(default_factory=dict)
        nested: list[dict[str, list[int]]] = Field(default_factory=list)
        pair: tuple[int, str] = (0, "")
        frozen: frozenset[int] = frozenset()

    obj = Typed(
        tid="a",
        when=T0,
        day=date(2026, 1, 2),
        at=time(1, 2, 3),
        uid=uuid.UUID(int=7),
        amount=Decimal("1.50"),
        ratio=-2.5,
        count=3,
        color=Color.RED,
        tags={"x", "y"},
        numbers=[1, -2],
        weights={"a": 1.5},
        nested=[{"k": [1]}],
        pair=(1, "x"),
        frozen=frozenset({4}),
    )
    (result,) = check_page(Typed.plan(), [obj.to_item()])
    assert result.__class__ is Typed
    assert result == obj
