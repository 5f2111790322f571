from __future__ import annotations

import collections.abc
import dataclasses
import datetime as dt
import enum
import fractions
import ipaddress
import json
import pathlib
import uuid
from decimal import Decimal
from typing import Annotated, Any, Literal, NamedTuple, Optional, Union

import pydantic
import pydantic_core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from typing_extensions import TypedDict

from singletable.attributes.codecs import AttributeCodec, attribute_codec_for, field_is_validated
from singletable.attributes.convert import (
    from_attribute_value,
    sized_list,
    sized_map,
    to_attribute_value,
)
from singletable.attributes.size import (
    MAX_ITEM_SIZE,
    attribute_value_size,
    check_item_size,
    item_size,
)
from singletable.errors import (
    ItemDecodeError,
    ItemEncodeError,
    ItemTooLargeError,
    ModelDefinitionError,
)

# ---------------------------------------------------------------------------------------
# helpers: compile a model's fields the way the entity layer will, encode, decode, validate
# ---------------------------------------------------------------------------------------


def codecs_for(model: type[pydantic.BaseModel]) -> dict[str, AttributeCodec]:
    return {
        name: attribute_codec_for(
            info.annotation,
            info.metadata,
            where=f"{model.__name__}.{name}",
            validated=field_is_validated(model, name),
        )
        for name, info in model.model_fields.items()
    }


def encode(instance: pydantic.BaseModel) -> dict[str, Any]:
    item = {}
    for name, codec in codecs_for(type(instance)).items():
        av = codec.to_av(getattr(instance, name))
        if av is not None:
            item[name] = av
    return item


def decode(model: type[pydantic.BaseModel], item: dict[str, Any]) -> pydantic.BaseModel:
    codecs = codecs_for(model)
    return model.model_validate({name: codecs[name].from_av(av) for name, av in item.items()})


def roundtrip(instance: pydantic.BaseModel) -> pydantic.BaseModel:
    item = encode(instance)
    json.dumps(item, default=repr)  # plain data only
    return decode(type(instance), item)


class Color(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(pydantic.BaseModel):
    city: str
    postcode: str | None = None
    tags: set[str] = pydantic.Field(default_factory=set)


class Node(pydantic.BaseModel):
    name: str
    children: list[Node] = pydantic.Field(default_factory=list)


class Everything(pydantic.BaseModel):
    s: str = "text"
    i: int = 42
    neg: int = -7
    big: int = 10**40
    f: float = 0.1
    dec: Decimal = Decimal("12.3400")
    flag: bool = True
    raw: bytes = b"\x00\xff"
    when: dt.datetime = dt.datetime(2026, 6, 23, 8, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    naive: dt.datetime = dt.datetime(2026, 6, 23, 8, 0, 0, 123456)
    day: dt.date = dt.date(2026, 6, 23)
    at: dt.time = dt.time(8, 30, 15)
    ident: uuid.UUID = uuid.UUID("12345678-1234-5678-1234-567812345678")
    color: Color = Color.BLUE
    level: Level = Level.HIGH
    mode: Literal["a", "b"] = "b"
    ints: list[int] = pydantic.Field(default_factory=lambda: [1, 2, 3])
    pair: tuple[int, str] = (1, "x")
    many: tuple[float, ...] = (1.5, 2.5)
    tags: set[str] = pydantic.Field(default_factory=lambda: {"a", "b"})
    numbers: set[int] = pydantic.Field(default_factory=lambda: {1, 2})
    decimals: frozenset[Decimal] = frozenset({Decimal("1.5")})
    blobs: set[bytes] = pydantic.Field(default_factory=lambda: {b"x", b"y"})
    mapping: dict[str, list[int]] = pydantic.Field(default_factory=lambda: {"k": [1, 2]})
    address: Address = Address(city="Paris", tags={"x"})
    addresses: list[Address] = pydantic.Field(
        default_factory=lambda: [Address(city="A"), Address(city="B", postcode="1")]
    )
    maybe: int | None = None
    maybe_str: str | None = "present"
    anything: Any = pydantic.Field(default_factory=lambda: {"x": [1, "y", None, True]})
    either: int | str = "seven"
    annotated: Annotated[int, pydantic.Field(ge=0)] = 5


def test_round_trip_every_supported_type() -> None:
    original = Everything()
    item = encode(original)
    assert roundtrip(original) == original
    assert item["s"] == {"S": "text"}
    assert item["i"] == {"N": "42"}
    # 41 digits, 1 significant: sent without the trailing zeros (moto cannot parse them).
    assert item["big"] == {"N": "1E+40"}
    assert item["f"] == {"N": "0.1"}
    assert item["dec"] == {"N": "12.3400"}
    assert item["flag"] == {"BOOL": True}
    assert item["raw"] == {"B": b"\x00\xff"}
    # Aware values are stored in UTC with microseconds: the text sorts like the instant.
    assert item["when"] == {"S": "2026-06-23T06:00:00.000000+00:00"}
    assert item["naive"] == {"S": "2026-06-23T08:00:00.123456"}
    assert item["day"] == {"S": "2026-06-23"}
    assert item["at"] == {"S": "08:30:15"}
    assert item["ident"] == {"S": "12345678-1234-5678-1234-567812345678"}
    assert item["color"] == {"S": "blue"}
    assert item["level"] == {"N": "2"}
    assert item["mode"] == {"S": "b"}
    assert item["ints"] == {"L": [{"N": "1"}, {"N": "2"}, {"N": "3"}]}
    assert item["pair"] == {"L": [{"N": "1"}, {"S": "x"}]}
    assert sorted(item["tags"]["SS"]) == ["a", "b"]
    assert sorted(item["numbers"]["NS"]) == ["1", "2"]
    assert item["decimals"] == {"NS": ["1.5"]}
    assert sorted(item["blobs"]["BS"]) == [b"x", b"y"]
    assert item["mapping"] == {"M": {"k": {"L": [{"N": "1"}, {"N": "2"}]}}}
    assert item["address"] == {
        "M": {"city": {"S": "Paris"}, "postcode": {"NULL": True}, "tags": {"SS": ["x"]}}
    }
    assert "maybe" not in item
    assert item["either"] == {"S": "seven"}


def test_decoded_values_have_the_field_types() -> None:
    item = encode(Everything())
    codecs = codecs_for(Everything)
    assert type(codecs["i"].from_av(item["i"])) is int
    assert type(codecs["f"].from_av(item["f"])) is float
    assert type(codecs["dec"].from_av(item["dec"])) is Decimal
    assert codecs["tags"].from_av(item["tags"]) == {"a", "b"}
    assert type(codecs["decimals"].from_av(item["decimals"])) is frozenset
    assert type(codecs["raw"].from_av({"B": bytearray(b"ab")})) is bytes
    assert codecs["color"].from_av(item["color"]) is Color.BLUE
    assert codecs["level"].from_av(item["level"]) is Level.HIGH
    assert codecs["when"].from_av(item["when"]) == Everything().when
    assert codecs["pair"].from_av(item["pair"]) == (1, "x")
    assert codecs["address"].from_av(item["address"]) == {
        "city": "Paris",
        "postcode": None,
        "tags": {"x"},
    }
    # pydantic's strict mode accepts what the codecs return
    strict = type("Strict", (Everything,), {"model_config": pydantic.ConfigDict(strict=True)})
    strict_item = {k: v for k, v in item.items() if k not in ("anything", "address", "addresses")}
    assert decode(strict, strict_item)


def test_nested_models_lists_of_models_and_recursion() -> None:
    tree = Node(name="root", children=[Node(name="a", children=[Node(name="b")]), Node(name="c")])
    assert roundtrip(tree) == tree
    params = attribute_codec_for(list[Node], where="T.nodes").params()
    assert params["type"] == "list"
    assert params["items"]["model"] == "Node"


def test_dict_of_lists_and_nested_optionals() -> None:
    class Holder(pydantic.BaseModel):
        data: dict[str, list[int | None]]
        nested: list[dict[str, Address]]

    holder = Holder(data={"a": [1, None, 3], "b": []}, nested=[{"x": Address(city="Q")}])
    item = encode(holder)
    assert item["data"]["M"]["a"] == {"L": [{"N": "1"}, {"NULL": True}, {"N": "3"}]}
    assert roundtrip(holder) == holder


def test_optional_none_is_omitted_at_top_level() -> None:
    class Opt(pydantic.BaseModel):
        a: int | None = None
        b: str | None = None
        c: Address | None = None
        d: list[int] | None = None

    assert encode(Opt()) == {}
    assert roundtrip(Opt()) == Opt()
    assert roundtrip(Opt(a=1, b="x", c=Address(city="z"), d=[])) == Opt(
        a=1, b="x", c=Address(city="z"), d=[]
    )
    codec = attribute_codec_for(Optional[int], where="Opt.a")  # noqa: UP045
    assert codec.from_av({"NULL": True}) is None
    assert codec.to_av(None) is None
    assert codec.params() == {"type": "N", "python": "int", "nullable": True}
    union = attribute_codec_for(Union[str, None], where="Opt.b")  # noqa: UP007
    assert union.to_av(None) is None
    assert union.to_av("x") == {"S": "x"}
    nested = attribute_codec_for(list[int | None], where="Opt.l")
    assert nested.to_av([None]) == {"L": [{"NULL": True}]}


def test_empty_set_is_omitted_and_restored_by_the_default() -> None:
    class Tagged(pydantic.BaseModel):
        tags: set[str] = pydantic.Field(default_factory=set)
        ids: frozenset[int] = frozenset()

    item = encode(Tagged())
    assert item == {}
    assert decode(Tagged, item) == Tagged()
    # a nested model's empty set field is omitted too
    assert encode(Everything(address=Address(city="x")))["address"] == {
        "M": {"city": {"S": "x"}, "postcode": {"NULL": True}}
    }


def test_empty_set_inside_list_or_map_is_refused() -> None:
    codec = attribute_codec_for(list[set[str]], where="Doc.groups")
    with pytest.raises(ItemEncodeError, match=r"Doc\.groups.*empty set"):
        codec.to_av([{"a"}, set()])
    codec = attribute_codec_for(dict[str, Any], where="Doc.meta")
    with pytest.raises(ItemEncodeError, match=r"Doc\.meta.*empty set"):
        codec.to_av({"k": set()})
    with pytest.raises(ItemEncodeError, match="empty set"):
        to_attribute_value(set(), where="cmp")


# ---------------------------------------------------------------------------------------
# numbers
# ---------------------------------------------------------------------------------------

dynamo_floats = hs.one_of(
    hs.just(0.0),
    hs.floats(min_value=1e-130, max_value=9.9e125),
    hs.floats(min_value=-9.9e125, max_value=-1e-130),
)


@settings(max_examples=600)
@given(dynamo_floats)
def test_float_round_trip_is_exact(value: float) -> None:
    codec = attribute_codec_for(float, where="M.f")
    av = codec.to_av(value)
    assert av is not None
    assert codec.from_av(av) == value
    # DynamoDB hands numbers back in plain positional form: still exact
    stored = format(Decimal(av["N"]), "f")
    assert codec.from_av({"N": stored}) == value
    assert attribute_value_size(av) <= 21


@settings(max_examples=200)
@given(hs.integers(min_value=-(10**38) + 1, max_value=10**38 - 1))
def test_int_round_trip(value: int) -> None:
    codec = attribute_codec_for(int, where="M.i")
    av = codec.to_av(value)
    assert av is not None
    assert codec.from_av(av) == value
    assert type(codec.from_av({"N": format(Decimal(value), "E")})) is int


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_floats_are_refused(value: float) -> None:
    codec = attribute_codec_for(float, where="AuditEvent.score")
    with pytest.raises(ItemEncodeError, match=r"AuditEvent\.score.*not a finite number"):
        codec.to_av(value)


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        (1e126, "too large"),
        (-1e200, "too large"),
        (1e-131, "too small"),
        (5e-324, "too small"),
    ],
)
def test_out_of_range_floats_are_refused(value: float, rule: str) -> None:
    codec = attribute_codec_for(float, where="AuditEvent.score")
    with pytest.raises(ItemEncodeError, match=rf"AuditEvent\.score.*{rule}.*1E-130"):
        codec.to_av(value)


def test_decimal_limits() -> None:
    codec = attribute_codec_for(Decimal, where="Invoice.total")
    ok = [
        Decimal("9.9999999999999999999999999999999999999E+125"),
        Decimal("-9.9999999999999999999999999999999999999E+125"),
        Decimal("1E-130"),
        Decimal("-1E-130"),
        Decimal("12345678901234567890123456789012345678"),  # 38 digits
        Decimal("1.0000000000000000000000000000000000000000000"),  # trailing zeros trimmed
        Decimal("0"),
        Decimal("-0.000"),
    ]
    for value in ok:
        av = codec.to_av(value)
        assert av is not None
        assert codec.from_av(av) == value

    with pytest.raises(ItemEncodeError, match=r"Invoice\.total.*39 significant digits.*at most 38"):
        codec.to_av(Decimal("123456789012345678901234567890123456789"))
    with pytest.raises(ItemEncodeError, match=r"Invoice\.total.*too large.*9\.9999"):
        codec.to_av(Decimal("1E126"))
    with pytest.raises(ItemEncodeError, match=r"Invoice\.total.*too small.*1E-130"):
        codec.to_av(Decimal("9E-131"))
    with pytest.raises(ItemEncodeError, match=r"Invoice\.total.*'NaN'.*not a finite"):
        codec.to_av(Decimal("NaN"))
    with pytest.raises(ItemEncodeError, match=r"Invoice\.total.*not a finite"):
        codec.to_av(Decimal("-Infinity"))


_DECIMALS = hs.one_of(
    hs.decimals(allow_nan=True, allow_infinity=True),
    hs.builds(
        lambda digits, exponent, sign: Decimal((sign, tuple(digits), exponent)),
        hs.lists(hs.integers(0, 9), min_size=1, max_size=45),
        hs.integers(-170, 160),
        hs.integers(0, 1),
    ),
    hs.sampled_from([Decimal("0"), Decimal("-0.000"), Decimal("0E+5"), Decimal("1E+126")]),
)
_JSON_LIKE = hs.recursive(
    hs.one_of(hs.none(), hs.booleans(), hs.integers(), hs.text(max_size=5), _DECIMALS),
    lambda inner: hs.one_of(
        hs.lists(inner, max_size=4), hs.dictionaries(hs.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    value=hs.one_of(
        hs.dictionaries(hs.text(max_size=3), _JSON_LIKE, max_size=5),
        hs.lists(_JSON_LIKE, max_size=5),
    )
)
def test_sized_converters_store_what_the_converter_stores(value: Any) -> None:
    # sized_map / sized_list (the generated encoder's converters of dict[str, Any] and
    # list[Any]) store what to_attribute_value stores, Decimals included (zeros, exponents,
    # out of range, NaN), refuse what it refuses, and bound the size from above.
    sized = sized_map if isinstance(value, dict) else sized_list
    try:
        expected = to_attribute_value(value, where="w")
    except ItemEncodeError:
        with pytest.raises(ItemEncodeError):
            sized(value, "w")
        return
    av, bound = sized(value, "w")
    assert av == expected
    assert bound >= attribute_value_size(av)


def test_int_limits() -> None:
    codec = attribute_codec_for(int, where="Counter.value")
    # Sent without the trailing zeros: DynamoDB stores the same number, moto parses it.
    assert codec.to_av(10**125) == {"N": "1E+125"}
    with pytest.raises(ItemEncodeError, match=r"Counter\.value.*39 significant digits"):
        codec.to_av(10**38 + 1)
    with pytest.raises(ItemEncodeError, match=r"Counter\.value.*too large"):
        codec.to_av(10**126)


def test_int_decoding() -> None:
    codec = attribute_codec_for(int, where="Counter.value")
    assert codec.from_av({"N": "1E+3"}) == 1000
    assert codec.from_av({"N": "-12"}) == -12
    with pytest.raises(ItemDecodeError, match=r"Counter\.value.*1\.5 is not an integer"):
        codec.from_av({"N": "1.5"})
    with pytest.raises(ItemDecodeError, match=r"Counter\.value.*not a number"):
        codec.from_av({"N": "abc"})


# ---------------------------------------------------------------------------------------
# error paths
# ---------------------------------------------------------------------------------------


def test_wrong_python_types_are_refused_naming_the_field() -> None:
    cases: list[tuple[Any, Any, str]] = [
        (str, 5, "expected a str"),
        (int, "5", "expected an int"),
        (float, "x", "expected a float"),
        (Decimal, "1", "expected a Decimal"),
        (bool, 1, "expected a bool"),
        (bytes, "x", "expected bytes"),
        (dt.datetime, "2026", "expected a datetime"),
        (uuid.UUID, "x", "expected a UUID"),
        (Color, "red", "expected a Color member"),
        (list[int], "abc", "expected a list"),
        (tuple[int, str], (1,), "expected a tuple of 2 items"),
        (set[str], ["a"], "expected a set"),
        (dict[str, int], [1], "expected a mapping"),
        (Address, {"city": "x"}, "expected a Address instance"),
    ]
    for annotation, value, rule in cases:
        codec = attribute_codec_for(annotation, where="Thing.field")
        with pytest.raises(ItemEncodeError, match=rf"Thing\.field.*{rule}"):
            codec.to_av(value)


def test_none_in_a_required_field_is_refused() -> None:
    codec = attribute_codec_for(int, where="Thing.count")
    with pytest.raises(ItemEncodeError, match=r"Thing\.count.*None.*not Optional"):
        codec.to_av(None)


def test_non_string_map_keys_are_refused() -> None:
    with pytest.raises(ModelDefinitionError, match=r"Thing\.index.*string keys"):
        attribute_codec_for(dict[int, str], where="Thing.index")
    codec = attribute_codec_for(dict[str, int], where="Thing.index")
    with pytest.raises(ItemEncodeError, match=r"Thing\.index.*keys must be strings"):
        codec.to_av({1: 2})
    with pytest.raises(ItemEncodeError, match=r"meta.*keys must be strings"):
        to_attribute_value({("a",): 1}, where="meta")


def test_unstorable_set_annotation_is_refused_at_compile_time() -> None:
    with pytest.raises(ModelDefinitionError, match=r"Thing\.groups.*SS, NS or BS"):
        attribute_codec_for(set[bool], where="Thing.groups")


def test_set_of_mixed_values_is_refused() -> None:
    with pytest.raises(ItemEncodeError, match=r"cmp.*only strings, only numbers or only bytes"):
        to_attribute_value({"a", 1}, where="cmp")


def test_unknown_types_are_refused_at_encoding() -> None:
    codec = attribute_codec_for(object, where="Thing.blob")
    with pytest.raises(ItemEncodeError, match=r"Thing\.blob.*cannot store a complex"):
        codec.to_av(1j)


def test_decode_type_mismatch_names_field_and_types() -> None:
    cases: list[tuple[Any, str]] = [
        (str, "S"),
        (int, "N"),
        (float, "N"),
        (Decimal, "N"),
        (bool, "BOOL"),
        (bytes, "B"),
        (dt.date, "S"),
        (list[int], "L"),
        (dict[str, int], "M"),
        (set[str], "SS"),
        (Address, "M"),
    ]
    for annotation, expected in cases:
        codec = attribute_codec_for(annotation, where="Thing.field")
        with pytest.raises(
            ItemDecodeError, match=rf"Thing\.field.*expected a stored {expected}.*got X"
        ):
            codec.from_av({"X": 1})


def test_malformed_attribute_values_are_refused() -> None:
    with pytest.raises(ItemDecodeError, match="not a DynamoDB attribute value"):
        from_attribute_value({"S": "a", "N": "1"})
    # The length is tested after a failed unpacking: the same errors as testing it first.
    malformed: list[Any] = [{}, {"M": {"a": {}}}, {"L": [{"S": "a", "BOOL": True}]}]
    malformed += ["xy", ["S", "a"]]  # not dicts, and not of one entry
    for value in malformed:
        with pytest.raises(ItemDecodeError, match="not a DynamoDB attribute value"):
            from_attribute_value(value)
    with pytest.raises(AttributeError):
        from_attribute_value("x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        from_attribute_value(3)  # type: ignore[arg-type]
    with pytest.raises(ItemEncodeError, match="not a DynamoDB attribute value"):
        attribute_value_size({"Q": 1})


# ---------------------------------------------------------------------------------------
# generic converter
# ---------------------------------------------------------------------------------------


def test_generic_converter() -> None:
    assert to_attribute_value(True) == {"BOOL": True}  # bool before int
    assert to_attribute_value(3) == {"N": "3"}
    assert to_attribute_value(None) == {"NULL": True}
    assert to_attribute_value(Color.RED) == {"S": "red"}
    assert to_attribute_value(Level.LOW) == {"N": "1"}
    assert to_attribute_value(bytearray(b"ab")) == {"B": b"ab"}
    assert to_attribute_value(dt.date(2026, 1, 2)) == {"S": "2026-01-02"}
    assert to_attribute_value((1, "a")) == {"L": [{"N": "1"}, {"S": "a"}]}
    assert to_attribute_value({Decimal("1.5")}) == {"NS": ["1.5"]}
    assert to_attribute_value(Address(city="x")) == {
        "M": {"city": {"S": "x"}, "postcode": {"NULL": True}}
    }
    with pytest.raises(ItemEncodeError, match=r"Rule\.threshold.*not a finite"):
        to_attribute_value(float("nan"), where="Rule.threshold")

    assert from_attribute_value({"N": "10"}) == 10
    assert type(from_attribute_value({"N": "10"})) is int
    assert type(from_attribute_value({"N": "1E+2"})) is int
    assert from_attribute_value({"N": "1.25"}) == Decimal("1.25")
    assert type(from_attribute_value({"N": "1.25"})) is Decimal
    assert from_attribute_value({"NS": ["1", "2.5"]}) == {1, Decimal("2.5")}
    assert from_attribute_value({"B": b"x"}) == b"x"
    assert from_attribute_value({"NULL": True}) is None
    assert from_attribute_value({"M": {"a": {"L": [{"S": "x"}, {"BOOL": False}]}}}) == {
        "a": ["x", False]
    }


@given(
    hs.recursive(
        hs.none()
        | hs.booleans()
        | hs.text()
        | hs.binary()
        | hs.integers(min_value=-(10**30), max_value=10**30),
        lambda children: (
            hs.lists(children, max_size=4)
            | hs.dictionaries(hs.text(min_size=1, max_size=5), children, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_generic_round_trip(value: Any) -> None:
    assert from_attribute_value(to_attribute_value(value)) == value


# ---------------------------------------------------------------------------------------
# params for snapshots
# ---------------------------------------------------------------------------------------


def test_params_are_json_and_describe_the_type() -> None:
    for name, codec in codecs_for(Everything).items():
        json.dumps(codec.params())
        assert codec.where == f"Everything.{name}"
    codecs = codecs_for(Everything)
    assert codecs["s"].params() == {"type": "S", "python": "str"}
    assert codecs["i"].params() == {"type": "N", "python": "int"}
    assert codecs["ints"].params() == {"type": "list", "items": {"type": "N", "python": "int"}}
    assert codecs["maybe"].params() == {"type": "N", "python": "int", "nullable": True}
    assert codecs["tags"].params()["of"] == "SS"
    assert codecs["color"].params()["values"] == ["red", "blue"]
    assert codecs["either"].params()["type"] == "any"
    mutated = codecs["mapping"].params()
    mutated["type"] = "changed"
    assert codecs["mapping"].params()["type"] == "map"


# ---------------------------------------------------------------------------------------
# item size (expected figures measured on DynamoDB Local 3.3.0 via ConsumedCapacity)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "size"),
    [
        ("0", 1),
        ("-0.000", 1),
        ("1", 2),
        ("10", 2),
        ("100", 2),
        ("1000", 2),
        ("110", 3),  # base-100 digits 01 10
        ("1010", 3),
        ("12345", 4),
        ("-1", 3),
        ("-12", 3),
        ("-123", 4),
        ("0.5", 2),
        ("0.05", 2),
        ("0.15", 2),
        ("0.015", 3),  # .01 50
        ("1.5", 3),
        ("12.34", 3),
        ("123.4", 4),
        ("1E125", 2),
        ("1E-130", 2),
        ("-1E-130", 3),
        ("9" * 38, 20),
        ("-" + "9" * 38, 21),
        ("-9999999999999999999999999999999999999.9", 21),
        ("9999999999999999999999999999999999999.9", 21),
    ],
)
def test_number_sizes(number: str, size: int) -> None:
    assert attribute_value_size({"N": number}) == size


def test_attribute_value_sizes() -> None:
    assert attribute_value_size({"S": "abc"}) == 3
    assert attribute_value_size({"S": "é€😀"}) == 9  # UTF-8 bytes
    assert attribute_value_size({"B": b"\x00\x01\x02\x03"}) == 4  # raw, not base64
    assert attribute_value_size({"BOOL": True}) == 1
    assert attribute_value_size({"NULL": True}) == 1
    assert attribute_value_size({"L": []}) == 3
    assert attribute_value_size({"M": {}}) == 3
    assert attribute_value_size({"L": [{"S": "ab"}, {"N": "1"}]}) == 3 + (1 + 2) + (1 + 2)
    assert attribute_value_size({"M": {"kk": {"S": "ab"}, "z": {"NULL": True}}}) == 11
    assert attribute_value_size({"L": [{"L": []}]}) == 7
    assert attribute_value_size({"M": {"a": {"M": {"b": {"L": [{"N": "12"}]}}}}}) == 16
    assert attribute_value_size({"SS": ["a", "bc"]}) == 3
    assert attribute_value_size({"NS": ["1", "-12", "0.015"]}) == 8
    assert attribute_value_size({"BS": [b"abc", b"d"]}) == 4


def test_item_size_example() -> None:
    item: dict[str, Any] = {
        "PK": {"S": "ACTOR#42"},  # 2 + 8
        "SK": {"S": "EVT#2026"},  # 2 + 8
        "score": {"N": "-12.5"},  # 5 + (1 + 2 + 1)
        "ok": {"BOOL": False},  # 2 + 1
        "tags": {"L": [{"S": "x"}]},  # 4 + 3 + 1 + 1
        "naïve": {"NULL": True},  # 6 + 1
    }
    assert item_size(item) == 10 + 10 + 9 + 3 + 9 + 7
    assert item_size({}) == 0


json_like_avs = hs.recursive(
    hs.builds(lambda s: {"S": s}, hs.text(max_size=8))
    | hs.builds(lambda n: {"N": str(n)}, hs.integers(min_value=-(10**37), max_value=10**37))
    | hs.builds(lambda b: {"B": b}, hs.binary(max_size=8))
    | hs.just({"BOOL": True})
    | hs.just({"NULL": True}),
    lambda children: (
        hs.builds(lambda xs: {"L": xs}, hs.lists(children, max_size=3))
        | hs.builds(lambda m: {"M": m}, hs.dictionaries(hs.text(max_size=4), children, max_size=3))
    ),
    max_leaves=10,
)
items = hs.dictionaries(hs.text(min_size=1, max_size=6), json_like_avs, max_size=5)


@given(items, items)
def test_item_size_is_additive_over_attributes(a: dict[str, Any], b: dict[str, Any]) -> None:
    b = {k: v for k, v in b.items() if k not in a}
    assert item_size({**a, **b}) == item_size(a) + item_size(b)


@given(items, hs.text(min_size=1, max_size=6), json_like_avs)
def test_item_size_grows_with_content(item: dict[str, Any], name: str, av: Any) -> None:
    before = item_size(item)
    item = dict(item)
    item.pop(name, None)
    base = item_size(item)
    assert base <= before or name in item
    grown = {**item, name: av}
    assert item_size(grown) > base
    # a longer list or string is never smaller
    assert attribute_value_size({"L": [av, av]}) > attribute_value_size({"L": [av]})
    assert attribute_value_size({"S": "x" * 10}) > attribute_value_size({"S": "x" * 9})


def test_check_item_size_limit() -> None:
    # name "x" (1) + "pk" (2) + "p" (1) => padding makes the item exactly MAX_ITEM_SIZE
    at_limit = {"pk": {"S": "p"}, "x": {"S": "a" * (MAX_ITEM_SIZE - 4)}}
    assert check_item_size(at_limit, where="AuditEvent") == MAX_ITEM_SIZE == 409600
    over = {"pk": {"S": "p"}, "x": {"S": "a" * (MAX_ITEM_SIZE - 3)}}
    with pytest.raises(ItemTooLargeError) as info:
        check_item_size(over, where="AuditEvent")
    assert info.value.size == MAX_ITEM_SIZE + 1
    assert info.value.limit == MAX_ITEM_SIZE
    message = str(info.value)
    assert "AuditEvent" in message
    assert "409601" in message
    assert "409600" in message
    assert isinstance(info.value, ItemEncodeError)


def test_encoded_item_size_matches_hand_count() -> None:
    class Small(pydantic.BaseModel):
        name: str
        n: int
        tags: set[str] = pydantic.Field(default_factory=set)

    item = encode(Small(name="ab", n=110, tags={"x", "yz"}))
    assert item_size(item) == (4 + 2) + (1 + 3) + (4 + 3)


def test_specialised_fast_paths_still_check_their_input() -> None:
    strings = attribute_codec_for(list[str], where="Doc.tags")
    assert strings.to_av(["a", "b"]) == {"L": [{"S": "a"}, {"S": "b"}]}
    with pytest.raises(ItemEncodeError, match=r"Doc\.tags\[\].*expected a str"):
        strings.to_av(["a", 1])
    labels = attribute_codec_for(dict[str, str], where="Doc.labels")
    assert labels.to_av({"k": "v"}) == {"M": {"k": {"S": "v"}}}
    with pytest.raises(ItemEncodeError, match=r"Doc\.labels.*keys must be strings"):
        labels.to_av({1: "v"})
    with pytest.raises(ItemEncodeError, match=r"Doc\.labels\[\].*expected a str"):
        labels.to_av({"k": 1})
    amount = attribute_codec_for(Decimal, where="Doc.amount")
    assert amount.to_av(Decimal("1E+125")) == {"N": "1E+125"}
    assert amount.to_av(Decimal("0E-200")) == {"N": "0"}
    with pytest.raises(ItemEncodeError, match=r"Doc\.amount.*too small"):
        amount.to_av(Decimal("1E-131"))


def test_empty_map_keys_are_refused_naming_the_field() -> None:
    typed = attribute_codec_for(dict[str, str], (), where="Doc.labels")
    with pytest.raises(ItemEncodeError, match=r"Doc\.labels: a map key is the empty string"):
        typed.to_av({"ok": "1", "": "2"})
    nested = attribute_codec_for(dict[str, int], (), where="Doc.counts")
    with pytest.raises(ItemEncodeError, match=r"Doc\.counts: a map key is the empty string"):
        nested.to_av({"": 1})
    with pytest.raises(ItemEncodeError, match=r"meta: a map key is the empty string"):
        to_attribute_value({"": "x"}, where="meta")


def test_datetime_attributes_sort_like_their_instants_whatever_the_offset() -> None:
    import datetime as dt

    codec = attribute_codec_for(dt.datetime, (), where="Doc.when")
    plus2 = dt.timezone(dt.timedelta(hours=2))
    earlier = dt.datetime(2026, 6, 23, 9, 30, tzinfo=plus2)  # 07:30 UTC
    later = dt.datetime(2026, 6, 23, 8, 0, 0, 1, tzinfo=dt.timezone.utc)

    def text(value: dt.datetime) -> str:
        av = codec.to_av(value)
        assert av is not None
        return str(av["S"])

    assert text(earlier) < text(later)
    whole = dt.datetime(2026, 6, 23, 8, 0, tzinfo=dt.timezone.utc)
    assert text(whole) < text(later)  # fixed width: no short form
    assert codec.from_av({"S": text(earlier)}) == earlier  # the same instant


class FloatEnum(enum.Enum):
    TENTH = 0.1
    QUARTER = 0.25


class MixedEnum(enum.Enum):
    NAME = "a"
    RATE = 0.3


class TupleEnum(enum.Enum):
    LOW = (1, 2)
    HIGH = (3, 4)


@pytest.mark.parametrize(
    ("annotation", "value"),
    [
        (FloatEnum, FloatEnum.TENTH),
        (TupleEnum, TupleEnum.HIGH),
        (MixedEnum, MixedEnum.RATE),
        (MixedEnum | None, MixedEnum.RATE),
        (Literal[0.1, 0.3], 0.1),
        (Literal["x", 0.3], 0.3),
        (list[FloatEnum], [FloatEnum.TENTH, FloatEnum.QUARTER]),
    ],
)
def test_enum_and_literal_values_that_are_not_str_or_int_read_back(
    annotation: Any, value: Any
) -> None:
    codec = attribute_codec_for(annotation, where="M.x")
    model = pydantic.create_model("M", x=(annotation, ...))
    stored = codec.to_av(value)
    assert stored is not None
    # DynamoDB returns numbers normalised; "0.10" is how it could come back too.
    assert model.model_validate({"x": codec.from_av(stored)}).x == value  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------
# classes no value of which can be stored: refused when the class is created
# ---------------------------------------------------------------------------------------


class _Opaque:
    """A class of the application's, admitted by ``arbitrary_types_allowed``."""


@dataclasses.dataclass
class _Point:
    x: int


#: Classes whose every value the generic converter refuses, with one value of each.
UNSTORABLE: dict[type[Any], Any] = {
    dt.timedelta: dt.timedelta(seconds=5),
    complex: 1j,
    fractions.Fraction: fractions.Fraction(1, 3),
    pathlib.PurePosixPath: pathlib.PurePosixPath("/tmp"),
    ipaddress.IPv4Address: ipaddress.IPv4Address("192.0.2.1"),
    ipaddress.IPv6Network: ipaddress.IPv6Network("2001:db8::/32"),
    pydantic.HttpUrl: pydantic.HttpUrl("https://example.com/"),
    pydantic.PostgresDsn: pydantic.PostgresDsn("postgres://u@h1,h2/db"),
    pydantic.SecretStr: pydantic.SecretStr("s3cret"),
    _Opaque: _Opaque(),
    _Point: _Point(1),
}


class _Hooked:
    """A class whose pydantic schema makes its values text (as ``EmailStr`` does)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        return pydantic_core.core_schema.str_schema()


class _Pair(NamedTuple):
    a: int
    b: str


class _Shape(TypedDict):
    name: str


#: Annotations of classes that are not dispatched on but whose values can be stored.
STORABLE_UNKNOWN: list[Any] = [
    collections.abc.Hashable,  # abstract: any hashable value, text included
    _Hooked,
    _Pair,
    _Shape,
    pydantic.ByteSize,
    Any,
    object,
]


#: Each wrapper of `_wrapped`, around an annotation built at run time (mypy cannot type it).
_WRAP: dict[str, Any] = {
    "optional": lambda a: Optional[a],  # noqa: UP045 - the typing form on purpose
    "or_none": lambda a: a | None,
    "or_int": lambda a: Union[int, a],  # noqa: UP007 - the typing form on purpose
    "list": lambda a: list[a],  # type: ignore[valid-type]
    "tuple": lambda a: tuple[a, ...],  # type: ignore[valid-type]
    "pair": lambda a: tuple[str, a],  # type: ignore[valid-type]
    "map": lambda a: dict[str, a],  # type: ignore[valid-type]
    "sequence": lambda a: collections.abc.Sequence[a],  # type: ignore[valid-type]
    "frozenset": lambda a: frozenset[a],  # type: ignore[valid-type]
    "annotated": lambda a: Annotated[a, pydantic.Field(description="x")],
}


def _wrapped(inner: Any, wrappers: list[str]) -> Any:
    """``inner`` inside each of ``wrappers``, innermost first."""
    annotation = inner
    for wrapper in wrappers:
        annotation = _WRAP[wrapper](annotation)
    return annotation


#: Containers and wrappers of any element type (a set holds only text, numbers or bytes).
_ANY_WRAPPERS = [
    "optional",
    "or_none",
    "or_int",
    "list",
    "tuple",
    "pair",
    "map",
    "sequence",
    "annotated",
]
_WRAPPERS = hs.lists(hs.sampled_from([*_ANY_WRAPPERS, "frozenset"]), max_size=3)


@settings(max_examples=150, deadline=None)
@given(cls=hs.sampled_from(list(UNSTORABLE)), wrappers=_WRAPPERS)
def test_unstorable_classes_are_refused_when_the_field_is_compiled(
    cls: type[Any], wrappers: list[str]
) -> None:
    """Wherever the class sits in the annotation, compiling the field names field and class.

    And the rule agrees with the converter: a value of the class is refused at writing,
    so nothing that could be stored is refused early.
    """
    with pytest.raises(ItemEncodeError, match="cannot store"):
        to_attribute_value(UNSTORABLE[cls], where="value")
    annotation = _wrapped(cls, wrappers)
    with pytest.raises(ModelDefinitionError, match=rf"Thing\.value.*{cls.__name__} values cannot"):
        attribute_codec_for(annotation, where="Thing.value")


@settings(max_examples=100, deadline=None)
@given(
    annotation=hs.sampled_from(STORABLE_UNKNOWN),
    wrappers=hs.lists(hs.sampled_from(_ANY_WRAPPERS), max_size=3),
)
def test_classes_whose_values_can_be_stored_are_not_refused(
    annotation: Any, wrappers: list[str]
) -> None:
    attribute_codec_for(_wrapped(annotation, wrappers), where="Thing.value")


def test_values_of_the_storable_unknown_classes_are_stored() -> None:
    """The classes `test_classes_whose_values_can_be_stored_are_not_refused` admits."""
    assert to_attribute_value(_Pair(1, "x")) == {"L": [{"N": "1"}, {"S": "x"}]}
    assert to_attribute_value(_Shape(name="n")) == {"M": {"name": {"S": "n"}}}
    assert to_attribute_value(pydantic.ByteSize(3)) == {"N": "3"}
    assert to_attribute_value(frozenset({"a"})) == {"SS": ["a"]}


def _convert(value: Any) -> Any:
    return str(value)


@pytest.mark.parametrize("cls", list(UNSTORABLE))
def test_a_validator_that_may_change_the_type_lets_the_field_through(cls: type[Any]) -> None:
    """A validator's value need not be of the annotation's class: the write decides."""
    config = pydantic.ConfigDict(arbitrary_types_allowed=True)

    class InMetadata(pydantic.BaseModel):
        model_config = config
        value: Annotated[cls, pydantic.AfterValidator(_convert)]  # type: ignore[valid-type]

    class ByDecorator(pydantic.BaseModel):
        model_config = config
        value: cls  # type: ignore[valid-type]

        @pydantic.field_validator("value", mode="after")
        @classmethod
        def _to_text(cls, value: Any) -> Any:
            return str(value)

    class Plain(pydantic.BaseModel):
        model_config = config
        value: cls  # type: ignore[valid-type]

    compiled = codecs_for(InMetadata)["value"]
    assert compiled.to_av(InMetadata(value=UNSTORABLE[cls]).value) == {"S": str(UNSTORABLE[cls])}
    codecs_for(ByDecorator)
    with pytest.raises(ModelDefinitionError, match=rf"value: {cls.__name__} values cannot"):
        codecs_for(Plain)
