"""Key codecs and segment escaping: round trips, byte order, strictness, error messages."""

from __future__ import annotations

import datetime as dt
import enum
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Literal, NewType, Optional, Union
from unittest.mock import patch

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as hs
from pydantic import BaseModel
from pydantic_core import TzInfo

from singletable.attributes import fastpath as fastpath_module
from singletable.attributes.fastpath import Writer
from singletable.errors import KeyDecodeError, KeyEncodeError, ModelDefinitionError
from singletable.keys.choices import EnumCodec, LiteralCodec
from singletable.keys.codec_base import KeyCodec
from singletable.keys.codecs import KeyFormat, codec_for
from singletable.keys.escaping import SegmentEscaper
from singletable.keys.numbers import DecimalCodec, FixedIntCodec, FloatCodec, IntCodec
from singletable.keys.text import BoolCodec, StrCodec, UUIDCodec
from singletable.keys.times import DateCodec, DatetimeCodec
from singletable.testing.strategies import (
    UTC,
    aware_datetimes,
    fixed_ints,
    key_dates,
    key_decimals,
    key_floats,
    key_ints,
    key_text,
    naive_datetimes,
    plain_key_text,
    utc_datetimes,
)

MANY = settings(max_examples=500, deadline=None)
ESC = SegmentEscaper()


class Color(str, enum.Enum):
    RED = "red"
    HASH = "a#b"
    PERCENT = "%"
    SPACE = " x"
    EMPTY = ""
    ACCENT = "é"


class Level(enum.IntEnum):
    LOW = -5
    ZERO = 0
    MID = 7
    HIGH = 1000


class Plain(enum.Enum):
    ONE = 1
    TWO = 2
    TEN = 10


def b(text: str) -> bytes:
    return text.encode("utf-8")


def identity(x: Any) -> Any:
    return x


def by_value(x: enum.Enum) -> Any:
    return x.value


@dataclass(frozen=True)
class Case:
    id: str
    codec: KeyCodec[Any]
    values: hs.SearchStrategy[Any]
    order_key: Callable[[Any], Any] = identity


CASES = [
    Case("str", StrCodec(), key_text()),
    Case("int", IntCodec(), key_ints()),
    Case("fixed1", FixedIntCodec(1), fixed_ints(1)),
    Case("fixed6", FixedIntCodec(6), fixed_ints(6)),
    Case("decimal", DecimalCodec(), key_decimals()),
    Case("float", FloatCodec(), key_floats()),
    Case("bool", BoolCodec(), hs.booleans()),
    Case("datetime_s", DatetimeCodec("s"), aware_datetimes("s")),
    Case("datetime_ms", DatetimeCodec("ms"), aware_datetimes("ms")),
    Case("datetime_us", DatetimeCodec("us"), aware_datetimes("us")),
    Case("datetime_naive_utc", DatetimeCodec("us", "utc"), utc_datetimes("us")),
    Case("date", DateCodec(), key_dates()),
    Case("uuid", UUIDCodec(), hs.uuids()),
    Case("enum_str", EnumCodec(Color), hs.sampled_from(Color), by_value),
    Case("enum_int", EnumCodec(Level), hs.sampled_from(Level), by_value),
    Case("enum_plain_int", EnumCodec(Plain), hs.sampled_from(Plain), by_value),
    Case(
        "literal_str",
        LiteralCodec(["b", "a#", "", "%x", "zz"]),
        hs.sampled_from(["b", "a#", "", "%x", "zz"]),
    ),
    Case("literal_int", LiteralCodec([3, -20, 0, 10**30]), hs.sampled_from([3, -20, 0, 10**30])),
]


def encoded(codec: KeyCodec[Any], value: Any, escaper: SegmentEscaper = ESC) -> str:
    """A value's segment as the template layer writes it."""
    text = codec.encode(value)
    return escaper.escape(text) if escaper.needed_for(codec) else text


# --------------------------------------------------------------------------------------
# Properties of every codec


def check_round_trip(codec: KeyCodec[Any], value: Any) -> None:
    text = codec.encode(value)
    assert codec.decode(text) == value
    assert all(c >= codec.min_char for c in text)
    # The escaped segment decodes back too, and never contains the delimiter.
    seg = encoded(codec, value)
    raw = ESC.unescape(seg) if ESC.needed_for(codec) else seg
    assert codec.decode(raw) == value
    assert ESC.delimiter not in seg


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
@MANY
@given(data=hs.data())
def test_round_trip_and_order(case: Case, data: hs.DataObject) -> None:
    x = data.draw(case.values)
    y = data.draw(case.values)
    check_round_trip(case.codec, x)
    check_round_trip(case.codec, y)
    kx, ky = case.order_key(x), case.order_key(y)
    ex, ey = b(encoded(case.codec, x)), b(encoded(case.codec, y))
    assert (kx < ky) == (ex < ey)
    assert (kx == ky) == (ex == ey)
    # Still true with the delimiter after the segment (a composite key), and a prefix
    # ending on the segment boundary matches exactly the equal values.
    d = b(ESC.delimiter)
    assert (kx < ky) == (ex + d < ey + d)
    assert (ey + d).startswith(ex + d) == (kx == ky)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_params_are_json_able(case: Case) -> None:
    import json

    params = case.codec.params()
    assert params["kind"] == case.codec.kind
    assert json.loads(json.dumps(params)) == params


# --------------------------------------------------------------------------------------
# Escaper

ESCAPERS = [
    SegmentEscaper("!", "#"),
    SegmentEscaper("#", "/"),
    SegmentEscaper(".", "/"),
]


def check_escaper(esc: SegmentEscaper, a: str, c: str) -> None:
    d = esc.delimiter
    ea, ec = esc.escape(a), esc.escape(c)
    assert d not in ea
    assert all(ch > d for ch in ea)
    assert esc.unescape(ea) == a
    assert (a < c) == (b(ea) < b(ec))
    assert (a < c) == (b(ea + d) < b(ec + d))
    assert (a == c) == (ea == ec)
    assert (ec + d).startswith(ea + d) == (a == c)
    # every key under the prefix is below the range bound chr(ord(d) + 1)
    assert (ec + d).startswith(ea + d) <= (ec + d < ea + chr(ord(d) + 1))


@MANY
@given(a=key_text(), c=key_text())
@example(a="", c="#")
@example(a="a", c="a#")
@example(a="%", c="%25")
@example(a="a", c="a\x00")
def test_escaper_properties(a: str, c: str) -> None:
    check_escaper(ESC, a, c)


@MANY
@given(esc=hs.sampled_from(ESCAPERS), a=key_text(), c=key_text())
def test_other_escapers_properties(esc: SegmentEscaper, a: str, c: str) -> None:
    check_escaper(esc, a, c)


@MANY
@given(text=plain_key_text())
def test_escaper_leaves_readable_text_alone(text: str) -> None:
    assert ESC.escape(text) == text
    assert ESC.unescape(text) == text


def test_escape_examples() -> None:
    assert ESC.escape(" #%") == "%20%23%25"
    assert ESC.escape("a/b c") == "a/b%20c"
    assert ESC.escape("\x00") == "%00"
    assert ESC.escape("") == ""
    assert ESC.escape("é&") == "é&"
    assert ESC.unescape("a%20b") == "a b"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("a#b", r"delimiter '#' unescaped"),
        ("a b", r"character ' ' unescaped"),
        ("a%", r"malformed escape '%'"),
        ("a%2", r"malformed escape '%2'"),
        ("a%2g", r"malformed escape '%2g'"),
        ("%2a", r"malformed escape '%2a'"),  # lower-case hex is not canonical
        ("%41", r"non-canonical escape '%41'.*'A' is never escaped"),
        ("%26", r"non-canonical escape '%26'"),
        ("%20 ", r"character ' ' unescaped"),
        ("ok%25%", r"malformed escape"),
    ],
)
def test_unescape_refuses_non_canonical(text: str, match: str) -> None:
    with pytest.raises(KeyDecodeError, match=match):
        ESC.unescape(text)


def test_needed_for() -> None:
    assert ESC.needed_for(StrCodec())
    assert ESC.needed_for(EnumCodec(Color))
    assert ESC.needed_for(LiteralCodec(["a"]))
    plain: tuple[KeyCodec[Any], ...] = (
        IntCodec(),
        FixedIntCodec(3),
        DecimalCodec(),
        FloatCodec(),
        BoolCodec(),
        DatetimeCodec(),
        DateCodec(),
        UUIDCodec(),
        EnumCodec(Level),
    )
    for codec in plain:
        assert not ESC.needed_for(codec)
    # With '/' as escape char, '-' (ints, dates, uuids) must be escaped.
    assert SegmentEscaper("#", "/").needed_for(IntCodec())
    assert not SegmentEscaper("#", "/").needed_for(FixedIntCodec(3))


@pytest.mark.parametrize(
    ("delimiter", "escape", "match"),
    [
        ("/", "%", r"delimiter '/' cannot be escaped order-preservingly.*digits or letters"),
        ("|", "~", r"delimiter '\|' cannot be escaped order-preservingly"),
        (":", "%", r"delimiter ':' cannot be escaped"),
        ("#", "#", r"escape character '#' must sort above the delimiter '#'"),
        ("%", "#", r"escape character '#' must sort above the delimiter '%'"),
        ("#", "0", r"escape character '0' must sort below '0'.*digits"),
        ("#", "~", r"escape character '~' must sort below '0'"),
        ("#", "a", r"escape character 'a' must sort below '0'"),
        ("##", "%", r"delimiter '##' must be a single ASCII punctuation"),
        ("#", "", r"escape '' must be a single ASCII punctuation"),
        ("#", "é", r"escape 'é' must be a single ASCII punctuation"),
        ("\x00", "%", r"delimiter '\\x00' must be a single ASCII punctuation"),
        ("#", " ", r"escape character ' ' must sort above the delimiter '#'"),
        ("\x01", "#", r"delimiter '\\x01' must be a single ASCII punctuation"),
    ],
)
def test_escaper_refuses_bad_characters(delimiter: str, escape: str, match: str) -> None:
    with pytest.raises(ModelDefinitionError, match=match):
        SegmentEscaper(delimiter, escape)


# --------------------------------------------------------------------------------------
# Exact encodings (stored data relies on them)


@pytest.mark.parametrize(
    ("codec", "value", "text"),
    [
        (StrCodec(), "", ""),
        (StrCodec(), "a#b", "a#b"),
        (IntCodec(), 0, "010"),
        (IntCodec(), 42, "0242"),
        (IntCodec(), 10**20, "21" + "1" + "0" * 20),
        (IntCodec(), -42, "-9757"),
        (IntCodec(), -1, "-988"),
        (IntCodec(), 10**99 - 1, "99" + "9" * 99),
        (IntCodec(), -(10**99) + 1, "-00" + "0" * 99),
        (FixedIntCodec(6), 42, "000042"),
        (FixedIntCodec(6), 999999, "999999"),
        (DecimalCodec(), Decimal("0"), "0"),
        (DecimalCodec(), Decimal("-0.00"), "0"),
        (DecimalCodec(), Decimal("1.5"), "150115"),
        (DecimalCodec(), Decimal("1.50"), "150115"),
        (DecimalCodec(), Decimal("-1.5"), "-49884:"),
        (DecimalCodec(), Decimal("-1.51"), "-498848:"),
        (DecimalCodec(), Decimal("100"), "15031"),
        (DecimalCodec(), Decimal("0.001"), "14981"),
        (DecimalCodec(), 7, "15017"),
        (FloatCodec(), 1.5, "150115"),
        (FloatCodec(), -0.0, "0"),
        (FloatCodec(), 1e16, "15171"),
        (FloatCodec(), 2, "15012"),
        (BoolCodec(), False, "false"),
        (BoolCodec(), True, "true"),
        (
            DatetimeCodec(),
            dt.datetime(2026, 6, 23, 10, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            "2026-06-23T08:00:00.000000Z",
        ),
        (
            DatetimeCodec("ms"),
            dt.datetime(2026, 6, 23, 8, 0, 0, 5000, UTC),
            "2026-06-23T08:00:00.005Z",
        ),
        (DatetimeCodec("s"), dt.datetime(1, 1, 1, tzinfo=UTC), "0001-01-01T00:00:00Z"),
        (DatetimeCodec("s", "utc"), dt.datetime(2026, 6, 23, 8), "2026-06-23T08:00:00Z"),
        (DateCodec(), dt.date(2026, 6, 23), "2026-06-23"),
        (DateCodec(), dt.date(33, 1, 2), "0033-01-02"),
        (
            UUIDCodec(),
            uuid.UUID("12345678-9ABC-DEF0-1234-56789ABCDEF0"),
            "12345678-9abc-def0-1234-56789abcdef0",
        ),
        (EnumCodec(Color), Color.HASH, "a#b"),
        (EnumCodec(Color), "red", "red"),
        (EnumCodec(Level), Level.MID, "017"),
        (EnumCodec(Level), 7, "017"),
        (EnumCodec(Plain), Plain.TEN, "0210"),
        (LiteralCodec(["a", "b"]), "b", "b"),
        (LiteralCodec([1, 2]), 2, "012"),
    ],
)
def test_exact_encodings(codec: KeyCodec[Any], value: Any, text: str) -> None:
    assert codec.encode(value) == text


def test_decode_types() -> None:
    ts = DatetimeCodec().decode("2026-06-23T08:00:00.000000Z")
    assert ts.tzinfo is dt.timezone.utc
    assert type(FloatCodec().decode("0")) is float
    assert type(FloatCodec().decode("15012")) is float
    assert DecimalCodec().decode("15031") == Decimal(100)
    assert EnumCodec(Color).decode("a#b") is Color.HASH
    assert EnumCodec(Level).decode("017") is Level.MID
    assert type(DateCodec().decode("2026-06-23")) is dt.date


def test_params() -> None:
    assert IntCodec().params() == {"kind": "int"}
    assert FixedIntCodec(6).params() == {"kind": "fixed_int", "width": 6}
    assert DatetimeCodec("ms").params() == {"kind": "datetime", "precision": "ms"}
    assert EnumCodec(Level).params() == {"kind": "enum", "values": [-5, 0, 7, 1000]}
    assert LiteralCodec(["a", "b", "a"]).params() == {"kind": "literal", "values": ["a", "b"]}
    assert repr(FixedIntCodec(6)) == "FixedIntCodec(width=6)"


# --------------------------------------------------------------------------------------
# encode_prefix


@MANY
@given(data=hs.data(), precision=hs.sampled_from(["s", "ms", "us"]))
def test_datetime_prefixes_of_encodings_are_accepted(precision: Any, data: hs.DataObject) -> None:
    codec = DatetimeCodec(precision)
    text = codec.encode(data.draw(aware_datetimes(precision)))
    cut = data.draw(hs.integers(min_value=0, max_value=len(text)))
    assert codec.encode_prefix(text[:cut]) == text[:cut]


@MANY
@given(value=key_dates(), cut=hs.integers(min_value=0, max_value=10))
def test_date_prefixes_of_encodings_are_accepted(value: dt.date, cut: int) -> None:
    text = DateCodec().encode(value)
    assert DateCodec().encode_prefix(text[:cut]) == text[:cut]


@pytest.mark.parametrize(
    ("codec", "partial"),
    [
        (DatetimeCodec(), "2026-6"),  # June is "2026-06"
        (DatetimeCodec(), "2026-13"),
        (DatetimeCodec(), "2026-00"),
        (DatetimeCodec(), "2026-06-4"),
        (DatetimeCodec(), "2026-06-32"),
        (DatetimeCodec(), "2026-06-23T24"),
        (DatetimeCodec(), "2026-06-23T08:6"),
        (DateCodec(), "2026-2"),
        (DatetimeCodec(), "2026/06"),
        (DatetimeCodec(), "2026-06-23 08"),
        (DatetimeCodec(), "2026-06-23T08:00:00.0000000Z"),
        (DatetimeCodec("s"), "2026-06-23T08:00:00.1"),
        (DatetimeCodec(), "\uff12\uff10\uff12\uff16"),  # full-width digits
        (DatetimeCodec(), "June"),
        (DateCodec(), "2026-06-23T"),
        (DateCodec(), "26-06"),
    ],
)
def test_datetime_prefix_refuses_other_forms(codec: KeyCodec[Any], partial: str) -> None:
    with pytest.raises(KeyEncodeError, match=re.escape(f"{partial!r} is not a prefix of the ")):
        codec.encode_prefix(partial)


def test_str_prefix_is_identity() -> None:
    assert StrCodec().encode_prefix("root/pho") == "root/pho"


@pytest.mark.parametrize(
    "codec",
    [IntCodec(), FixedIntCodec(3), DecimalCodec(), BoolCodec(), UUIDCodec(), EnumCodec(Color)],
)
def test_prefix_unsupported(codec: KeyCodec[Any]) -> None:
    with pytest.raises(KeyEncodeError, match=f"{codec.kind} key fields do not support partial"):
        codec.encode_prefix("1")


# --------------------------------------------------------------------------------------
# Encode errors


@pytest.mark.parametrize(
    ("codec", "value", "match"),
    [
        (IntCodec(), True, r"True is a bool, not an int"),
        (FixedIntCodec(3), False, r"False is a bool, not an int"),
        (IntCodec(), "42", r"'42' has type str; expected int"),
        (IntCodec(), 4.0, r"4.0 has type float; expected int"),
        (IntCodec(), 10**99, r"more than 99 decimal digits"),
        (IntCodec(), -(10**99), r"more than 99 decimal digits"),
        pytest.param(IntCodec(), 10**5000, r"more than 99 decimal digits", id="10**5000"),
        (FixedIntCodec(6), 10**6, r"1000000 does not fit KeyFormat\(width=6\).*0\.\.999999"),
        (FixedIntCodec(6), -1, r"-1 does not fit KeyFormat\(width=6\).*0\.\.999999"),
        (DecimalCodec(), Decimal("NaN"), r"NaN is not finite"),
        (DecimalCodec(), Decimal("sNaN"), r"sNaN is not finite"),
        (DecimalCodec(), Decimal("-Infinity"), r"-Infinity is not finite"),
        (DecimalCodec(), Decimal("1E+499"), r"exponent e .* is 500, the key stores -499\.\.499"),
        (DecimalCodec(), Decimal("1E-501"), r"exponent e .* is -500, the key stores -499\.\.499"),
        (DecimalCodec(), True, r"True has type bool; expected Decimal"),
        (DecimalCodec(), 1.5, r"1.5 has type float; expected Decimal"),
        (FloatCodec(), float("nan"), r"nan is not finite"),
        (FloatCodec(), float("inf"), r"inf is not finite"),
        (FloatCodec(), float("-inf"), r"-inf is not finite"),
        (FloatCodec(), 2**60 + 1, r"1152921504606846977 is not exactly representable"),
        (FloatCodec(), "1.5", r"'1.5' has type str; expected float"),
        (BoolCodec(), 1, r"1 has type int; expected bool"),
        (StrCodec(), 5, r"5 has type int; expected str"),
        (StrCodec(), b"x", r"b'x' has type bytes; expected str"),
        (DatetimeCodec(), dt.datetime(2026, 6, 23), r"naive .*KeyFormat\(naive='utc'\)"),
        (
            DatetimeCodec("ms"),
            dt.datetime(2026, 6, 23, 8, 0, 0, 123456, UTC),
            r"has 123456 microseconds; the key stores milliseconds",
        ),
        (
            DatetimeCodec("s"),
            dt.datetime(2026, 6, 23, 8, 0, 0, 1000, UTC),
            r"has 1000 microseconds; the key stores seconds",
        ),
        (
            DatetimeCodec(),
            dt.datetime(1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))),
            r"outside years 1\.\.9999 after conversion to UTC",
        ),
        (
            DatetimeCodec(),
            dt.datetime(9999, 12, 31, 23, tzinfo=dt.timezone(dt.timedelta(hours=-2))),
            r"outside years 1\.\.9999 after conversion to UTC",
        ),
        (DatetimeCodec(), dt.date(2026, 6, 23), r"has type date; expected datetime.datetime"),
        (DatetimeCodec(), "2026-06-23T08:00:00Z", r"has type str; expected datetime"),
        (DateCodec(), dt.datetime(2026, 6, 23, tzinfo=UTC), r"is a datetime; pass value.date\(\)"),
        (DateCodec(), "2026-06-23", r"has type str; expected datetime.date"),
        (UUIDCodec(), "12345678-9abc-def0-1234-56789abcdef0", r"has type str; expected uuid.UUID"),
        (EnumCodec(Color), "blue", r"'blue' is not a member of Color"),
        (EnumCodec(Level), True, r"True is not a member of Level"),
        (EnumCodec(Level), 8, r"8 is not a member of Level"),
        (EnumCodec(Level), Plain.ONE, r"Plain.ONE.* is not a member of Level"),
        (LiteralCodec(["a", "b"]), "c", r"'c' is not one of the Literal values \['a', 'b'\]"),
        (LiteralCodec([1, 2]), True, r"True is not one of the Literal values \[1, 2\]"),
        (LiteralCodec([1, 2]), "1", r"'1' is not one of the Literal values"),
    ],
)
def test_encode_errors(codec: KeyCodec[Any], value: Any, match: str) -> None:
    with pytest.raises(KeyEncodeError, match=match):
        codec.encode(value)


@MANY
@given(value=naive_datetimes())
def test_naive_datetimes_refused_unless_opted_in(value: dt.datetime) -> None:
    with pytest.raises(KeyEncodeError, match="naive"):
        DatetimeCodec().encode(value)
    text = DatetimeCodec(naive="utc").encode(value)
    assert DatetimeCodec().decode(text) == value.replace(tzinfo=UTC)


@MANY
@given(value=aware_datetimes("us"))
def test_too_fine_precision_is_refused_not_truncated(value: dt.datetime) -> None:
    utc = value.astimezone(UTC)
    for precision, div in (("ms", 1000), ("s", 1_000_000)):
        codec = DatetimeCodec(precision)  # type: ignore[arg-type]
        if utc.microsecond % div:
            with pytest.raises(KeyEncodeError, match=f"has {utc.microsecond} microseconds"):
                codec.encode(value)
        else:
            assert codec.decode(codec.encode(value)) == value


# --------------------------------------------------------------------------------------
# Decode strictness


@pytest.mark.parametrize(
    ("codec", "text"),
    [
        (IntCodec(), ""),
        (IntCodec(), "42"),
        (IntCodec(), "0042"),  # leading zero
        (IntCodec(), "00"),
        (IntCodec(), "0142"),  # wrong count
        (IntCodec(), "011x"),
        (IntCodec(), "01٣"),  # non-ASCII digit
        (IntCodec(), "-98"),
        (IntCodec(), "-989"),  # -0
        (IntCodec(), "-9790"),  # -09 (leading zero)
        (IntCodec(), "-99"),
        (IntCodec(), "+0242"),
        (FixedIntCodec(3), "42"),
        (FixedIntCodec(3), "0042"),
        (FixedIntCodec(3), "-42"),
        (FixedIntCodec(3), "4 2"),
        (FixedIntCodec(3), "٠٤٢"),
        (DecimalCodec(), ""),
        (DecimalCodec(), "-0"),
        (DecimalCodec(), "1501"),  # no digits
        (DecimalCodec(), "150110"),  # trailing zero
        (DecimalCodec(), "150101"),  # leading zero
        (DecimalCodec(), "100015"),  # exponent -500
        (DecimalCodec(), "-49884"),  # no terminator
        (DecimalCodec(), "-49884:5"),
        (DecimalCodec(), "-49889:"),  # trailing zero (complemented 9)
        (DecimalCodec(), "-49994:"),  # leading zero
        (DecimalCodec(), "-9995:"),  # exponent -500
        (DecimalCodec(), "2501"),
        (DecimalCodec(), "1.5"),
        (FloatCodec(), "1"),
        (FloatCodec(), "15011234567890123456789"),  # more digits than a float has
        (FloatCodec(), "19991"),  # 1E+498 overflows a float
        (FloatCodec(), "11001"),  # 1E-400 underflows a float
        (FloatCodec(), "-0"),
        (BoolCodec(), "True"),
        (BoolCodec(), "1"),
        (BoolCodec(), ""),
        (DatetimeCodec(), "2026-06-23T08:00:00Z"),  # wrong precision
        (DatetimeCodec(), "2026-06-23T08:00:00.000000"),
        (DatetimeCodec(), "2026-06-23T08:00:00.000000+00:00"),
        (DatetimeCodec(), "2026-06-23 08:00:00.000000Z"),
        (DatetimeCodec(), "2026-13-23T08:00:00.000000Z"),
        (DatetimeCodec(), "0000-01-01T00:00:00.000000Z"),
        (DatetimeCodec(), "2026-02-30T08:00:00.000000Z"),
        (DatetimeCodec(), "2026-06-23T24:00:00.000000Z"),
        (DatetimeCodec("ms"), "2026-06-23T08:00:00.000000Z"),
        (DatetimeCodec("s"), "2026-06-23T08:00:00.000Z"),
        (DatetimeCodec("s"), "\uff12026-06-23T08:00:00Z"),
        (DateCodec(), "2026-6-23"),
        (DateCodec(), "20260623"),
        (DateCodec(), "2026-06-31"),
        (DateCodec(), "2026-06-23T"),
        (UUIDCodec(), "12345678-9ABC-DEF0-1234-56789ABCDEF0"),  # upper case
        (UUIDCodec(), "123456789abcdef0123456789abcdef0"),
        (UUIDCodec(), "{12345678-9abc-def0-1234-56789abcdef0}"),
        (UUIDCodec(), "12345678-9abc-def0-1234-56789abcdefg"),
        (EnumCodec(Color), "blue"),
        (EnumCodec(Level), "018"),
        (EnumCodec(Level), "x"),
        (LiteralCodec(["a", "b"]), "c"),
        (LiteralCodec([1, 2]), "013"),
        (LiteralCodec([1, 2]), "1"),
    ],
)
def test_decode_refuses_what_encode_cannot_produce(codec: KeyCodec[Any], text: str) -> None:
    with pytest.raises(KeyDecodeError, match=re.escape(f"{text!r} is not")):
        codec.decode(text)


@pytest.mark.parametrize("case", [c for c in CASES if c.id != "str"], ids=lambda c: c.id)
@settings(max_examples=100, deadline=None)
@given(data=hs.data())
def test_decode_accepts_only_canonical_text(case: Case, data: hs.DataObject) -> None:
    """Random text decodes only if it is the encoding of what it decodes to."""
    text = data.draw(hs.one_of(key_text(), hs.text("0123456789-:.TZe", max_size=30)))
    try:
        value = case.codec.decode(text)
    except KeyDecodeError:
        return
    assert case.codec.encode(value) == text


# --------------------------------------------------------------------------------------
# KeyFormat and codec_for

UserId = NewType("UserId", str)


class Model(BaseModel):
    a: int


class Mixed(enum.Enum):
    A = 1
    B = "b"


class Floaty(enum.Enum):
    A = 1.5


class Empty(enum.Enum):
    pass


class Perm(enum.IntFlag):
    R = 4
    W = 2


@pytest.mark.parametrize(
    ("annotation", "metadata", "expected"),
    [
        (str, [], StrCodec),
        (int, [], IntCodec),
        (int, [KeyFormat(width=6)], FixedIntCodec),
        (Annotated[int, KeyFormat(width=6)], [], FixedIntCodec),
        (Annotated[Annotated[int, "x"], KeyFormat(width=2)], [], FixedIntCodec),
        (bool, [], BoolCodec),
        (Decimal, [], DecimalCodec),
        (float, [], FloatCodec),
        (dt.datetime, [], DatetimeCodec),
        (dt.datetime, [KeyFormat(precision="s", naive="utc")], DatetimeCodec),
        (dt.date, [], DateCodec),
        (uuid.UUID, [], UUIDCodec),
        (Color, [], EnumCodec),
        (Level, [], EnumCodec),
        (Literal["a", "b"], [], LiteralCodec),
        (Literal[1, 2], [], LiteralCodec),
        (UserId, [], StrCodec),
        (int, ["unrelated metadata", KeyFormat()], IntCodec),
    ],
)
def test_codec_for(annotation: Any, metadata: list[Any], expected: type) -> None:
    assert type(codec_for(annotation, metadata, where="E.f")) is expected


def test_codec_for_options() -> None:
    fixed = codec_for(int, [KeyFormat(width=6)], where="E.f")
    assert fixed.params() == {"kind": "fixed_int", "width": 6}
    ts = codec_for(dt.datetime, [KeyFormat(precision="ms", naive="utc")], where="E.f")
    assert ts.params() == {"kind": "datetime", "precision": "ms"}
    assert ts.encode(dt.datetime(2026, 1, 1)) == "2026-01-01T00:00:00.000Z"


def test_codec_for_pydantic_field_info() -> None:
    class Event(BaseModel):
        seq: Annotated[int, KeyFormat(width=6)]
        ts: Annotated[dt.datetime, KeyFormat(precision="ms")]

    seq = Event.model_fields["seq"]
    ts = Event.model_fields["ts"]
    assert codec_for(seq.annotation, seq.metadata, where="Event.seq").params() == {
        "kind": "fixed_int",
        "width": 6,
    }
    assert codec_for(ts.annotation, ts.metadata, where="Event.ts").params() == {
        "kind": "datetime",
        "precision": "ms",
    }


WHERE = "AuditEvent.seq in template 'EVT#{ts}#{seq}'"


@pytest.mark.parametrize(
    ("annotation", "metadata", "match"),
    [
        (Optional[int], [], r"a key field cannot be optional"),  # noqa: UP045
        (int | None, [], r"a key field cannot be optional"),
        (Union[int, str], [], r"a key field cannot be a union"),  # noqa: UP007
        (list[str], [], r"key fields must be scalar, not list\[str\]"),
        (list, [], r"key fields must be scalar"),
        (dict, [], r"key fields must be scalar, not dict"),
        (dict[str, int], [], r"key fields must be scalar"),
        (set[int], [], r"key fields must be scalar"),
        (tuple[int, int], [], r"key fields must be scalar"),
        (Model, [], r"key fields must be scalar, not the model Model"),
        (type(None), [], r"cannot be None"),
        (Any, [], r"not supported in keys"),
        (bytes, [], r"type bytes is not supported in keys"),
        (dt.time, [], r"type time is not supported in keys"),
        (Mixed, [], r"enum Mixed has values of type int, str.*all str or all int"),
        (Floaty, [], r"enum Floaty has values of type float"),
        (Empty, [], r"enum Empty has no values"),
        (Perm, [], r"flag enum Perm cannot be a key field"),
        (Literal["a", 1], [], r"Literal\['a', 1\] has values of type int, str"),
        (Literal[True, False], [], r"has values of type bool"),
        (Literal[Plain.ONE], [], r"has values of type Plain"),
        (str, [KeyFormat(width=6)], r"KeyFormat option width=6 \(int fields only\).*str field"),
        (Level, [KeyFormat(width=6)], r"width=6 \(int fields only\)"),
        (int, [KeyFormat(precision="ms")], r"precision='ms' \(datetime fields only\).*int field"),
        (dt.date, [KeyFormat(naive="utc")], r"naive='utc' \(datetime fields only\).*date field"),
        (dt.datetime, [KeyFormat(width=3)], r"width=3 \(int fields only\)"),
        (int, [KeyFormat(width=3), KeyFormat(width=4)], r"more than one KeyFormat"),
    ],
)
def test_codec_for_refuses(annotation: Any, metadata: list[Any], match: str) -> None:
    with pytest.raises(ModelDefinitionError, match=match) as info:
        codec_for(annotation, metadata, where=WHERE)
    assert str(info.value).startswith(WHERE + ": ")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"width": 0}, r"width=0\): width must be an int >= 1"),
        ({"width": -3}, r"width=-3\)"),
        ({"width": True}, r"width=True\)"),
        ({"width": 2.0}, r"width=2.0\)"),
        ({"precision": "ns"}, r"precision='ns'\): precision must be 's', 'ms' or 'us'"),
        ({"naive": "local"}, r"naive='local'\): naive must be 'refuse' or 'utc'"),
    ],
)
def test_key_format_validation(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ModelDefinitionError, match=match):
        KeyFormat(**kwargs)


def test_key_format_is_frozen_and_hashable() -> None:
    fmt = KeyFormat(width=6)
    assert hash(fmt) == hash(KeyFormat(width=6))
    with pytest.raises(AttributeError):
        fmt.width = 3  # type: ignore[misc]


class _ZeroOffset(dt.tzinfo):
    """A tzinfo of offset zero that is none of the stdlib's or pydantic's."""

    def utcoffset(self, value: dt.datetime | None) -> dt.timedelta:
        return dt.timedelta(0)

    def dst(self, value: dt.datetime | None) -> dt.timedelta:
        return dt.timedelta(0)

    def tzname(self, value: dt.datetime | None) -> str:
        return "zero"


_ZONES = hs.sampled_from(
    [
        None,
        UTC,
        dt.timezone(dt.timedelta(0), "Z0"),
        dt.timezone(dt.timedelta(hours=3)),
        dt.timezone(-dt.timedelta(hours=5, minutes=30)),
        _ZeroOffset(),
        TzInfo(0),  # what pydantic gives a "...Z" text
    ]
)


def _fast_text_function(codec: KeyCodec[Any]) -> Callable[[Any], str | None]:
    """The codec's fast path as a function: its text, or None where its condition fails."""
    w = Writer(depth=1)
    fast = codec.fast_text(w, "x")
    assert fast is not None
    condition, text = fast
    lines = "".join(f"    {line}\n" for line in w.lines)
    scope = dict(w.values)
    exec(f"def function(x):\n{lines}    return ({text}) if {condition} else None", scope)
    function: Callable[[Any], str | None] = scope["function"]
    return function


@settings(max_examples=400, deadline=None)
@given(
    value=hs.datetimes(timezones=_ZONES | hs.timezones()),
    precision=hs.sampled_from(["s", "ms", "us"]),
    fraction=hs.sampled_from([None, 0, 1000, 999_000]),
    with_orjson=hs.booleans(),
)
def test_the_datetime_fast_path_is_the_codecs_text_where_it_applies(
    value: dt.datetime, precision: Any, fraction: int | None, with_orjson: bool
) -> None:
    # The generated code's text (through orjson, or isoformat without the lean extra) is
    # encode()'s for every value its condition takes: any year, fraction, precision and
    # zone.
    if fraction is not None:
        value = value.replace(microsecond=fraction)
    codec = DatetimeCodec(precision)
    dumps = fastpath_module.orjson_dumps() if with_orjson else None
    with patch.object(fastpath_module, "_orjson_dumps", dumps):
        fast = _fast_text_function(codec)(value)
    if fast is not None:
        assert fast == codec.encode(value)
    offset = value.utcoffset()
    # Every aware value it can store takes the fast path, at any offset of whole seconds
    # away from years 1 and 9999 (where the conversion could overflow).
    storable = offset is not None and not value.microsecond % codec._divisor
    if storable and (not offset or (not offset.microseconds and 1 < value.year < 9999)):
        assert fast is not None


@settings(max_examples=300, deadline=None)
@given(
    value=hs.dates() | hs.datetimes() | hs.uuids() | hs.text(max_size=3),
    codec=hs.sampled_from([DateCodec(), UUIDCodec()]),
    with_orjson=hs.booleans(),
)
def test_the_date_and_uuid_fast_paths_are_the_codecs_text_where_they_apply(
    value: Any, codec: KeyCodec[Any], with_orjson: bool
) -> None:
    # orjson's text where the lean extra is installed, isoformat and str where not: the
    # same as encode(). A datetime (a date subclass) and any other value are left to
    # encode(), which refuses them.
    dumps = fastpath_module.orjson_dumps() if with_orjson else None
    with patch.object(fastpath_module, "_orjson_dumps", dumps):
        fast = _fast_text_function(codec)(value)
    takes = uuid.UUID if isinstance(codec, UUIDCodec) else dt.date
    if value.__class__ is takes:
        assert fast == codec.encode(value)
        assert len(fast) == codec.max_chars()
    else:
        assert fast is None
        with pytest.raises(KeyEncodeError):
            codec.encode(value)


@MANY
@given(width=hs.integers(1, 25), data=hs.data())
def test_the_fixed_int_fast_path_is_the_codecs_text_where_it_applies(
    width: int, data: hs.DataObject
) -> None:
    codec = FixedIntCodec(width)
    value = data.draw(hs.integers(-(10**width), 10 ** (width + 1)) | hs.booleans())
    fast = _fast_text_function(codec)(value)
    if value.__class__ is int and 0 <= value < 10**width:
        assert fast == codec.encode(value)
    else:
        assert fast is None  # refused or converted by encode() itself
