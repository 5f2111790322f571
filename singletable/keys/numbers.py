"""Key codecs of numbers: ints (variable or fixed width), Decimals and floats."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal
from typing import Any

from singletable.attributes.fastpath import Writer
from singletable.errors import KeyDecodeError, KeyEncodeError, ModelDefinitionError
from singletable.keys.codec_base import KeyCodec, as_int, type_error

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
            value = as_int("int", value)
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
            value = as_int("fixed_int", value)
        if 0 <= value < self._limit:
            return format(value, self._spec)
        raise KeyEncodeError(
            f"int key value {value} does not fit KeyFormat(width={self.width}): "
            f"the key stores {self.width} digits, values 0..{self._limit - 1}"
        )

    def fast_text(self, w: Writer, x: str) -> tuple[str, str]:
        """See `KeyCodec.fast_text`."""
        # In that range ``str(x).zfill(width)`` is the format's text at a third of its
        # cost (192 vs 575 ns timeit; an `AuditEvent`'s wire encoding 35.6k -> 34.4k
        # instructions, callgrind; benchmarks/README.md, "Lean batch writes").
        return f"{x}.__class__ is int and 0 <= {x} < {self._limit}", f"str({x}).zfill({self.width})"

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
                raise type_error("decimal", "Decimal", value)
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
                raise type_error("float", "float", value)
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
