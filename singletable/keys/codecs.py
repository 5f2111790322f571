"""Order-preserving key codecs and segment escaping.

A *key codec* turns one typed field value into the text of one key segment so that the
byte order of the text (UTF-8, which equals Python's ``str`` order by code point) is the
order of the values, and so that the text decodes back to the value. A
`SegmentEscaper` then makes the segment safe to join with the table's delimiter while
keeping that order (see ``docs/architecture.md``, "Key encoding").

The encodings are part of the stored-data contract: changing one changes every key
written with it. Each codec documents its encoding in its class docstring, and
`KeyCodec.params` reports everything that affects the stored bytes so model snapshots can
detect a change.

This module is pure Python with no I/O, and `KeyCodec.encode` is on the hot path of every
write, so encoders avoid regexes and ``strftime`` and use precomputed tables.
"""

from __future__ import annotations

import datetime as _dt
import enum
import itertools
import math
import string
import types
import typing
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar, Generic, Literal, TypeVar

import typing_extensions

from singletable.attributes.fastpath import Writer
from singletable.errors import KeyDecodeError, KeyEncodeError, ModelDefinitionError

__all__ = [
    "BoolCodec",
    "DateCodec",
    "DatetimeCodec",
    "DecimalCodec",
    "EnumCodec",
    "FixedIntCodec",
    "FloatCodec",
    "IntCodec",
    "KeyCodec",
    "KeyFormat",
    "LiteralCodec",
    "SegmentEscaper",
    "StrCodec",
    "UUIDCodec",
    "codec_for",
    "codec_from_params",
]

T = TypeVar("T")

_UTC = _dt.timezone.utc
#: Two-digit, zero-padded renderings of 0..99 (digit counts of the int codec).
_TWO = tuple(f"{i:02d}" for i in range(100))
#: Three-digit, zero-padded renderings of 0..999 (exponents of the decimal codec).
_THREE = tuple(map("".join, itertools.product("0123456789", repeat=3)))  # 4x faster to build
#: Nine's complement of every decimal digit: "0" <-> "9", "1" <-> "8", ...
_COMPLEMENT = str.maketrans("0123456789", "9876543210")
#: Maximum number of decimal digits the variable-width int codec stores.
_INT_MAX_DIGITS = 99
_INT_LIMIT = 10**_INT_MAX_DIGITS
#: Decimal exponent range (value = 0.d1d2...dn x 10**e) of the decimal codec.
_DEC_MIN_EXP = -499
_DEC_MAX_EXP = 499
_HEX_UPPER = frozenset("0123456789ABCDEF")
_ASCII_PUNCTUATION = frozenset(string.punctuation)

Precision = Literal["s", "ms", "us"]
NaivePolicy = Literal["refuse", "utc"]

_PRECISION_NAMES = {"s": "seconds", "ms": "milliseconds", "us": "microseconds"}


# --------------------------------------------------------------------------------------
# KeyFormat


@dataclass(frozen=True)
class KeyFormat:
    """Options for how a field is written into keys, used as ``Annotated`` metadata.

    Example: ``seq: Annotated[int, KeyFormat(width=6)]`` writes ``42`` as ``000042``.

    Attributes:
        width: int fields only: write the value zero-padded to exactly this many digits.
            Values must then lie in ``0..10**width - 1``. Without it, ints use the
            variable-width, sign-aware int encoding.
        precision: datetime fields only: fractional seconds stored in the key, ``"s"``
            (none), ``"ms"`` (3 digits) or ``"us"`` (6 digits, the default). A value
            with a finer fraction than this is refused, never truncated.
        naive: datetime fields only: ``"refuse"`` (the default) refuses naive datetimes;
            ``"utc"`` takes them as UTC.
    """

    width: int | None = None
    precision: Precision = "us"
    naive: NaivePolicy = "refuse"

    def __post_init__(self) -> None:
        if self.width is not None and (
            not isinstance(self.width, int) or isinstance(self.width, bool) or self.width < 1
        ):
            raise ModelDefinitionError(
                f"KeyFormat(width={self.width!r}): width must be an int >= 1 "
                "(the number of zero-padded digits)"
            )
        if self.precision not in _PRECISION_NAMES:
            raise ModelDefinitionError(
                f"KeyFormat(precision={self.precision!r}): precision must be 's', 'ms' or 'us'"
            )
        if self.naive not in ("refuse", "utc"):
            raise ModelDefinitionError(
                f"KeyFormat(naive={self.naive!r}): naive must be 'refuse' or 'utc'"
            )


# --------------------------------------------------------------------------------------
# KeyCodec base


class KeyCodec(ABC, Generic[T]):
    r"""Order-preserving conversion between one field value and one key segment's text.

    For values ``x`` and ``y`` of the codec's type: ``decode(encode(x)) == x``, and
    ``x < y`` exactly when ``encode(x) < encode(y)`` (as UTF-8 bytes, i.e. as ``str``).

    Attributes:
        kind: Name of the encoding, stored in model snapshots.
        min_char: The smallest character `encode` can ever output. ``"\x00"`` means
            arbitrary text. A `SegmentEscaper` is needed exactly when this is not above
            its escape character.
    """

    kind: ClassVar[str]
    min_char: str

    @abstractmethod
    def encode(self, value: T) -> str:
        """Encode a value into key text.

        Args:
            value: The field value.

        Returns:
            The order-preserving text.

        Raises:
            KeyEncodeError: The value has the wrong type or lies outside what the
                encoding can store; the message names the rule or limit.
        """

    @abstractmethod
    def decode(self, text: str) -> T:
        """Decode key text written by `encode`.

        Args:
            text: The (unescaped) segment text.

        Returns:
            The field value.

        Raises:
            KeyDecodeError: ``text`` is anything `encode` could not have produced.
        """

    def encode_prefix(self, partial: str) -> str:
        """Encode a partial value for a ``begins_with`` condition.

        Args:
            partial: The partial value, as text.

        Returns:
            The key text prefix.

        Raises:
            KeyEncodeError: This codec does not support partial values, or ``partial``
                is not a prefix of any value's encoding.
        """
        raise KeyEncodeError(
            f"{self.kind} key fields do not support partial values (begins_with); "
            "give the whole value"
        )

    def params(self) -> dict[str, Any]:
        """Everything that affects the stored bytes, JSON-able, for model snapshots.

        Returns:
            A dict with at least ``"kind"``.
        """
        return {"kind": self.kind}

    def fast_text(self, w: Writer, x: str) -> tuple[str, str] | None:
        """This codec's fast path as source, for generated item encoders.

        Args:
            w: The source writer (for constants and fresh names).
            x: The variable holding the value.

        Returns:
            ``(condition, text)``: expressions such that whenever ``condition`` holds,
            ``text`` equals ``encode(x)``; or None when the codec has no fast path (the
            generated code then calls `encode`).
        """
        del w, x
        return None

    def max_chars(self) -> int | None:
        """The most characters `encode` can return, or None if unbounded (or possibly empty)."""
        return None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items() if k != "kind")
        return f"{type(self).__name__}({args})"


def _type_error(kind: str, expected: str, value: object) -> KeyEncodeError:
    return KeyEncodeError(
        f"{kind} key value {value!r} has type {type(value).__name__}; expected {expected}"
    )


def _as_int(kind: str, value: object) -> int:
    """Return ``value`` as a plain int, refusing bools and non-ints."""
    if isinstance(value, bool):
        raise KeyEncodeError(
            f"{kind} key value {value!r} is a bool, not an int; use a bool field for flags"
        )
    if not isinstance(value, int):
        raise _type_error(kind, "int", value)
    return int(value)


# --------------------------------------------------------------------------------------
# str


class StrCodec(KeyCodec[str]):
    r"""Text, written as is.

    Encoding: identity (``""`` allowed). The output can contain any character, so the
    template layer always escapes it (``min_char == "\x00"``).
    """

    kind = "str"
    min_char = "\x00"

    def encode(self, value: str) -> str:
        """Encode a str: identity. See `KeyCodec.encode`."""
        if value.__class__ is str:
            return value
        if isinstance(value, str):
            return str.__str__(value)
        raise _type_error("str", "str", value)

    def fast_text(self, w: Writer, x: str) -> tuple[str, str]:
        """See `KeyCodec.fast_text`."""
        return f"{x}.__class__ is str", x

    def decode(self, text: str) -> str:
        """Decode a str: identity. See `KeyCodec.decode`."""
        return text

    def encode_prefix(self, partial: str) -> str:
        """A prefix of a str is a prefix of its encoding: identity."""
        return self.encode(partial)


# --------------------------------------------------------------------------------------
# int


class IntCodec(KeyCodec[int]):
    """Any int of at most 99 decimal digits, variable width, sign-aware.

    Encoding: for ``n >= 0``, the two-digit count of its decimal digits, then the
    digits (``0 -> "010"``, ``42 -> "0242"``). For ``n < 0``, ``"-"``, then
    ``99 - ndigits`` on two digits, then each digit ``d`` of ``|n|`` written as ``9 - d``
    (``-42 -> "-9757"``). ``"-"`` sorts below every digit, more digits sort further
    from zero, and complemented digits reverse the order of equal-length negatives.
    """

    kind = "int"
    min_char = "-"

    def encode(self, value: int) -> str:
        """Encode an int. See `KeyCodec.encode` and the class docstring."""
        if value.__class__ is not int:
            value = _as_int("int", value)
        if value >= 0:
            if value < _INT_LIMIT:
                s = str(value)
                return _TWO[len(s)] + s
        elif value > -_INT_LIMIT:
            s = str(-value)
            return "-" + _TWO[99 - len(s)] + s.translate(_COMPLEMENT)
        raise KeyEncodeError(
            f"int key value has more than {_INT_MAX_DIGITS} decimal digits "
            f"(the int key encoding stores at most {_INT_MAX_DIGITS})"
        )

    def fast_text(self, w: Writer, x: str) -> tuple[str, str]:
        """See `KeyCodec.fast_text`."""
        digits = w.var("digits")
        two = w.ref(_TWO, "two")
        return (
            f"{x}.__class__ is int and 0 <= {x} < {_INT_LIMIT}",
            f"{two}[len({digits} := str({x}))] + {digits}",
        )

    def max_chars(self) -> int:
        """See `KeyCodec.max_chars`."""
        return 3 + len(str(_INT_LIMIT))

    def decode(self, text: str) -> int:
        """Decode an int. See `KeyCodec.decode`."""
        if len(text) >= 3 and text.isascii():
            if text[0] == "-":
                count, digits = text[1:3], text[3:]
                if count.isdigit() and digits.isdigit():
                    ndigits = 99 - int(count)
                    if ndigits == len(digits) and digits[0] != "9":
                        return -int(digits.translate(_COMPLEMENT))
            else:
                count, digits = text[:2], text[2:]
                if count.isdigit() and digits.isdigit():
                    ndigits = int(count)
                    if ndigits == len(digits) and (ndigits == 1 or digits[0] != "0"):
                        return int(digits)
        raise KeyDecodeError(
            f"{text!r} is not an int key encoding "
            "(expected a 2-digit digit count then the digits, e.g. '0242' for 42, "
            "'-9757' for -42)"
        )


class FixedIntCodec(KeyCodec[int]):
    """A non-negative int zero-padded to a fixed width (``KeyFormat(width=w)``).

    Encoding: ``f"{n:0{w}d}"`` (``42 -> "000042"`` for ``w = 6``); values must lie in
    ``0..10**w - 1``.
    """

    kind = "fixed_int"
    min_char = "0"

    def __init__(self, width: int) -> None:
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            raise ModelDefinitionError(f"fixed-width int codec: width must be >= 1, got {width!r}")
        self.width = width
        self._limit = 10**width
        self._spec = f"0{width}d"

    def encode(self, value: int) -> str:
        """Encode an int zero-padded. See `KeyCodec.encode` and the class docstring."""
        if value.__class__ is not int:
            value = _as_int("fixed_int", value)
        if 0 <= value < self._limit:
            return format(value, self._spec)
        raise KeyEncodeError(
            f"int key value {value} does not fit KeyFormat(width={self.width}): "
            f"the key stores {self.width} digits, values 0..{self._limit - 1}"
        )

    def fast_text(self, w: Writer, x: str) -> tuple[str, str]:
        """See `KeyCodec.fast_text`."""
        return f"{x}.__class__ is int and 0 <= {x} < {self._limit}", f"format({x}, {self._spec!r})"

    def max_chars(self) -> int:
        """See `KeyCodec.max_chars`."""
        return self.width

    def decode(self, text: str) -> int:
        """Decode a fixed-width int. See `KeyCodec.decode`."""
        if len(text) == self.width and text.isascii() and text.isdigit():
            return int(text)
        raise KeyDecodeError(f"{text!r} is not a {self.width}-digit fixed-width int key encoding")

    def params(self) -> dict[str, Any]:
        """See `KeyCodec.params`."""
        return {"kind": self.kind, "width": self.width}


# --------------------------------------------------------------------------------------
# Decimal and float


def _encode_digits(negative: bool, digits: str, exp: int, what: object) -> str:
    """Encode ``(-1)**negative * 0.<digits> * 10**exp``; ``digits`` has no outer zeros."""
    if not _DEC_MIN_EXP <= exp <= _DEC_MAX_EXP:
        raise KeyEncodeError(
            f"decimal key value {what} is out of range: its exponent e (value = 0.d1d2... "
            f"x 10**e) is {exp}, the key stores {_DEC_MIN_EXP}..{_DEC_MAX_EXP}"
        )
    if negative:
        return "-" + _THREE[999 - (exp + 500)] + digits.translate(_COMPLEMENT) + ":"
    return "1" + _THREE[exp + 500] + digits


def _decode_digits(text: str) -> tuple[str, str, int] | None:
    """Parse a non-zero decimal encoding into ``(sign, digits, exp)``, or None if invalid."""
    if len(text) < 5 or not text.isascii():
        return None
    if text[0] == "1":
        head, digits, sign = text[1:4], text[4:], ""
        if not (head.isdigit() and digits.isdigit()) or "0" in (digits[0], digits[-1]):
            return None
        exp = int(head) - 500
    elif text[0] == "-" and text[-1] == ":" and len(text) >= 6:
        head, comp, sign = text[1:4], text[4:-1], "-"
        if not (head.isdigit() and comp.isdigit()) or "9" in (comp[0], comp[-1]):
            return None
        exp = 999 - int(head) - 500
        digits = comp.translate(_COMPLEMENT)
    else:
        return None
    if not _DEC_MIN_EXP <= exp <= _DEC_MAX_EXP:
        return None
    return sign, digits, exp


class DecimalCodec(KeyCodec[Decimal]):
    """A finite `decimal.Decimal` (ints are accepted too), compared by value.

    Encoding: zero (any sign or exponent) is ``"0"``. Otherwise the value is written
    as ``0.d1d2...dn x 10**e`` with ``d1 != 0`` and no trailing zeros, ``e`` in
    ``-499..499``. Positive: ``"1" + f"{e + 500:03d}" + digits`` (``1.5 -> "150115"``).
    Negative: ``"-" + f"{999 - (e + 500):03d}" + complemented digits + ":"``
    (``-1.5 -> "-49884:"``); the ``":"`` terminator sorts above every digit, so
    ``-1.5 > -1.51``. Decoding returns the normalised `Decimal` (equal by value).
    """

    kind = "decimal"
    min_char = "-"

    def encode(self, value: Decimal) -> str:
        """Encode a Decimal. See `KeyCodec.encode` and the class docstring."""
        if value.__class__ is not Decimal:
            if isinstance(value, Decimal):
                pass
            elif isinstance(value, int) and not isinstance(value, bool):
                value = Decimal(value)
            else:
                raise _type_error("decimal", "Decimal", value)
        if not value.is_finite():
            raise KeyEncodeError(f"decimal key value {value} is not finite (NaN and Infinity)")
        if not value:
            return "0"
        sign, digit_tuple, exponent = value.as_tuple()
        assert isinstance(exponent, int)  # finite
        digits = "".join(map(str, digit_tuple)).lstrip("0")
        exp = exponent + len(digits)
        return _encode_digits(bool(sign), digits.rstrip("0"), exp, value)

    def decode(self, text: str) -> Decimal:
        """Decode a Decimal. See `KeyCodec.decode`."""
        if text == "0":
            return Decimal(0)
        parsed = _decode_digits(text)
        if parsed is None:
            raise KeyDecodeError(f"{text!r} is not a decimal key encoding")
        sign, digits, exp = parsed
        return Decimal(f"{sign}{digits}E{exp - len(digits)}")


class FloatCodec(KeyCodec[float]):
    """A finite float, stored exactly in the decimal encoding.

    Encoding: the `DecimalCodec` encoding of ``Decimal(repr(x))`` (the shortest repr
    that round-trips, so the stored value is exact); ``-0.0`` and ``0.0`` are ``"0"``.
    NaN and infinities are refused. Ints are accepted when exactly representable.
    """

    kind = "float"
    min_char = "-"

    def encode(self, value: float) -> str:
        """Encode a float. See `KeyCodec.encode` and the class docstring."""
        if value.__class__ is not float:
            if isinstance(value, float):
                value = float(value)
            elif isinstance(value, int) and not isinstance(value, bool):
                number = int(value)
                value = float(number)
                if int(value) != number:
                    raise KeyEncodeError(
                        f"float key value {number} is not exactly representable as a float"
                    )
            else:
                raise _type_error("float", "float", value)
        if not math.isfinite(value):
            raise KeyEncodeError(
                f"float key value {value} is not finite: NaN and infinities have no key order"
            )
        if not value:
            return "0"
        negative = value < 0
        mantissa, _, exp_text = repr(-value if negative else value).partition("e")
        int_part, _, frac_part = mantissa.partition(".")
        digits = (int_part + frac_part).lstrip("0")
        exp = (int(exp_text) if exp_text else 0) - len(frac_part) + len(digits)
        return _encode_digits(negative, digits.rstrip("0"), exp, value)

    def decode(self, text: str) -> float:
        """Decode a float; strict: the text must be the float's canonical encoding."""
        if text == "0":
            return 0.0
        parsed = _decode_digits(text)
        if parsed is not None:
            sign, digits, exp = parsed
            value = float(f"{sign}0.{digits}e{exp}")
            if math.isfinite(value) and self.encode(value) == text:
                return value
        raise KeyDecodeError(f"{text!r} is not a float key encoding")


# --------------------------------------------------------------------------------------
# bool


class BoolCodec(KeyCodec[bool]):
    """A bool. Encoding: ``"false"`` / ``"true"`` (False sorts first)."""

    kind = "bool"
    min_char = "a"

    def encode(self, value: bool) -> str:
        """Encode a bool. See `KeyCodec.encode`."""
        if value is True:
            return "true"
        if value is False:
            return "false"
        raise _type_error("bool", "bool", value)

    def fast_text(self, w: Writer, x: str) -> tuple[str, str]:
        """See `KeyCodec.fast_text`."""
        return f"{x} is True or {x} is False", f"'true' if {x} else 'false'"

    def max_chars(self) -> int:
        """See `KeyCodec.max_chars`."""
        return 5

    def decode(self, text: str) -> bool:
        """Decode a bool. See `KeyCodec.decode`."""
        if text == "true":
            return True
        if text == "false":
            return False
        raise KeyDecodeError(f"{text!r} is not a bool key encoding (expected 'true' or 'false')")


# --------------------------------------------------------------------------------------
# datetime and date

#: Pattern templates: "9" stands for any ASCII digit, every other char for itself.
_DIGIT_CLASS = str.maketrans("0123456789", "9999999999")


#: Prefix patterns: a digit is the largest digit allowed at that position (month tens
#: <= 1, day tens <= 3, ...), every other char stands for itself.
_DATE_PREFIX_PATTERN = "9999-19-39"
#: Two-digit fields whose complete value is range-checked in prefixes: (start, lo, hi).
_PREFIX_FIELDS = ((5, 1, 12), (8, 1, 31), (11, 0, 23))


def _check_partial(kind: str, partial: str, pattern: str, example: str) -> str:
    if not isinstance(partial, str):
        raise _type_error(kind, "str (a prefix of the key form)", partial)
    ok = len(partial) <= len(pattern) and partial.isascii()
    if ok:
        for char, allowed in zip(partial, pattern, strict=False):
            if allowed.isdigit():
                if not (char.isdigit() and char <= allowed):
                    ok = False
                    break
            elif char != allowed:
                ok = False
                break
    if ok:
        for start, lo, hi in _PREFIX_FIELDS:
            field = partial[start : start + 2]
            if len(field) == 2 and not lo <= int(field) <= hi:
                ok = False
    if ok:
        return partial
    raise KeyEncodeError(
        f"{partial!r} is not a prefix of the {kind} key form {example!r} "
        "(give leading fields in exactly that form, e.g. '2026-06' or '2026-06-23T08')"
    )


class DatetimeCodec(KeyCodec[_dt.datetime]):
    """A timezone-aware datetime, stored in UTC at a fixed precision.

    Encoding: ``"YYYY-MM-DDTHH:MM:SS"``, then ``".ffffff"`` (precision ``"us"``),
    ``".fff"`` (``"ms"``) or nothing (``"s"``), then ``"Z"``, after conversion to UTC
    (e.g. ``"2026-06-23T08:00:00.000000Z"``). Naive datetimes are refused unless
    ``naive="utc"``. A value with a finer fraction than the precision is refused (never
    truncated). The year must be 1..9999 after conversion. Decoding returns an aware
    datetime with ``tzinfo=datetime.timezone.utc``.
    """

    kind = "datetime"
    min_char = "-"

    def __init__(self, precision: Precision = "us", naive: NaivePolicy = "refuse") -> None:
        if precision not in _PRECISION_NAMES or naive not in ("refuse", "utc"):
            raise ModelDefinitionError(
                f"datetime codec: bad precision {precision!r} or naive policy {naive!r}"
            )
        self.precision: Precision = precision
        self.naive: NaivePolicy = naive
        self._timespec = _PRECISION_NAMES[precision]
        self._length = {"s": 19, "ms": 23, "us": 26}[precision]
        self._divisor = {"s": 1_000_000, "ms": 1000, "us": 1}[precision]
        fraction = {"s": "", "ms": ".999", "us": ".999999"}[precision]
        self._pattern = "9999-99-99T99:99:99" + fraction + "Z"
        self._prefix_pattern = "9999-19-39T29:59:59" + fraction + "Z"
        self._example = (
            "2026-06-23T08:00:00" + {"s": "", "ms": ".000", "us": ".000000"}[precision] + "Z"
        )

    def encode(self, value: _dt.datetime) -> str:
        """Encode a datetime. See `KeyCodec.encode` and the class docstring."""
        if not isinstance(value, _dt.datetime):
            raise _type_error("datetime", "datetime.datetime", value)
        offset = value.utcoffset()
        if offset is None:
            if self.naive != "utc":
                raise KeyEncodeError(
                    f"datetime key value {value.isoformat()} is naive (no timezone); give an "
                    "aware datetime, or declare the field with KeyFormat(naive='utc') to "
                    "take naive values as UTC"
                )
        elif offset:
            try:
                value = value - offset
            except OverflowError:
                raise KeyEncodeError(
                    f"datetime key value {value.isoformat()} falls outside years 1..9999 "
                    "after conversion to UTC"
                ) from None
        if value.microsecond % self._divisor:
            raise KeyEncodeError(
                f"datetime key value {value.isoformat()} has {value.microsecond} "
                f"microseconds; the key stores {self._timespec} "
                f"(KeyFormat(precision={self.precision!r})); round the value first"
            )
        return value.isoformat(timespec=self._timespec)[: self._length] + "Z"

    def fast_text(self, w: Writer, x: str) -> tuple[str, str]:
        """See `KeyCodec.fast_text`."""
        # Only an aware value at UTC offset zero: then the conversion to UTC is the
        # identity and the text is the isoformat's prefix.
        offset = w.var("offset")
        condition = (
            f"{x}.__class__ is {w.ref(_dt.datetime, 'datetime')} and "
            f"({offset} := {x}.utcoffset()) is not None and not {offset}"
        )
        if self._divisor != 1:
            condition += f" and not {x}.microsecond % {self._divisor}"
        return condition, f"{x}.isoformat(timespec={self._timespec!r})[:{self._length}] + 'Z'"

    def max_chars(self) -> int:
        """See `KeyCodec.max_chars`."""
        return self._length + 1

    def decode(self, text: str) -> _dt.datetime:
        """Decode a datetime. See `KeyCodec.decode`."""
        if (
            len(text) == len(self._pattern)
            and text.isascii()
            and text.translate(_DIGIT_CLASS) == self._pattern
        ):
            try:
                return _dt.datetime.fromisoformat(text[:-1]).replace(tzinfo=_UTC)
            except ValueError:
                pass
        raise KeyDecodeError(
            f"{text!r} is not a datetime key encoding (expected the form {self._example!r})"
        )

    def encode_prefix(self, partial: str) -> str:
        """Validate a prefix of the canonical form (``"2026-06"``) and return it as is."""
        return _check_partial("datetime", partial, self._prefix_pattern, self._example)

    def params(self) -> dict[str, Any]:
        """See `KeyCodec.params`."""
        return {"kind": self.kind, "precision": self.precision}


class DateCodec(KeyCodec[_dt.date]):
    """A calendar date. Encoding: ``"YYYY-MM-DD"``; datetimes are refused."""

    kind = "date"
    min_char = "-"
    _pattern = "9999-99-99"

    def encode(self, value: _dt.date) -> str:
        """Encode a date. See `KeyCodec.encode`."""
        if isinstance(value, _dt.datetime):
            raise KeyEncodeError(
                f"date key value {value.isoformat()} is a datetime; pass value.date() "
                "(or declare the field as datetime)"
            )
        if not isinstance(value, _dt.date):
            raise _type_error("date", "datetime.date", value)
        return value.isoformat()

    def decode(self, text: str) -> _dt.date:
        """Decode a date. See `KeyCodec.decode`."""
        if len(text) == 10 and text.isascii() and text.translate(_DIGIT_CLASS) == self._pattern:
            try:
                return _dt.date.fromisoformat(text)
            except ValueError:
                pass
        raise KeyDecodeError(f"{text!r} is not a date key encoding (expected 'YYYY-MM-DD')")

    def encode_prefix(self, partial: str) -> str:
        """Validate a prefix of the canonical form (``"2026-06"``) and return it as is."""
        return _check_partial("date", partial, _DATE_PREFIX_PATTERN, "2026-06-23")


# --------------------------------------------------------------------------------------
# UUID

_HEX_CLASS = str.maketrans("0123456789abcdef", "xxxxxxxxxxxxxxxx")
_UUID_PATTERN = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"


class UUIDCodec(KeyCodec[uuid.UUID]):
    """A UUID. Encoding: the lower-case canonical 36-character form."""

    kind = "uuid"
    min_char = "-"

    def encode(self, value: uuid.UUID) -> str:
        """Encode a UUID. See `KeyCodec.encode`."""
        if not isinstance(value, uuid.UUID):
            raise _type_error("uuid", "uuid.UUID", value)
        return str(value)

    def fast_text(self, w: Writer, x: str) -> tuple[str, str]:
        """See `KeyCodec.fast_text`."""
        return f"{x}.__class__ is {w.ref(uuid.UUID, 'UUID')}", f"str({x})"

    def max_chars(self) -> int:
        """See `KeyCodec.max_chars`."""
        return 36

    def decode(self, text: str) -> uuid.UUID:
        """Decode a UUID. See `KeyCodec.decode`."""
        if len(text) == 36 and text.isascii() and text.translate(_HEX_CLASS) == _UUID_PATTERN:
            return uuid.UUID(text)
        raise KeyDecodeError(
            f"{text!r} is not a uuid key encoding (expected 36 lower-case hex/dash characters)"
        )


# --------------------------------------------------------------------------------------
# Enum and Literal


def _value_codec(values: Sequence[object], what: str, where: str) -> KeyCodec[Any]:
    """The codec for a set of all-str or all-int values (refusing anything else)."""
    if not values:
        raise ModelDefinitionError(f"{where}: {what} has no values")
    if all(type(v) is str for v in values):
        return StrCodec()
    if all(isinstance(v, int) and not isinstance(v, (bool, enum.Enum)) for v in values):
        return IntCodec()
    types_seen = sorted({type(v).__name__ for v in values})
    raise ModelDefinitionError(
        f"{where}: {what} has values of type {', '.join(types_seen)}; a key field's "
        "values must be all str or all int"
    )


class EnumCodec(KeyCodec[enum.Enum]):
    """An `enum.Enum` member, stored by value (the order of keys is the order of values).

    Encoding: str-valued enums (StrEnum included) write the value as a str field does
    (escaped by the template layer); int-valued enums (IntEnum included) use the
    `IntCodec` encoding of the value. Plain values equal to a member's value are also
    accepted. Decoding an unknown value raises `KeyDecodeError`.
    """

    kind = "enum"

    def __init__(self, enum_cls: type[enum.Enum], *, where: str = "enum key field") -> None:
        self.enum_cls = enum_cls
        members = list(enum_cls)
        self.values: list[Any] = [m.value for m in members]
        self._inner = _value_codec(self.values, f"enum {enum_cls.__name__}", where)
        self._value_type: type = str if isinstance(self._inner, StrCodec) else int
        self._by_value: dict[Any, enum.Enum] = dict(zip(self.values, members, strict=True))
        self.min_char = self._inner.min_char

    def encode(self, value: enum.Enum) -> str:
        """Encode a member by value. See `KeyCodec.encode` and the class docstring."""
        if isinstance(value, self.enum_cls):
            return self._inner.encode(value.value)
        if value.__class__ is self._value_type and value in self._by_value:
            return self._inner.encode(value)
        raise KeyEncodeError(
            f"enum key value {value!r} is not a member of {self.enum_cls.__name__} "
            f"(values: {self.values!r})"
        )

    def decode(self, text: str) -> enum.Enum:
        """Decode a member. See `KeyCodec.decode`."""
        try:
            return self._by_value[self._inner.decode(text)]
        except (KeyError, KeyDecodeError):
            raise KeyDecodeError(
                f"{text!r} is not the key encoding of a {self.enum_cls.__name__} value "
                f"(values: {self.values!r})"
            ) from None

    def params(self) -> dict[str, Any]:
        """See `KeyCodec.params`."""
        return {"kind": self.kind, "values": list(self.values)}


class LiteralCodec(KeyCodec[Any]):
    """One of the values of a ``Literal[...]`` of all-str or all-int values.

    Encoding: like `EnumCodec` over the literal values: str values as a str field,
    int values with the `IntCodec` encoding. Other values are refused.
    """

    kind = "literal"

    def __init__(self, values: Sequence[Any], *, where: str = "Literal key field") -> None:
        self.values: list[Any] = list(dict.fromkeys(values))
        self._inner = _value_codec(self.values, f"Literal{self.values!r}", where)
        self._value_type: type = str if isinstance(self._inner, StrCodec) else int
        self._allowed = frozenset(self.values)
        self.min_char = self._inner.min_char

    def encode(self, value: Any) -> str:
        """Encode a literal value. See `KeyCodec.encode`."""
        if value.__class__ is self._value_type and value in self._allowed:
            return self._inner.encode(value)
        raise KeyEncodeError(
            f"key value {value!r} is not one of the Literal values {self.values!r}"
        )

    def decode(self, text: str) -> Any:
        """Decode a literal value. See `KeyCodec.decode`."""
        try:
            value = self._inner.decode(text)
        except KeyDecodeError:
            value = None
        if value is not None and value in self._allowed:
            return value
        raise KeyDecodeError(
            f"{text!r} is not the key encoding of one of the Literal values {self.values!r}"
        )

    def params(self) -> dict[str, Any]:
        """See `KeyCodec.params`."""
        return {"kind": self.kind, "values": list(self.values)}


# --------------------------------------------------------------------------------------
# SegmentEscaper


class SegmentEscaper:
    """Order-preserving escaping of one key segment.

    Every character whose code point is ``<= ord(escape)`` is written as ``escape``
    followed by two upper-case hex digits of its code point (``" " -> "%20"``,
    ``"#" -> "%23"``, ``"%" -> "%25"``); every other character is written as is. The
    result never contains the delimiter, every character of it is above the
    delimiter, and it is a prefix code whose order is the order of the raw text, so
    ``a < b`` exactly when ``escape(a) + delimiter < escape(b) + delimiter``.

    Args:
        delimiter: The table's segment delimiter, one ASCII punctuation character.
        escape: The escape character: ASCII punctuation above the delimiter and below
            ``"0"``.

    Raises:
        ModelDefinitionError: The characters cannot give an order-preserving escaping.
    """

    def __init__(self, delimiter: str = "#", escape: str = "%") -> None:
        allowed = "".join(c for c in string.punctuation if c < "0")
        for name, char in (("delimiter", delimiter), ("escape", escape)):
            if not isinstance(char, str) or len(char) != 1 or not char.isascii():
                raise ModelDefinitionError(
                    f"key {name} {char!r} must be a single ASCII punctuation character"
                )
        if delimiter >= "/":
            raise ModelDefinitionError(
                f"key delimiter {delimiter!r} cannot be escaped order-preservingly: the escape "
                "character must sort above the delimiter, and every character up to the "
                "escape character must itself be escaped to keep key order, so any escape "
                f"above {delimiter!r} would escape digits or letters; choose a delimiter "
                f"among {' '.join(allowed[:-1])}"
            )
        if escape <= delimiter:
            raise ModelDefinitionError(
                f"key escape character {escape!r} must sort above the delimiter {delimiter!r} "
                "(the delimiter is escaped, and escaped text must sort above it)"
            )
        if escape >= "0":
            raise ModelDefinitionError(
                f"key escape character {escape!r} must sort below '0': every character up to "
                "the escape character is escaped to keep key order, so it would escape "
                f"digits and letters; choose one of {' '.join(c for c in allowed if c > delimiter)}"
            )
        for name, char in (("delimiter", delimiter), ("escape", escape)):
            if char not in _ASCII_PUNCTUATION:
                raise ModelDefinitionError(
                    f"key {name} {char!r} must be a single ASCII punctuation character "
                    f"(one of {' '.join(allowed)})"
                )
        self.delimiter = delimiter
        self.escape_char = escape
        self._table = {i: f"{escape}{i:02X}" for i in range(ord(escape) + 1)}

    def escape(self, text: str) -> str:
        """Escape one segment's text.

        Args:
            text: The raw text.

        Returns:
            The escaped text (unchanged when no character is ``<=`` the escape char).
        """
        return text.translate(self._table)

    def unescape(self, text: str) -> str:
        """Strict inverse of `escape`.

        Args:
            text: Escaped segment text.

        Returns:
            The raw text.

        Raises:
            KeyDecodeError: ``text`` is not something `escape` produces (a raw character
                ``<=`` the escape char, such as the delimiter, a malformed escape, or an
                escape of a character that needs none).
        """
        esc = self.escape_char
        if esc not in text:
            self._check_raw(text, text)
            return text
        parts = text.split(esc)
        out = [parts[0]]
        self._check_raw(parts[0], text)
        for part in parts[1:]:
            code = part[:2]
            if len(code) != 2 or not _HEX_UPPER.issuperset(code):
                raise KeyDecodeError(
                    f"malformed escape {esc + code!r} in key segment {text!r} "
                    f"(expected {esc!r} and two upper-case hex digits)"
                )
            point = int(code, 16)
            if point > ord(esc):
                raise KeyDecodeError(
                    f"non-canonical escape {esc + code!r} in key segment {text!r}: "
                    f"{chr(point)!r} is never escaped"
                )
            rest = part[2:]
            self._check_raw(rest, text)
            out.append(chr(point))
            out.append(rest)
        return "".join(out)

    def _check_raw(self, raw: str, text: str) -> None:
        if raw and min(raw) <= self.escape_char:
            bad = min(raw)
            what = "the delimiter" if bad == self.delimiter else "a character"
            raise KeyDecodeError(
                f"key segment {text!r} contains {what} {bad!r} unescaped "
                f"(characters up to {self.escape_char!r} must be escaped)"
            )

    def needed_for(self, codec: KeyCodec[Any]) -> bool:
        """Whether values of ``codec`` must be escaped (its output can reach the escape char).

        Args:
            codec: A key codec.

        Returns:
            True iff ``codec.min_char <= escape char``.
        """
        return codec.min_char <= self.escape_char

    def __repr__(self) -> str:
        return f"SegmentEscaper(delimiter={self.delimiter!r}, escape={self.escape_char!r})"


# --------------------------------------------------------------------------------------
# codec_for

_LITERAL_ORIGINS = {Literal, typing_extensions.Literal}
_ANNOTATED_ORIGINS = {typing.Annotated, typing_extensions.Annotated}
_COLLECTIONS = (list, tuple, set, frozenset, dict)


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__qualname__
    return repr(annotation)


def codec_for(annotation: Any, metadata: Sequence[Any], *, where: str) -> KeyCodec[Any]:
    """Choose the key codec of a field from its annotation and metadata.

    Args:
        annotation: The field's type, as in pydantic's ``FieldInfo.annotation``
            (``Annotated`` is stripped here too if present).
        metadata: The field's metadata, as in ``FieldInfo.metadata``; a `KeyFormat`
            among it selects options.
        where: Context for error messages, e.g.
            ``"AuditEvent.seq in template 'EVT#{ts}#{seq}'"``.

    Returns:
        The codec.

    Raises:
        ModelDefinitionError: The type cannot be a key field, or the `KeyFormat` options
            do not apply to it. The message starts with ``where``.
    """
    metadata = list(metadata)
    while typing_extensions.get_origin(annotation) in _ANNOTATED_ORIGINS:
        metadata.extend(annotation.__metadata__)
        annotation = annotation.__origin__
    while hasattr(annotation, "__supertype__"):  # typing.NewType
        annotation = annotation.__supertype__

    formats = [m for m in metadata if isinstance(m, KeyFormat)]
    if len(formats) > 1:
        raise ModelDefinitionError(f"{where}: more than one KeyFormat; merge them into one")
    fmt = formats[0] if formats else KeyFormat()

    codec = _codec_for_type(annotation, fmt, where)

    misapplied = []
    if fmt.width is not None and codec.kind != "fixed_int":
        misapplied.append(f"width={fmt.width!r} (int fields only)")
    if codec.kind != "datetime":
        if fmt.precision != "us":
            misapplied.append(f"precision={fmt.precision!r} (datetime fields only)")
        if fmt.naive != "refuse":
            misapplied.append(f"naive={fmt.naive!r} (datetime fields only)")
    if misapplied:
        raise ModelDefinitionError(
            f"{where}: KeyFormat option {', '.join(misapplied)} does not apply to a "
            f"{_type_name(annotation)} field; remove it"
        )
    return codec


def _codec_for_type(annotation: Any, fmt: KeyFormat, where: str) -> KeyCodec[Any]:  # noqa: C901 - one dispatch branch per supported key type
    origin = typing_extensions.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = typing_extensions.get_args(annotation)
        if type(None) in args:
            raise ModelDefinitionError(
                f"{where}: a key field cannot be optional ({_type_name(annotation)}); "
                "make the field required, or keep it out of key templates"
            )
        raise ModelDefinitionError(
            f"{where}: a key field cannot be a union ({_type_name(annotation)}); "
            "give it one scalar type"
        )
    if annotation is None or annotation is type(None):
        raise ModelDefinitionError(f"{where}: a key field cannot be None; give it a scalar type")
    if origin in _LITERAL_ORIGINS:
        return LiteralCodec(typing_extensions.get_args(annotation), where=where)
    if origin in _COLLECTIONS or annotation in _COLLECTIONS:
        raise ModelDefinitionError(
            f"{where}: key fields must be scalar, not {_type_name(annotation)}; "
            "put one scalar field per template segment"
        )
    if annotation is str:
        return StrCodec()
    if annotation is bool:
        return BoolCodec()
    if annotation is int:
        return FixedIntCodec(fmt.width) if fmt.width is not None else IntCodec()
    if annotation is Decimal:
        return DecimalCodec()
    if annotation is float:
        return FloatCodec()
    if annotation is _dt.datetime:
        return DatetimeCodec(fmt.precision, fmt.naive)
    if annotation is _dt.date:
        return DateCodec()
    if annotation is uuid.UUID:
        return UUIDCodec()
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        if issubclass(annotation, enum.Flag):
            raise ModelDefinitionError(
                f"{where}: flag enum {annotation.__name__} cannot be a key field "
                "(combined flags have no stored order); use a plain Enum"
            )
        return EnumCodec(annotation, where=where)
    if isinstance(annotation, type) and (
        hasattr(annotation, "model_fields") or hasattr(annotation, "__dataclass_fields__")
    ):
        raise ModelDefinitionError(
            f"{where}: key fields must be scalar, not the model {_type_name(annotation)}; "
            "use one of its scalar fields in the template instead"
        )
    raise ModelDefinitionError(
        f"{where}: type {_type_name(annotation)} is not supported in keys; use str, int, "
        "bool, Decimal, float, datetime, date, UUID, an Enum or a Literal of str or int values"
    )


def codec_from_params(params: Mapping[str, Any]) -> KeyCodec[Any]:
    """The codec that writes what `KeyCodec.params` describes (the inverse of ``params``).

    For the migration runner, which must compute keys the *old* model wrote (the guards of
    a constraint whose codec changed) from a snapshot, where no old class exists. An
    enum's codec comes back as the `LiteralCodec` over its values: it writes a value
    exactly as the enum's codec writes its member (pass ``member.value``).

    Raises:
        KeyDecodeError: ``params`` names no known codec.
    """
    kind = params.get("kind")
    simple: dict[str, Callable[[], KeyCodec[Any]]] = {
        "str": StrCodec,
        "int": IntCodec,
        "decimal": DecimalCodec,
        "float": FloatCodec,
        "bool": BoolCodec,
        "date": DateCodec,
        "uuid": UUIDCodec,
    }
    if kind in simple:
        return simple[kind]()
    if kind == "fixed_int":
        return FixedIntCodec(int(params["width"]))
    if kind == "datetime":
        return DatetimeCodec(params.get("precision", "us"), "utc")
    if kind in ("enum", "literal"):
        return LiteralCodec(list(params["values"]), where=f"stored {kind} codec")
    raise KeyDecodeError(f"no key codec {kind!r} (from a snapshot): {dict(params)!r}")
