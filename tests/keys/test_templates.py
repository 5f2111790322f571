"""Key templates: round trip, composite byte order, prefix exactness, range bounds, errors.

The properties run on random composite templates of mixed field types (see
``template_shapes`` in ``strategies.py``), built directly with `KeyTemplate` and
`codec_for`, and on entity classes (the range bounds go through the query layer's own
key condition). Keys are always compared as UTF-8 bytes, DynamoDB's order.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from pydantic import create_model

from singletable.entity import Entity
from singletable.errors import KeyDecodeError, KeyEncodeError, ModelDefinitionError, QueryError
from singletable.examples import AuditEvent
from singletable.keys.codecs import codec_for
from singletable.keys.escaping import SegmentEscaper
from singletable.keys.numbers import IntCodec
from singletable.keys.templates import KeyTemplate
from singletable.keys.text import StrCodec
from singletable.model.table import Table
from tests.strategies import (
    ESCAPERS,
    FIELD_KINDS,
    TemplateShape,
    near_values,
    shape_values,
    template_shapes,
)

MANY = settings(max_examples=500, deadline=None)
ESC = SegmentEscaper()


def build(shape: TemplateShape) -> KeyTemplate:
    codecs = {
        name: codec_for(kind.annotation, [], where=f"field {name}") for name, kind in shape.fields
    }
    return KeyTemplate(
        shape.source,
        attribute="SK",
        role="sk",
        key_type="S",
        escaper=SegmentEscaper(shape.delimiter, shape.escape),
        codecs=codecs,
        where="test",
    )


def simple(source: str, role: str = "sk", **codecs: Any) -> KeyTemplate:
    return KeyTemplate(
        source,
        attribute="SK" if role == "sk" else "PK",
        role=role,  # type: ignore[arg-type]
        key_type="S",
        escaper=ESC,
        codecs=codecs,
        where="entity T",
    )


def sign(a: Any, b: Any) -> int:
    return int(a > b) - int(a < b)


def utf8(key: str) -> bytes:
    return key.encode("utf-8")


# --------------------------------------------------------------------------------------
# properties on directly built templates


@MANY
@given(hs.data())
def test_round_trip(data: hs.DataObject) -> None:
    shape = data.draw(template_shapes())
    template = build(shape)
    values = data.draw(shape_values(shape))
    key = template.format(values)
    assert template.parse(key) == values
    # The same key from an object's attributes (what an entity's to_item uses).
    assert template.format_object(SimpleNamespace(**values)) == key


@MANY
@given(hs.data())
def test_composite_order_is_tuple_order(data: hs.DataObject) -> None:
    shape = data.draw(template_shapes())
    template = build(shape)
    a = data.draw(shape_values(shape))
    b = data.draw(near_values(shape, a))
    key_a, key_b = template.format(a), template.format(b)
    assert sign(utf8(key_a), utf8(key_b)) == sign(shape.images(a), shape.images(b)), (
        key_a,
        key_b,
    )
    # str order is code point order, which is UTF-8 byte order.
    assert sign(key_a, key_b) == sign(utf8(key_a), utf8(key_b))


@MANY
@given(hs.data())
def test_prefix_selects_exactly_equal_leading_fields(data: hs.DataObject) -> None:
    shape = data.draw(template_shapes())
    template = build(shape)
    a = data.draw(shape_values(shape))
    b = data.draw(near_values(shape, a))
    key_b = template.format(b)
    images_a, images_b = shape.images(a), shape.images(b)
    for k in range(len(shape.fields)):
        prefix = template.prefix(a, k)
        assert prefix == "" or prefix.endswith(shape.delimiter)  # ends on a segment boundary
        assert key_b.startswith(prefix) == (images_a[:k] == images_b[:k]), (k, prefix, key_b)
        assert template.format(a).startswith(prefix)


def test_prefix_never_matches_a_longer_value() -> None:
    template = simple("EVT#{n}#{m}", n=IntCodec(), m=StrCodec())
    assert template.prefix({"n": 1}, 1) == "EVT#011#"
    assert not template.format({"n": 10, "m": "x"}).startswith(template.prefix({"n": 1}, 1))
    s = simple("EVT#{s}#{m}", s=StrCodec(), m=StrCodec())
    assert s.prefix({"s": "1"}, 1) == "EVT#1#"
    assert not s.format({"s": "10", "m": ""}).startswith(s.prefix({"s": "1"}, 1))
    assert not s.format({"s": "1#0", "m": ""}).startswith(s.prefix({"s": "1"}, 1))
    assert s.format({"s": "1", "m": "0"}).startswith(s.prefix({"s": "1"}, 1))


@MANY
@given(hs.data())
def test_bound_and_sentinel_enclose_exactly_the_equal_keys(data: hs.DataObject) -> None:
    """``bound(v, k) <= key < bound(v, k) + upper_sentinel`` <=> first k fields equal."""
    shape = data.draw(template_shapes())
    template = build(shape)
    a = data.draw(shape_values(shape))
    b = data.draw(near_values(shape, a))
    key_b = utf8(template.format(b))
    for k in range(1, len(shape.fields) + 1):
        low = template.bound(a, k)
        high = low + template.upper_sentinel
        inside = utf8(low) <= key_b < utf8(high)
        assert inside == (shape.images(a)[:k] == shape.images(b)[:k]), (k, low, key_b)
        assert high not in (template.format(a), template.format(b))


# --------------------------------------------------------------------------------------
# range bounds through the query layer's key condition

OPS = ("between", "gt", "ge", "lt", "le", "eq_only")


def entity_for(shape: TemplateShape) -> type[Entity]:
    table = Table("t", delimiter=shape.delimiter, escape=shape.escape)
    fields: dict[str, Any] = {"p": (str, ...)}
    fields.update({name: (kind.annotation, ...) for name, kind in shape.fields})
    return create_model(
        "Ranged",
        __base__=Entity,
        __cls_kwargs__={"table": table, "pk": f"P{shape.delimiter}{{p}}", "sk": shape.source},
        **fields,
    )


def holds(op: str, key: Any, args: tuple[Any, ...]) -> bool:
    """DynamoDB's key condition: on UTF-8 bytes for S keys, on numbers for N keys."""
    if op == "eq":
        return bool(key == args[0])
    if op == "begins_with":
        return bool(key.startswith(args[0]))
    if op == "between":
        return bool(args[0] <= key <= args[1])
    return bool(
        {
            "lt": key < args[0],
            "le": key <= args[0],
            "gt": key > args[0],
            "ge": key >= args[0],
        }[op]
    )


def expected(op: str, image: Any, args: list[Any]) -> bool:
    if op == "between":
        return bool(args[0] <= image <= args[1])
    return bool(
        {
            "gt": image > args[0],
            "ge": image >= args[0],
            "lt": image < args[0],
            "le": image <= args[0],
            "eq_only": True,
        }[op]
    )


@settings(max_examples=500, deadline=None)
@given(hs.data())
def test_query_key_condition_selects_exactly_the_range(data: hs.DataObject) -> None:
    shape = data.draw(template_shapes(max_fields=3))
    model = entity_for(shape)
    names = [name for name, _ in shape.fields]
    count = data.draw(hs.integers(0, len(names) - 1), label="leading equal fields")
    op = data.draw(hs.sampled_from(OPS), label="op")
    a = data.draw(shape_values(shape), label="query values")
    kind = shape.fields[count][1]
    if op == "between":
        bounds = sorted(
            [a[names[count]], data.draw(kind.values, label="other bound")], key=kind.image
        )
        args = bounds
    else:
        args = [a[names[count]]]
    items = data.draw(hs.lists(near_values(shape, a), min_size=1, max_size=8), label="items")

    query = model.query(p="x", **{n: a[n] for n in names[:count]})
    if op == "between":
        query = query.between(**{names[count]: tuple(args)})
    elif op != "eq_only":
        query = getattr(query, op)(**{names[count]: args[0]})
    condition = query._key_condition()  # the pure key condition that params() renders

    lead = shape.images(a)[:count]
    images = [kind.image(v) for v in args]
    sk = model.plan().primary.sk  # the compiled template to_item writes the SK with
    assert sk is not None
    for values in items:
        key = sk.format(values)
        if condition is None:
            selected = True
        else:
            selected = holds(condition.op, utf8(key), tuple(map(utf8, condition.values)))
            selected = selected and key != condition.exclude
        image = shape.images(values)
        want = image[:count] == lead and expected(op, image[count], images)
        assert selected == want, (shape.source, op, count, args, key, condition)


def test_between_refuses_low_above_high_naming_the_field() -> None:
    shape = TemplateShape("EVT#{f0}", "#", "%", (("f0", FIELD_KINDS[1]),))
    model = entity_for(shape)
    with pytest.raises(QueryError, match=r"between\(f0=\.\.\.\).*low bound 5.*high bound 3"):
        model.query(p="x").between(f0=(5, 3))


# --------------------------------------------------------------------------------------
# readability of the worked examples


T0 = dt.datetime(2026, 6, 23, 8, 0, tzinfo=dt.timezone.utc)


def test_audit_log_keys_are_readable() -> None:
    event = AuditEvent(actor_id="u_8814", ts=T0, seq=42, action="login", target="doc/1")
    item = event.to_item()
    assert item["PK"] == {"S": "ACTOR#u_8814"}
    assert item["SK"] == {"S": "EVT#2026-06-23T08:00:00.000000Z#000042"}
    # Another timezone is normalised to UTC; only characters that need it are escaped.
    local = T0.astimezone(dt.timezone(dt.timedelta(hours=2)))
    other = AuditEvent(actor_id="team #1 50%", ts=local, seq=7, action="x", target="y")
    assert other.to_item()["PK"] == {"S": "ACTOR#team%20%231%2050%25"}
    assert other.to_item()["SK"] == {"S": "EVT#2026-06-23T08:00:00.000000Z#000007"}
    sk = AuditEvent.plan().primary.sk
    assert sk is not None
    assert sk.prefix({"ts": T0}, 1) == "EVT#2026-06-23T08:00:00.000000Z#"
    assert sk.parse("EVT#2026-06-23T08:00:00.000000Z#000042") == {"ts": T0, "seq": 42}


# --------------------------------------------------------------------------------------
# template errors: type, and the template / field / limit named


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("", "cannot be empty"),
        ("A##{x}", "empty segment"),
        ("A#{x}#", "empty segment"),
        ("#{x}", "empty segment"),
        ("v{x}", "segment 'v{x}' mixes literal text and a field"),
        ("{x}{y}", "segment '{x}{y}' mixes"),
        ("A#{x", "stray brace"),
        ("A B#{x}", "literal segment 'A B' contains ' '"),
        ("A$#{x}", "contains '$'"),
        ("A!#{x}", "contains '!'"),
        ("A%#{x}", "contains '%'"),
        ("{x}#{x}", "field 'x' appears twice"),
        ("A#{nope}", "unknown field 'nope'"),
    ],
)
def test_bad_templates_are_refused(source: str, fragment: str) -> None:
    with pytest.raises(ModelDefinitionError) as info:
        simple(source, x=StrCodec(), y=StrCodec())
    message = str(info.value)
    assert message.startswith(f"entity T, sk template {source!r}: ")
    assert fragment in message


def test_number_templates() -> None:
    def number(source: str, **codecs: Any) -> KeyTemplate:
        return KeyTemplate(
            source,
            attribute="SK",
            role="sk",
            key_type="N",
            escaper=ESC,
            codecs=codecs,
            where="entity T",
        )

    template = number("{n}", n=IntCodec())
    assert template.format({"n": -42}) == "-42"
    assert template.parse("-42") == {"n": -42}
    assert template.parse(Decimal("17")) == {"n": 17}
    with pytest.raises(ModelDefinitionError, match=r"'A#\{n\}'.*'SK' is a Number.*single"):
        number("A#{n}", n=IntCodec())
    with pytest.raises(ModelDefinitionError, match=r"'\{s\}'.*field 's' is not numeric \(str\)"):
        number("{s}", s=StrCodec())
    with pytest.raises(KeyEncodeError, match=r"sk template '\{n\}': field 'n': int key value 'x'"):
        template.format({"n": "x"})
    with pytest.raises(KeyDecodeError, match=r"entity T, sk template '\{n\}': field 'n'"):
        template.parse("abc")


def test_encode_errors_name_template_and_field() -> None:
    template = simple("EVT#{s}#{n}", s=StrCodec(), n=IntCodec())
    where = "entity T, sk template 'EVT#{s}#{n}'"
    with pytest.raises(KeyEncodeError) as info:
        template.format({"s": "a"})
    assert str(info.value) == f"{where}: missing value for field 'n'"
    with pytest.raises(KeyEncodeError) as info:
        template.format({"s": "a", "n": "3"})
    assert str(info.value).startswith(f"{where}: field 'n': int key value '3'")
    with pytest.raises(KeyEncodeError, match=re.escape(f"{where}: missing value for field 's'")):
        template.prefix({}, 1)
    with pytest.raises(KeyEncodeError, match=re.escape(f"{where}: cannot build a key range")):
        template.prefix({"s": "a", "n": 1}, 2)  # every field given: use equality
    with pytest.raises(KeyEncodeError, match=re.escape(f"{where}: cannot build a key range")):
        template.prefix({}, -1)
    with pytest.raises(KeyEncodeError, match=re.escape(f"{where}: a bound needs at least one")):
        template.bound({}, 0)
    assert template.bound({"s": "a", "n": 1}, 2) == "EVT#a#011"


def test_empty_key_is_refused() -> None:
    template = simple("{name}", role="pk", name=StrCodec())
    with pytest.raises(KeyEncodeError) as info:
        template.format({"name": ""})
    assert "pk template '{name}'" in str(info.value)
    assert "the key is empty" in str(info.value)


@pytest.mark.parametrize(("role", "limit"), [("pk", 2048), ("sk", 1024)])
def test_key_size_limits(role: str, limit: int) -> None:
    template = simple("{s}", role=role, s=StrCodec())
    assert len(template.format({"s": "x" * limit})) == limit
    # Counted in UTF-8 bytes: 'é' is two.
    assert template.format({"s": "\xe9" * (limit // 2)})
    with pytest.raises(KeyEncodeError) as info:
        template.format({"s": "\xe9" * (limit // 2) + "x"})
    assert f"key is {limit + 1} bytes" in str(info.value)
    assert f"limit for a {'partition' if role == 'pk' else 'sort'} key is {limit} bytes" in str(
        info.value
    )
    assert f"{role} template '{{s}}'" in str(info.value)


@pytest.mark.parametrize(
    ("key", "fragment"),
    [
        ("EVT#a", "has 2 segments, the template has 3"),
        ("EVT#a#011#x", "has 4 segments"),
        ("EVX#a#011", "has 'EVX' where the template has the literal 'EVT'"),
        ("EVT#a#11", "field 'n'"),
        ("EVT#a b#011", "field 's': key segment 'a b' contains a character ' ' unescaped"),
        ("EVT#a%2#011", "field 's': malformed escape"),
        ("EVT#a%41#011", "field 's': non-canonical escape"),
    ],
)
def test_parse_errors_name_template_and_field(key: str, fragment: str) -> None:
    template = simple("EVT#{s}#{n}", s=StrCodec(), n=IntCodec())
    with pytest.raises(KeyDecodeError) as info:
        template.parse(key)
    assert str(info.value).startswith("entity T, sk template 'EVT#{s}#{n}': ")
    assert fragment in str(info.value)


def test_parse_refuses_non_string_keys() -> None:
    with pytest.raises(KeyDecodeError, match=r"sk template 'EVT#\{s\}': expected a string key"):
        simple("EVT#{s}", s=StrCodec()).parse(42)


def test_escapers_cover_every_pair() -> None:
    # Every (delimiter, escape) pair the strategies use is one a Table accepts.
    for delimiter, escape in ESCAPERS:
        assert Table("t", delimiter=delimiter, escape=escape).escaper.delimiter == delimiter


# --------------------------------------------------------------------------------------
# range bounds on a Number sort key: compared numerically, no sentinel

number_table = Table("numbers", sk_type="N")


class Counter(Entity, table=number_table, pk="C#{c}", sk="{n}"):
    c: str
    n: int


NUMBER_OPS = ("between", "gt", "ge", "lt", "le")


@MANY
@given(
    op=hs.sampled_from(NUMBER_OPS),
    bounds=hs.lists(hs.integers(-(10**30), 10**30), min_size=2, max_size=2).map(sorted),
    keys=hs.lists(hs.integers(-(10**30), 10**30) | hs.integers(-3, 3), max_size=8),
)
def test_number_sort_key_ranges(op: str, bounds: list[int], keys: list[int]) -> None:
    query = Counter.query(c="x")
    query = (
        query.between(n=(bounds[0], bounds[1]))
        if op == "between"
        else getattr(query, op)(n=bounds[0])
    )
    condition = query._key_condition()
    assert condition is not None
    assert condition.exclude is None
    request = query.params()
    assert request["KeyConditionExpression"].startswith("#n0 = :v0 AND #n1 ")
    sent = [v for k, v in request["ExpressionAttributeValues"].items() if k != ":v0"]
    assert sent == [{"N": v} for v in condition.values]
    numbers = [Decimal(v) for v in condition.values]
    for n in keys:
        stored = Decimal(Counter(c="x", n=n).to_item()["SK"]["N"])
        assert holds(condition.op, stored, tuple(numbers)) == expected(op, n, bounds)


def test_number_sort_key_range_errors() -> None:
    with pytest.raises(QueryError) as info:
        Counter.query(c="x").begins_with(n="1")
    assert "entity Counter: begins_with(n=...) needs a string sort key; 'SK' is a Number" in str(
        info.value
    )
    with pytest.raises(QueryError, match=r"between\(n=\.\.\.\): the low bound 5 .* high bound -5"):
        Counter.query(c="x").between(n=(5, -5))
    with pytest.raises(KeyEncodeError) as bad_value:
        Counter.query(c="x").gt(n="a")  # type: ignore[arg-type]  # the run-time refusal is the test
    assert "Counter (table key), sk template '{n}': field 'n': int key value 'a'" in str(
        bad_value.value
    )


def test_number_sort_key_refuses_values_dynamodb_numbers_cannot_hold() -> None:
    table = Table("numbers-38", sk_type="N")

    class Row(Entity, table=table, pk="R#{r}", sk="{n}"):
        r: str
        n: int

    assert Row(r="a", n=10**40).to_item()["SK"] == {"N": str(10**40)}  # 1 significant digit
    with pytest.raises(KeyEncodeError, match=r"sk template '\{n\}': field 'n': .* 41 significant"):
        Row.get(r="a", n=10**40 + 1).params()
    with pytest.raises(KeyEncodeError, match=r"at most 38"):
        Row(r="a", n=10**40 + 1).to_item()


def test_number_keys_are_sent_in_dynamodb_normal_form() -> None:
    # DynamoDB returns numbers normalised; keys (and cursors made from them) must agree.
    table = Table("numbers-normal", pk_type="N", sk=None)

    class Price(Entity, table=table, pk="{price}"):
        price: Decimal

    assert Price.get(price=Decimal("1.50")).params()["Key"] == {"PK": {"N": "1.5"}}
    assert Price.get(price=Decimal("1E+2")).params()["Key"] == {"PK": {"N": "100"}}
    assert Price(price=Decimal("-0.000100")).to_item()["PK"] == {"N": "-0.0001"}
