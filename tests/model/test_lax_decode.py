"""Stored number and UUID text handed to pydantic (issue 24) decodes like the reference.

The generated decoder gives lax fields the stored text of their numbers and lets pydantic
parse it once; these tests hold it to `EntityPlan._from_item_reference` (which converts
every value with the field's codec first) on hostile stored text, and check that user
validators, strict fields and fields allowing NaN still see converted values.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Annotated, Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from singletable import Entity, ItemDecodeError, Table

table = Table("lax-decode")


class Reading(Entity, table=table, pk="R#{rid}", sk="R"):
    rid: str
    count: int
    ratio: float
    amount: Decimal
    maybe: Decimal | None = None
    samples: list[float]
    ids: set[int] = pydantic.Field(default_factory=set)
    parts: dict[str, Decimal]
    ref: uuid.UUID


def outcome(func: Any, arg: Any) -> tuple[str, Any]:
    try:
        return "ok", func(arg)
    except Exception as exc:  # compared by type and message
        return type(exc).__name__, str(exc)


def same(generated: tuple[str, Any], reference: tuple[str, Any]) -> bool:
    # repr as well: a NaN float equals itself only as text (and sets print in any order).
    return generated == reference or repr(generated) == repr(reference)


READING = Reading(
    rid="r1",
    count=3,
    ratio=0.5,
    amount=Decimal("1.25"),
    samples=[1.5, -2.0],
    ids={1, 2},
    parts={"a": Decimal("2.5")},
    ref=uuid.UUID(int=7),
)

# Canonical numbers and what a hand-edited or foreign item may hold instead.
number_texts = hs.one_of(
    hs.integers(-(10**40), 10**40).map(str),
    hs.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    hs.floats(allow_nan=False, allow_infinity=False).map(repr),
    hs.sampled_from(
        ["1E+2", "1e2", "5.0", " 7 ", "1_0", "-0", "0.0", "NaN", "-Infinity", "inf", "x", ""]
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    field=hs.sampled_from(["count", "ratio", "amount", "maybe", "samples", "ids", "parts"]),
    text=number_texts,
)
def test_any_stored_number_text_decodes_like_the_reference(field: str, text: str) -> None:
    plan = Reading.plan()
    item: dict[str, Any] = plan.to_item(READING)
    forms: dict[str, Any] = {
        "samples": {"L": [{"N": "1.5"}, {"N": text}]},
        "ids": {"NS": [text, "1"]},
        "parts": {"M": {"a": {"N": text}}},
    }
    item[field] = forms.get(field, {"N": text})
    assert same(outcome(plan.from_item, item), outcome(plan._from_item_reference, item))


@settings(max_examples=300, deadline=None)
@given(
    changes=hs.dictionaries(
        hs.sampled_from(["count", "ratio", "amount", "maybe", "samples", "parts", "ref"]),
        hs.one_of(
            number_texts.map(lambda text: {"N": text}),
            hs.sampled_from([{"S": "x"}, {"NULL": True}, {"L": []}, {}]),
        ),
        min_size=2,
    )
)
def test_several_bad_fields_report_the_first_as_the_reference_does(
    changes: dict[str, Any],
) -> None:
    # A lax field's text is parsed after every field is read: a codec refusing a later
    # field must not be reported in its place.
    plan = Reading.plan()
    item: dict[str, Any] = {**plan.to_item(READING), **changes}
    assert same(outcome(plan.from_item, item), outcome(plan._from_item_reference, item))


def test_lax_fields_hand_pydantic_the_stored_text_and_guarded_ones_do_not() -> None:
    Reading.from_item(Reading.plan().to_item(READING))
    source = Reading.plan()._item_decoder.__singletable_source__  # type: ignore[attr-defined]
    assert "data['count'] = av['N']" in source
    assert "data['samples'] = [e1['N'] for e1 in av['L']]" in source
    guarded = Guarded.plan()
    with pytest.raises(ItemDecodeError, match="Field required"):  # generated all the same
        guarded.from_item({"PK": {"S": "G#g"}, "SK": {"S": "G"}, "checked": {"N": "1"}})
    source = guarded._item_decoder.__singletable_source__  # type: ignore[attr-defined]
    assert "av['N']" not in source.replace("(av['N'])", "")


@pytest.mark.parametrize(("text", "value"), [("1E+2", 100), ("5.0", 5), ("-0", 0)])
def test_int_text_pydantic_refuses_is_read_by_the_codec(text: str, value: int) -> None:
    item = Reading.plan().to_item(READING)
    item["count"] = {"N": text}
    assert Reading.from_item(item).count == value


def test_stored_nan_is_refused_naming_the_field() -> None:
    item = Reading.plan().to_item(READING)
    item["amount"] = {"N": "NaN"}
    with pytest.raises(
        ItemDecodeError, match=r"Reading\.amount: stored number 'NaN' is not finite"
    ):
        Reading.from_item(item)


seen: list[Any] = []


def _record(value: Any) -> Any:
    seen.append(value)
    return value


class Guarded(Entity, table=table, pk="G#{gid}", sk="G"):
    gid: str
    checked: int
    wrapped: Annotated[Decimal, pydantic.BeforeValidator(_record)]
    strict: Annotated[int, pydantic.Strict()]
    strict_list: list[Annotated[float, pydantic.Strict()]]
    ref: uuid.UUID

    @pydantic.field_validator("checked", mode="before")
    @classmethod
    def _checked(cls, value: Any) -> Any:
        return _record(value)


class NanAllowed(Entity, table=table, pk="N#{nid}", sk="N"):
    nid: str
    nan_ok: Annotated[Decimal, pydantic.Field(allow_inf_nan=True)]
    nan_list: list[Annotated[Decimal, pydantic.Field(allow_inf_nan=True)]]


class WholeModel(Entity, table=table, pk="W#{wid}", sk="W"):
    wid: str
    count: int

    @pydantic.model_validator(mode="before")
    @classmethod
    def _whole(cls, data: Any) -> Any:
        _record(data["count"])
        return data


def test_user_validators_see_converted_values_not_stored_text() -> None:
    guarded = Guarded(
        gid="g",
        checked=4,
        wrapped=Decimal("1.5"),
        strict=2,
        strict_list=[1.5],
        ref=uuid.UUID(int=3),
    )
    seen.clear()
    assert Guarded.from_item(guarded.to_item()) == guarded
    assert seen == [4, Decimal("1.5")]
    item = WholeModel(wid="w", count=9).to_item()
    seen.clear()
    assert WholeModel.from_item(item).count == 9
    assert seen == [9]


def test_strict_and_nan_allowing_fields_decode_like_the_reference() -> None:
    plan = Guarded.plan()
    item = plan.to_item(
        Guarded(
            gid="g",
            checked=1,
            wrapped=Decimal("1"),
            strict=2,
            strict_list=[0.25],
            ref=uuid.UUID(int=1),
        )
    )
    for field, av in [
        ("strict", {"N": "7"}),
        ("strict_list", {"L": [{"N": "0.5"}]}),
    ]:
        changed = {**item, field: av}
        assert same(outcome(plan.from_item, changed), outcome(plan._from_item_reference, changed))
    decoded = plan.from_item({**item, "strict_list": {"L": [{"N": "0.5"}]}})
    assert isinstance(decoded, Guarded)
    assert decoded.strict_list == [0.5]
    # The codec refuses a stored NaN, though pydantic would take it for these fields.
    nan_plan = NanAllowed.plan()
    item = nan_plan.to_item(NanAllowed(nid="n", nan_ok=Decimal(1), nan_list=[Decimal(2)]))
    nan_forms: list[tuple[str, Any]] = [
        ("nan_ok", {"N": "NaN"}),
        ("nan_list", {"L": [{"N": "NaN"}]}),
    ]
    for field, av in nan_forms:
        with pytest.raises(ItemDecodeError, match="stored number 'NaN' is not finite"):
            nan_plan.from_item({**item, field: av})


class Part(pydantic.BaseModel):
    sku: str
    qty: int
    price: Decimal | None = None
    note: str | None = None


class Checked(pydantic.BaseModel):
    qty: int

    @pydantic.field_validator("qty", mode="before")
    @classmethod
    def _qty(cls, value: Any) -> Any:
        return _record(value)


class Order(Entity, table=table, pk="O#{oid}", sk="O"):
    oid: str
    main: Part
    parts: list[Part]
    spare: Part | None = None
    checked: list[Checked]


ORDER = Order(
    oid="o",
    main=Part(sku="a", qty=1, price=Decimal("2.5")),
    parts=[Part(sku="b", qty=2), Part(sku="c", qty=3, note="x")],
    checked=[Checked(qty=4)],
)

stored_values = hs.one_of(
    hs.sampled_from(
        [{"NULL": True}, {"NULL": False}, {"N": "1"}, {"N": "1E+1"}, {"S": "z"}, {}, None, "x"]
    ),
    number_texts.map(lambda text: {"N": text}),
)


@settings(max_examples=300, deadline=None)
@given(
    where=hs.sampled_from(["main", "parts", "spare"]),
    field=hs.sampled_from(["sku", "qty", "price", "note", "missing"]),
    value=stored_values,
)
def test_nested_models_decode_like_the_reference(where: str, field: str, value: Any) -> None:
    # The generated decoder writes nested models as one dict display; any stored form it
    # cannot take (a missing field, NULL where not Optional, wrong type) goes to the codec.
    plan = Order.plan()
    item = plan.to_item(ORDER.model_copy(update={"spare": Part(sku="s", qty=9)}))
    entries = item[where]["L"][1]["M"] if where == "parts" else item[where]["M"]
    if field == "missing":
        entries.pop("qty")
    elif value is None:
        entries.pop(field)
    else:
        entries[field] = value
    assert same(outcome(plan.from_item, item), outcome(plan._from_item_reference, item))


def test_nested_models_are_inlined_and_their_validators_see_converted_values() -> None:
    plan = Order.plan()
    item = plan.to_item(ORDER)
    seen.clear()
    assert plan.from_item(item) == ORDER
    assert seen == [4]  # Checked.qty: validated once, as an int
    source = plan._item_decoder.__singletable_source__  # type: ignore[attr-defined]
    assert "data['main'] = {'sku': (m" in source


class Tagged(Entity, table=table, pk="T#{tid}", sk="T"):
    tid: str
    tags: set[str] = pydantic.Field(default_factory=set)
    frozen: frozenset[str] = frozenset()
    numbers: set[Decimal] = pydantic.Field(default_factory=set)
    maybe: set[str] | None = None
    strict: Annotated[set[str], pydantic.Strict()] = pydantic.Field(default_factory=set)
    checked: Annotated[set[str], pydantic.BeforeValidator(_record)] = pydantic.Field(
        default_factory=set
    )


SET_FIELDS = {"tags": "SS", "frozen": "SS", "numbers": "NS", "maybe": "SS", "strict": "SS"}


def test_lax_sets_hand_pydantic_the_stored_list_and_an_empty_tuple_when_absent() -> None:
    Tagged.from_item(Tagged(tid="t").to_item())
    source = Tagged.plan()._item_decoder.__singletable_source__  # type: ignore[attr-defined]
    assert "data['tags'] = av['SS']" in source
    assert "data['tags'] = ()" in source
    # Validators that run before pydantic's own, and strict fields, still get a set.
    assert "data['strict'] = set()" in source
    assert "data['checked'] = set()" in source
    item = Tagged(tid="t", checked={"a"}).to_item()
    seen.clear()
    assert Tagged.from_item(item).checked == {"a"}
    assert seen == [{"a"}]


@settings(max_examples=300, deadline=None)
@given(
    values=hs.dictionaries(
        hs.sampled_from(sorted(SET_FIELDS)),
        hs.one_of(
            hs.none(),  # the attribute absent
            hs.lists(hs.text(max_size=3), max_size=4),  # duplicates and "" as a foreign item may
            hs.lists(number_texts, max_size=3),
            hs.sampled_from([{"NULL": True}, {"L": []}, {"S": "x"}, {}]),
        ),
    )
)
def test_stored_sets_decode_like_the_reference(values: dict[str, Any]) -> None:
    plan = Tagged.plan()
    item: dict[str, Any] = plan.to_item(
        Tagged(tid="t", tags={"a"}, frozen=frozenset({"b"}), numbers={Decimal(1)}, strict={"c"})
    )
    for field, value in values.items():
        if value is None:
            item.pop(field, None)
        else:
            item[field] = {SET_FIELDS[field]: value} if isinstance(value, list) else value
    assert same(outcome(plan.from_item, item), outcome(plan._from_item_reference, item))
