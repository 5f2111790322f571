"""Compiled codecs of scalar values: str, bool, numbers, bytes, the text-stored types, any.

Each closure first checks the exact class of the value it was built for and falls back to
a slower, thorough path only when that check fails (a subclass, ``None``, a wrong type, an
out-of-range number). Each codec's fast path (a `FastPath` subclass) gives the generated
item encoder and decoder the same conversions as inline source.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from singletable.attributes.codec_parts import (
    NULL,
    TOP,
    Built,
    Encoder,
    KeyOrder,
    decode_mismatch,
    is_null,
    none_handler,
)
from singletable.attributes.convert import datetime_text, from_attribute_value, to_attribute_value
from singletable.attributes.fastpath import (
    DecodeExpr,
    Expr,
    FastPath,
    GenericFast,
    Writer,
    orjson_dumps,
    orjson_text,
)
from singletable.attributes.numbers import (
    FLOAT_FAST_HIGH,
    FLOAT_FAST_LOW,
    INT_FAST_BOUND,
    MAX_NUMBER_DIGITS,
    decimal_text,
    float_text,
    int_text,
    number_text,
    parse_number,
)
from singletable.errors import ItemDecodeError, ItemEncodeError, with_context
from singletable.types import AttributeValue


def scalar_str(where: str, nullable: bool, position: str, python: str) -> Built:
    """A ``str`` (or ``str`` subclass, or string literal) stored as ``S``."""
    on_none = none_handler(where, nullable, position)

    def slow(value: Any) -> AttributeValue | None:
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, str):
            return {"S": str(value)}
        raise ItemEncodeError(f"{where}: expected a str, got {type(value).__name__}")

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is str:
            return {"S": value}
        return slow(value)

    def from_av(av: AttributeValue) -> Any:
        try:
            return av["S"]
        except (KeyError, TypeError):
            if is_null(av):
                return None
            raise decode_mismatch(where, "S", av) from None

    # UTF-8 bytes sort like the code points they encode: DynamoDB orders the text as Python.
    fast = _StrFast(to_av, nullable=nullable)
    return Built(to_av, from_av, {"type": "S", "python": python}, fast, "ordered")


class _StrFast(FastPath):
    levels = 0

    def expression(self, w: Writer, x: str) -> Expr:
        return Expr(f"{x}.__class__ is str", "S", x, chars=f"len({x})")

    def decode(self, w: Writer, av: str, *, lax: bool = False) -> DecodeExpr:
        del lax
        return DecodeExpr(f"{av}['S']")


def scalar_bool(where: str, nullable: bool, position: str) -> Built:
    """A ``bool`` stored as ``BOOL``."""
    on_none = none_handler(where, nullable, position)

    def to_av(value: Any) -> AttributeValue | None:
        if value is True or value is False:
            return {"BOOL": value}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, bool):
            return {"BOOL": bool(value)}
        raise ItemEncodeError(f"{where}: expected a bool, got {type(value).__name__}")

    def from_av(av: AttributeValue) -> Any:
        try:
            return av["BOOL"]
        except (KeyError, TypeError):
            if is_null(av):
                return None
            raise decode_mismatch(where, "BOOL", av) from None

    return Built(
        to_av, from_av, {"type": "BOOL", "python": "bool"}, _BoolFast(to_av, nullable=nullable)
    )


class _BoolFast(FastPath):
    levels = 0

    def expression(self, w: Writer, x: str) -> Expr:
        return Expr(f"{x} is True or {x} is False", "BOOL", x, static=1)

    def decode(self, w: Writer, av: str, *, lax: bool = False) -> DecodeExpr:
        del lax
        return DecodeExpr(f"{av}['BOOL']")


def decode_number_slow(where: str, av: AttributeValue) -> Any:
    """A stored number read back by the thorough path (``NULL`` included)."""
    if is_null(av):
        return None
    raise decode_mismatch(where, "N", av)


def scalar_int(where: str, nullable: bool, position: str) -> Built:
    """An ``int`` stored as ``N``."""
    on_none = none_handler(where, nullable, position)
    low, high = -INT_FAST_BOUND, INT_FAST_BOUND

    def slow(value: Any) -> AttributeValue | None:
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, bool):
            return {"N": "1" if value else "0"}
        if isinstance(value, int):
            return {"N": int_text(int(value), where)}
        raise ItemEncodeError(f"{where}: expected an int, got {type(value).__name__}")

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is int and low < value < high:
            return {"N": str(value)}
        return slow(value)

    def from_slow(av: AttributeValue) -> Any:
        text = av.get("N") if isinstance(av, dict) else None
        if text is None:
            return decode_number_slow(where, av)
        number = parse_number(text, where)
        if number != number.to_integral_value():
            raise ItemDecodeError(f"{where}: stored number {text} is not an integer")
        return int(number)

    def from_av(av: AttributeValue) -> Any:
        try:
            return int(av["N"])
        except (KeyError, TypeError, ValueError):
            return from_slow(av)

    fast = _IntFast(to_av, nullable=nullable)
    return Built(to_av, from_av, {"type": "N", "python": "int"}, fast, "ordered")


#: Largest size (bytes) of any DynamoDB number attribute value.
MAX_NUMBER_SIZE = 21
#: Ints strictly within +-this fit one internal digit of CPython's ints (2**30 - 1).
_COMPACT_INT_BOUND = 2**30 - 1


class _IntFast(FastPath):
    levels = 0

    def expression(self, w: Writer, x: str) -> Expr:
        bound = INT_FAST_BOUND
        # Ints of one internal digit (|x| < 2**30) first: the interpreter compares those
        # with a specialised instruction, the 38-digit bounds by the generic comparison
        # (~145 instructions less per int; reading encode 1.15x -> 1.14x hand-written).
        # Each comparison written out, not chained: only a comparison followed by its
        # jump is specialised (~30 instructions less per int, callgrind).
        small = _COMPACT_INT_BOUND
        guard = (
            f"{x}.__class__ is int and ({-small} < {x} and {x} < {small} "
            f"or {-bound} < {x} and {x} < {bound})"
        )
        return Expr(guard, "N", f"str({x})", static=MAX_NUMBER_SIZE)

    def decode(self, w: Writer, av: str, *, lax: bool = False) -> DecodeExpr:
        if lax:
            return DecodeExpr(f"{av}['N']")  # parsed once, by pydantic (issue 24)
        return DecodeExpr(f"int({av}['N'])", "KeyError, TypeError, ValueError")


def scalar_float(where: str, nullable: bool, position: str) -> Built:
    """A ``float`` stored as ``N`` (its shortest round-trip text)."""
    on_none = none_handler(where, nullable, position)
    low, high = FLOAT_FAST_LOW, FLOAT_FAST_HIGH
    neg_low, neg_high = -low, -high

    def slow(value: Any) -> AttributeValue | None:
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            if isinstance(value, float):
                return {"N": float_text(float(value), where)}
            return {"N": number_text(value, where)}
        raise ItemEncodeError(f"{where}: expected a float, got {type(value).__name__}")

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is float and (low < value < high or neg_high < value < neg_low):
            return {"N": repr(value)}
        return slow(value)

    def from_av(av: AttributeValue) -> Any:
        try:
            return float(av["N"])
        except (KeyError, TypeError, ValueError):
            text = av.get("N") if isinstance(av, dict) else None
            if text is None:
                return decode_number_slow(where, av)
            raise ItemDecodeError(f"{where}: stored number {text!r} is not a number") from None

    # A Number, compared by value (NaN and infinities are refused): ordered like floats.
    fast = _FloatFast(to_av, nullable=nullable)
    return Built(to_av, from_av, {"type": "N", "python": "float"}, fast, "ordered")


class _FloatFast(FastPath):
    levels = 0

    def expression(self, w: Writer, x: str) -> Expr:
        low, high = FLOAT_FAST_LOW, FLOAT_FAST_HIGH
        # Comparisons written out, as for ints. Zero (stored as "0", `float_text`) is
        # tested last and kept on this path: a 0.0 used to send the whole item to the
        # field-by-field encoder, 1.4x the time of the item without it (reading).
        guard = (
            f"{x}.__class__ is float and ({low!r} < {x} and {x} < {high!r} "
            f"or {-high!r} < {x} and {x} < {-low!r} or {x} == 0.0)"
        )
        return Expr(guard, "N", f"(repr({x}) if {x} else '0')", static=MAX_NUMBER_SIZE)

    def decode(self, w: Writer, av: str, *, lax: bool = False) -> DecodeExpr:
        if lax:
            return DecodeExpr(f"{av}['N']")  # parsed once, by pydantic (issue 24)
        return DecodeExpr(f"float({av}['N'])", "KeyError, TypeError, ValueError")


def scalar_decimal(where: str, nullable: bool, position: str) -> Built:
    """A ``Decimal`` stored as ``N``."""
    on_none = none_handler(where, nullable, position)

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is Decimal:
            # Text of at most 38 characters holds at most 38 digits, and with that many
            # digits the adjusted exponent alone decides the range.
            text = str(value)
            if (
                len(text) <= MAX_NUMBER_DIGITS
                and value.is_finite()
                and -130 <= value.adjusted() <= 125
            ):
                return {"N": text}
            return {"N": decimal_text(value, where, value)}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            return {"N": number_text(value, where)}
        raise ItemEncodeError(f"{where}: expected a Decimal, got {type(value).__name__}")

    def from_av(av: AttributeValue) -> Any:
        try:
            text = av["N"]
        except (KeyError, TypeError):
            return decode_number_slow(where, av)
        return parse_number(text, where)

    fast = _DecimalFast(to_av, nullable=nullable)
    fast.from_av = from_av
    return Built(to_av, from_av, {"type": "N", "python": "Decimal"}, fast, "ordered")


class _DecimalFast(FastPath):
    levels = 0

    def expression(self, w: Writer, x: str) -> Expr:
        # The codec's own fast test: text of at most 38 characters holds at most 38
        # digits, and then a finite value with its adjusted exponent in range is stored
        # as that text. (Cheaper than testing the text for 'E', 'n' and 'N', 1690 against
        # 1818 instructions, and right whatever the context's `capitals`.)
        t = w.var("t")
        guard = (
            f"{x}.__class__ is {w.ref(Decimal, 'Decimal')} and len({t} := str({x})) <= "
            f"{MAX_NUMBER_DIGITS} and {x}.is_finite() and -130 <= {x}.adjusted() <= 125"
        )
        return Expr(guard, "N", t, static=MAX_NUMBER_SIZE)

    def decode(self, w: Writer, av: str, *, lax: bool = False) -> DecodeExpr:
        if lax:
            # Parsed once, by pydantic, which refuses NaN and infinities as the codec does
            # (a field allowing them is not lax: see `codegen`).
            return DecodeExpr(f"{av}['N']")
        d = w.var("d")
        number = f"({d} := {w.ref(Decimal, 'Decimal')}({av}['N']))"
        # Not finite, or not a number: the codec raises its own error.
        expression = f"{d} if {number}.is_finite() else {w.ref(self.from_av, 'decode')}({av})"
        return DecodeExpr(expression, "KeyError, TypeError, ValueError, ArithmeticError")


def scalar_bytes(where: str, nullable: bool, position: str) -> Built:
    """``bytes`` or ``bytearray`` stored as ``B``."""
    on_none = none_handler(where, nullable, position)

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is bytes:
            return {"B": value}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, (bytes, bytearray, memoryview)):
            return {"B": bytes(value)}
        raise ItemEncodeError(f"{where}: expected bytes, got {type(value).__name__}")

    def from_av(av: AttributeValue) -> Any:
        try:
            value = av["B"]
        except (KeyError, TypeError):
            if is_null(av):
                return None
            raise decode_mismatch(where, "B", av) from None
        return value if value.__class__ is bytes else bytes(value)

    # Binary compares as unsigned bytes, as Python compares bytes.
    fast = _BytesFast(to_av, nullable=nullable)
    return Built(to_av, from_av, {"type": "B", "python": "bytes"}, fast, "ordered")


class _BytesFast(FastPath):
    levels = 0

    def expression(self, w: Writer, x: str) -> Expr:
        return Expr(f"{x}.__class__ is bytes", "B", x, nbytes=f"len({x})")


def scalar_text(
    where: str,
    nullable: bool,
    position: str,
    cls: type[Any],
    python: str,
    to_text: Callable[[Any], str],
    from_text: Callable[[str], Any],
) -> Built:
    """Codec for types stored as their text form (datetime, date, time, UUID)."""
    on_none = none_handler(where, nullable, position)

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is cls:
            return {"S": to_text(value)}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, cls):
            return {"S": to_text(value)}
        raise ItemEncodeError(f"{where}: expected a {python}, got {type(value).__name__}")

    def from_av(av: AttributeValue) -> Any:
        try:
            text = av["S"]
        except (KeyError, TypeError):
            if is_null(av):
                return None
            raise decode_mismatch(where, "S", av) from None
        try:
            return from_text(text)
        except ValueError:
            return text  # let pydantic parse forms fromisoformat does not know (3.10 "Z")

    fast = _TextFast(to_av, cls, nullable=nullable)
    params = {"type": "S", "python": python}
    return Built(to_av, from_av, params, fast, TEXT_KEY_ORDER.get(cls, "none"))


class _TextFast(FastPath):
    """datetime (aware ones in UTC), date, time (naive only) and UUID: their text, inline."""

    levels = 0

    def __init__(self, to_av: Encoder, cls: type[Any], *, nullable: bool) -> None:
        super().__init__(to_av, nullable=nullable)
        self.cls = cls

    def expression(self, w: Writer, x: str) -> Expr:
        guard = f"{x}.__class__ is {w.ref(self.cls, self.cls.__name__)}"
        # orjson writes a datetime, a date and a UUID as their isoformat and str (between
        # JSON quotes), in C: 1,051 -> 282 ns a UTC datetime, 516 -> 175 ns a UUID, 195 ->
        # 134 ns a date (timeit; benchmarks/README.md, "Issue 24, round 16").
        if self.cls is _dt.datetime:
            # A value in UTC (whatever its tzinfo: pydantic parses "Z" as its own TzInfo)
            # or naive is stored as its isoformat, inline; any other offset goes to
            # `datetime_text`, which converts it (it used to send the whole item to the
            # field-by-field encoder). `timezone.utc` is tested first, by identity.
            utc = w.ref(_dt.timezone.utc, "utc")
            iso = f"{x}.isoformat(timespec='microseconds')"
            dumps = orjson_dumps()
            # orjson leaves the fraction out when the microsecond is zero.
            written = None if dumps is None else f"{w.ref(dumps, 'orjson_dumps')}({x})"
            in_utc = (
                iso
                if written is None
                else f"({orjson_text(w, x, iso)} if {x}.microsecond "
                f"else {written}[1:20].decode() + '.000000+00:00')"
            )
            value = (
                f"({in_utc} if {x}.tzinfo is {utc} else {iso} if not {x}.utcoffset() "
                f"else {w.ref(datetime_text, 'datetime_text')}({x}))"
            )
            return Expr(guard, "S", value, static=32)
        if self.cls is _dt.date:
            return Expr(guard, "S", orjson_text(w, x, f"{x}.isoformat()"), static=10)
        if self.cls is _dt.time:
            return Expr(guard + f" and {x}.tzinfo is None", "S", f"{x}.isoformat()", static=15)
        return Expr(guard, "S", orjson_text(w, x, f"str({x})"), static=36)  # UUID

    def decode(self, w: Writer, av: str, *, lax: bool = False) -> DecodeExpr | None:
        if self.cls is uuid.UUID:
            # uuid.UUID(text) costs more than pydantic's own parsing of the text, which a
            # lax model does; a strict one needs the UUID.
            return DecodeExpr(f"{av}['S']") if lax else None
        parse = w.ref(self.cls.fromisoformat, f"{self.cls.__name__}_parse")
        # A text fromisoformat refuses is returned as text by the codec, for pydantic.
        return DecodeExpr(f"{parse}({av}['S'])", "KeyError, TypeError, ValueError")


def generic_codec(where: str, nullable: bool, position: str, params: dict[str, Any]) -> Built:
    """Any value, by the generic runtime converter (``Any``, unions, unknown types)."""

    def to_av(value: Any) -> AttributeValue | None:
        if value is None:
            if position == TOP:
                return None
            return NULL
        if position == TOP and isinstance(value, (set, frozenset)) and not value:
            return None
        return to_attribute_value(value, where=where)

    def from_av(av: AttributeValue) -> Any:
        try:
            return from_attribute_value(av)
        except ItemDecodeError as exc:
            raise ItemDecodeError(with_context(where, exc)) from None

    return Built(to_av, from_av, params, GenericFast(to_av, where, nullable=True))


#: How the text forms of `SCALAR_TEXT_TYPES` order. A date's ISO text has fixed width, and
#: a UUID's canonical hex sorts like its integer (Python's UUID order). A datetime field
#: holds naive and aware values alike, which Python cannot order against each other: its
#: text (aware values in UTC) has one form per value, so it can be matched, not ranged.
#: A time keeps its own offset, so one instant has many texts.
TEXT_KEY_ORDER: dict[type[Any], KeyOrder] = {
    _dt.date: "ordered",
    uuid.UUID: "ordered",
    _dt.datetime: "equality",
    _dt.time: "none",
}

SCALAR_TEXT_TYPES: dict[type[Any], tuple[str, Callable[[Any], str], Callable[[str], Any]]] = {
    _dt.datetime: ("datetime", datetime_text, _dt.datetime.fromisoformat),
    _dt.date: ("date", _dt.date.isoformat, _dt.date.fromisoformat),
    _dt.time: ("time", _dt.time.isoformat, _dt.time.fromisoformat),
    uuid.UUID: ("UUID", str, uuid.UUID),
}
