"""DynamoDB's Number rules: at most 38 significant digits, magnitudes 1E-130 .. 1E+126."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, Final

from singletable.errors import ItemDecodeError, ItemEncodeError

#: DynamoDB numbers hold at most this many significant digits.
MAX_NUMBER_DIGITS: Final = 38
#: Largest magnitude DynamoDB stores.
MAX_NUMBER: Final = Decimal("9.9999999999999999999999999999999999999E+125")
#: Smallest non-zero magnitude DynamoDB stores.
MIN_NUMBER: Final = Decimal("1E-130")

_NUMBER_RANGE_TEXT: Final = "1E-130 .. 9.9999999999999999999999999999999999999E+125"
# Fast-path bounds that are safely inside DynamoDB's range for ints and floats; values
# outside them are checked exactly on the slow path.
INT_FAST_BOUND: Final = 10**MAX_NUMBER_DIGITS
FLOAT_FAST_LOW: Final = 1e-129
FLOAT_FAST_HIGH: Final = 9e125


def decimal_text(value: Decimal, where: str, shown: Any) -> str:
    """Validate a Decimal against DynamoDB's number rules and return its text."""
    if not value.is_finite():
        raise ItemEncodeError(
            f"{where}: {shown!r} is not a finite number; DynamoDB numbers cannot be NaN or infinite"
        )
    _sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # finite, checked above
    end = len(digits)
    while end and digits[end - 1] == 0:
        end -= 1
    start = 0
    while start < end and digits[start] == 0:
        start += 1
    if start == end:  # zero
        return "0"
    significant = end - start
    if significant > MAX_NUMBER_DIGITS:
        raise ItemEncodeError(
            f"{where}: {shown!r} has {significant} significant digits; DynamoDB numbers "
            f"hold at most {MAX_NUMBER_DIGITS}"
        )
    magnitude = value.copy_abs()  # abs() would round to the context's 28 digits
    if magnitude > MAX_NUMBER:
        raise ItemEncodeError(
            f"{where}: {shown!r} is too large; DynamoDB numbers must have a magnitude "
            f"within {_NUMBER_RANGE_TEXT}"
        )
    if magnitude < MIN_NUMBER:
        raise ItemEncodeError(
            f"{where}: {shown!r} is too small; DynamoDB numbers must be zero or have a "
            f"magnitude within {_NUMBER_RANGE_TEXT}"
        )
    if len(digits) > MAX_NUMBER_DIGITS:
        # Trailing zeros beyond 38 digits ("1" followed by 50 zeros): send the same value
        # without them ("1E+50"). DynamoDB stores either; moto cannot parse the long form
        # (decimal.Rounded inside its projections).
        return str(Decimal((_sign, digits[start:end], exponent + len(digits) - end)))
    return str(value)


def int_text(value: int, where: str) -> str:
    """The Number text of an int; `ItemEncodeError` naming ``where`` beyond 38 digits."""
    if -INT_FAST_BOUND < value < INT_FAST_BOUND:
        return str(value)
    # Large ints: check digits and range exactly (trailing zeros are not significant).
    try:
        as_decimal = Decimal(value)
    except ValueError as exc:  # int -> str digit limit
        raise ItemEncodeError(f"{where}: integer is too large for DynamoDB") from exc
    return decimal_text(as_decimal, where, value)


def float_text(value: float, where: str) -> str:
    """The Number text of a float (``repr``); NaN, infinities and out-of-range values refused."""
    if value != value or value in (float("inf"), float("-inf")):
        raise ItemEncodeError(
            f"{where}: {value!r} is not a finite number; DynamoDB numbers cannot be NaN or infinite"
        )
    if value == 0.0:
        return "0"
    text = repr(value)
    magnitude = abs(value)
    if FLOAT_FAST_LOW < magnitude < FLOAT_FAST_HIGH:
        return text
    # repr() has at most 17 significant digits, so only the range can fail here.
    decimal_text(Decimal(text), where, value)
    return text


def beyond_number_range(value: Any) -> bool:
    """Whether ``value`` is a finite number that a DynamoDB Number cannot hold.

    More than 38 significant digits, or a magnitude outside 1E-130 .. 1E+126: values a
    key codec can still encode (ints of up to 99 digits, decimal exponents to ±499).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return False
    try:
        number_text(value, "")
    except ItemEncodeError:
        return Decimal(value).is_finite()
    return False


def number_text(value: Any, where: str) -> str:
    """Convert any supported number (not bool) to DynamoDB number text, within its limits."""
    if isinstance(value, bool):
        raise ItemEncodeError(f"{where}: expected a number, got the bool {value!r}")
    if isinstance(value, int):
        return int_text(int(value), where)
    if isinstance(value, float):
        return float_text(float(value), where)
    if isinstance(value, Decimal):
        return decimal_text(value, where, value)
    raise ItemEncodeError(f"{where}: expected a number, got {type(value).__name__}")


def parse_number(text: Any, where: str) -> Decimal:
    """A stored Number's text as a Decimal; `ItemDecodeError` naming ``where`` if it is not one."""
    try:
        result = Decimal(text)
    except (InvalidOperation, TypeError, ValueError):
        raise ItemDecodeError(f"{where}: stored number {text!r} is not a number") from None
    if not result.is_finite():
        raise ItemDecodeError(f"{where}: stored number {text!r} is not finite")
    return result


def number_from_text(text: str) -> int | Decimal:
    """Generic number decoding: ``int`` for integral text, ``Decimal`` otherwise."""
    if "." not in text and "e" not in text and "E" not in text:
        try:
            return int(text)
        except ValueError:
            pass
    result = parse_number(text, "value")
    if result == result.to_integral_value():
        return int(result)
    return result
