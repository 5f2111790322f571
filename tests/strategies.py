"""Shared hypothesis strategies for key codecs, escaping and templates.

Import as ``from strategies import ...`` (pytest puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Literal

from hypothesis import assume
from hypothesis import strategies as st

from singletable.keys.codecs import KeyFormat

Precision = Literal["s", "ms", "us"]

UTC = dt.timezone.utc

#: Characters that matter to key escaping: the default delimiter and escape char, the
#: neighbours of both, space, NUL, the characters right above the escape char, digits,
#: the range bound '$' (chr(ord('#') + 1)), and characters above ASCII.
SPECIAL_CHARS = "#%$\"&'! \x00\x01\x1f/-.:09AZaz~\x7f\x80\xe9\u20ac\uffff\U0001f600"


def key_text(*, max_size: int = 20) -> st.SearchStrategy[str]:
    """Arbitrary text for a key segment: delimiter, escape char, controls, non-ASCII.

    Surrogates are excluded (they cannot be encoded as UTF-8, so cannot be stored).
    """
    return st.text(
        st.one_of(st.sampled_from(SPECIAL_CHARS), st.characters(codec="utf-8")),
        max_size=max_size,
    )


def plain_key_text(*, max_size: int = 20) -> st.SearchStrategy[str]:
    """Text with no character at or below ``'%'``: escaping leaves it unchanged."""
    return st.text(
        st.characters(codec="utf-8", min_codepoint=ord("%") + 1),
        max_size=max_size,
    )


#: Boundary ints of the variable-width int codec (at most 99 digits).
INT_BOUNDARIES = [
    0,
    1,
    -1,
    9,
    10,
    -9,
    -10,
    99,
    100,
    -99,
    -100,
    10**98,
    10**98 - 1,
    -(10**98),
    -(10**98) + 1,
    10**99 - 1,
    -(10**99) + 1,
]


def key_ints() -> st.SearchStrategy[int]:
    """Ints the variable-width int codec accepts: small, boundary and up to 99 digits."""
    return st.one_of(
        st.integers(min_value=-1000, max_value=1000),
        st.integers(),
        st.integers(min_value=-(10**99) + 1, max_value=10**99 - 1),
        st.sampled_from(INT_BOUNDARIES),
    )


def fixed_ints(width: int) -> st.SearchStrategy[int]:
    """Ints that fit ``KeyFormat(width=width)``, with both boundaries."""
    top = 10**width - 1
    return st.one_of(st.integers(min_value=0, max_value=top), st.sampled_from([0, 1, top]))


def key_decimals() -> st.SearchStrategy[Decimal]:
    """Finite decimals whose exponent fits the decimal codec, incl. zeros and trailing zeros."""
    coefficient = st.one_of(
        st.integers(min_value=-1000, max_value=1000),
        st.integers(min_value=-(10**40), max_value=10**40),
    )
    exponent = st.one_of(st.integers(min_value=-5, max_value=5), st.integers(-450, 450))
    built = st.builds(lambda c, e: Decimal(f"{c}E{e}"), coefficient, exponent)  # exact
    zeros = st.sampled_from([Decimal("0"), Decimal("-0"), Decimal("0E+7"), Decimal("-0.000")])
    edges = st.sampled_from(
        [Decimal("1E+498"), Decimal("-1E+498"), Decimal("1E-499"), Decimal("-1E-499")]
    )
    return st.one_of(built, zeros, edges)


def key_floats() -> st.SearchStrategy[float]:
    """Finite floats, both zeros, subnormals and extremes."""
    return st.one_of(
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1.7976931348623157e308, 0.1, -0.1]),
    )


def timezones() -> st.SearchStrategy[dt.tzinfo]:
    """Fixed-offset timezones in -23:59..+23:59, some with seconds, and UTC."""
    minutes = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1)
    return st.one_of(
        st.just(UTC),
        st.builds(lambda m: dt.timezone(dt.timedelta(minutes=m)), minutes),
        st.builds(lambda s: dt.timezone(dt.timedelta(seconds=s)), st.integers(-86399, 86399)),
    )


_DIVISOR = {"s": 1_000_000, "ms": 1000, "us": 1}


def utc_datetimes(precision: Precision = "us") -> st.SearchStrategy[dt.datetime]:
    """Aware UTC datetimes (years 1..9999) with no finer fraction than ``precision``."""
    div = _DIVISOR[precision]
    return st.builds(
        lambda d: d.replace(microsecond=d.microsecond - d.microsecond % div, tzinfo=UTC),
        st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59)),
    )


def aware_datetimes(precision: Precision = "us") -> st.SearchStrategy[dt.datetime]:
    """Aware datetimes in random fixed-offset timezones whose UTC instant is in range.

    The UTC instant has no finer fraction than ``precision`` (so the key codec of that
    precision accepts every one of them).
    """

    def shift(instant: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
        try:
            return instant.astimezone(tz)
        except OverflowError:  # local time falls outside years 1..9999
            return instant

    return st.builds(shift, utc_datetimes(precision), timezones())


def naive_datetimes() -> st.SearchStrategy[dt.datetime]:
    """Naive datetimes (no tzinfo)."""
    return st.datetimes()


def key_dates() -> st.SearchStrategy[dt.date]:
    """Dates in years 1..9999."""
    return st.dates()


# --------------------------------------------------------------------------------------
# Composite key templates (tests/test_templates.py, tests/test_entity.py)
#
# A `FieldKind` is a key field type with a strategy for its values and an *order image*:
# a function whose results compare the way DynamoDB must order the field's keys (str by
# UTF-8 bytes, enums by value, everything else by its own order). A composite template
# of random kinds must then order its keys like the tuples of images.


class Shade(str, enum.Enum):
    """A str enum whose values hold the delimiter, the escape char and chars below them."""

    EMPTY = ""
    SPACE = " "
    HASH = "#"
    PERCENT = "%"
    A = "a"
    A_HASH = "a#"
    E_ACUTE = "\xe9"


class Level(enum.IntEnum):
    """An int enum with negative, zero and big values."""

    LOW = -5
    MID = 0
    HIGH = 7
    BIG = 10**20


def _utf8(value: str) -> bytes:
    return value.encode("utf-8")


def _same(value: Any) -> Any:
    return value


def _enum_value(member: enum.Enum) -> Any:
    value = member.value
    return _utf8(value) if isinstance(value, str) else value


@dataclass(frozen=True)
class FieldKind:
    """A key field type: its annotation, a strategy for its values and its order image."""

    name: str
    annotation: Any
    values: st.SearchStrategy[Any]
    image: Callable[[Any], Any] = _same


def _near_text() -> st.SearchStrategy[str]:
    # A small alphabet of the characters that matter, so that prefixes, equal values and
    # neighbours ('a' / 'a#' / 'a%' / 'a\x00') come up often.
    return st.text(st.sampled_from("#%$! \x00a\xe9"), max_size=4)


FIELD_KINDS: tuple[FieldKind, ...] = (
    FieldKind("str", str, st.one_of(_near_text(), key_text(max_size=6)), _utf8),
    FieldKind("int", int, key_ints()),
    FieldKind("decimal", Decimal, key_decimals()),
    FieldKind("datetime", dt.datetime, aware_datetimes()),
    FieldKind("fixed", Annotated[int, KeyFormat(width=6)], fixed_ints(6)),
    FieldKind("shade", Shade, st.sampled_from(Shade), _enum_value),
    FieldKind("level", Level, st.sampled_from(Level), _enum_value),
    FieldKind("date", dt.date, key_dates()),
    FieldKind("uuid", uuid.UUID, st.uuids()),
    FieldKind("bool", bool, st.booleans()),
    FieldKind("float", float, key_floats()),
    FieldKind("literal", Literal["b", "a#", "", "a"], st.sampled_from(["b", "a#", "", "a"]), _utf8),
)

#: (delimiter, escape) pairs a Table accepts; '-'/'.' and '#'/'/' escape the output of
#: the int, decimal and datetime codecs too, '#'/'%' (the default) escapes only text.
ESCAPERS: tuple[tuple[str, str], ...] = (("#", "%"), ("!", '"'), ("-", "."), ("$", "%"), ("#", "/"))

#: Literal segments; a template uses those whose characters are all above its escape char.
LITERALS: tuple[str, ...] = ("EVT", "A", "\xe9~", "Z0", "x.y", "a-b")


@dataclass(frozen=True)
class TemplateShape:
    """A random composite template: its source text, escaping and field kinds, in order."""

    source: str
    delimiter: str
    escape: str
    fields: tuple[tuple[str, FieldKind], ...]

    def images(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """The tuple of order images of ``values``, in template order."""
        return tuple(kind.image(values[name]) for name, kind in self.fields)


# Strategies are built once here: a strategy built inside a test is validated again
# on every example, which costs more than the property itself.
_KINDS = st.lists(st.sampled_from(FIELD_KINDS), min_size=1, max_size=4)
_ESCAPER = st.sampled_from(ESCAPERS)
_LITERALS_ABOVE = {
    escape: st.sampled_from([lit for lit in LITERALS if min(lit) > escape])
    for escape in {e for _, e in ESCAPERS}
}
_KEEP = st.integers(0, 2)


@st.composite
def template_shapes(draw: st.DrawFn, *, max_fields: int = 4) -> TemplateShape:
    """Composite templates of 1..max_fields mixed-type fields with optional literals."""
    delimiter, escape = draw(_ESCAPER)
    literal = _LITERALS_ABOVE[escape]
    kinds = draw(_KINDS)[:max_fields]
    segments: list[str] = []
    fields: list[tuple[str, FieldKind]] = []
    for i, kind in enumerate(kinds):
        for _ in range(draw(st.integers(0, 1 if i else 2))):
            segments.append(draw(literal))
        name = f"f{i}"
        segments.append("{" + name + "}")
        fields.append((name, kind))
    if draw(st.booleans()):
        segments.append(draw(literal))
    return TemplateShape(delimiter.join(segments), delimiter, escape, tuple(fields))


def _key_not_empty(shape: TemplateShape, values: Mapping[str, Any]) -> bool:
    # A lone '{f0}' template with an empty text value makes an empty key, which DynamoDB
    # refuses (tested on its own); every other template and value makes a non-empty key.
    if shape.source != "{f0}":
        return True
    name, kind = shape.fields[0]
    return bool(kind.image(values[name]) != b"")


@st.composite
def shape_values(draw: st.DrawFn, shape: TemplateShape) -> dict[str, Any]:
    """Values for every field of ``shape`` (never an empty key)."""
    values = {name: draw(kind.values) for name, kind in shape.fields}
    assume(_key_not_empty(shape, values))
    return values


@st.composite
def near_values(draw: st.DrawFn, shape: TemplateShape, base: Mapping[str, Any]) -> dict[str, Any]:
    """Values for ``shape`` that often share a leading run of fields with ``base``."""
    values = {name: base[name] if draw(_KEEP) else draw(kind.values) for name, kind in shape.fields}
    assume(_key_not_empty(shape, values))
    return values
