"""Item size by DynamoDB's rules (names and values, numbers by significant digits)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from singletable.errors import ItemEncodeError, ItemTooDeepError, ItemTooLargeError
from singletable.types import AttributeValue

#: DynamoDB's maximum item size in bytes (400 KB), names and values included.
MAX_ITEM_SIZE: Final = 400 * 1024


#: Lists and maps DynamoDB nests in one attribute: 32 levels, the item counting as the
#: first (DynamoDB and DynamoDB Local 3.3.0 store 31 maps or lists around a value and
#: refuse 32, empty ones included; a set is a value, not a level).
MAX_NESTING: Final = 31


#: The UTF-8 bytes of an attribute name at most, a map's keys included: DynamoDB's names
#: are "less than 64 KB".
MAX_NAME_BYTES: Final = 65535
#: No name of at most this many characters can exceed `MAX_NAME_BYTES` (4 bytes each).
_NAME_CHARS_SAFE: Final = MAX_NAME_BYTES // 4


def name_too_long(name: str) -> bool:
    """Whether ``name`` (an attribute name, a map key) is over `MAX_NAME_BYTES` in UTF-8."""
    return len(name) > _NAME_CHARS_SAFE and _utf8_len(name) > MAX_NAME_BYTES


def long_name(names: Iterable[str]) -> str | None:
    """The first of ``names`` (a map's keys) over `MAX_NAME_BYTES` in UTF-8, if any."""
    for name in names:
        # The length test inline: it settles every usual key without a call.
        if len(name) > _NAME_CHARS_SAFE and name_too_long(name):
            return name
    return None


def name_error(where: str, name: str) -> ItemEncodeError:
    """The error for a map key DynamoDB refuses as too long an attribute name."""
    return ItemEncodeError(
        f"{where}: a map key of {_utf8_len(name):,} UTF-8 bytes ({name[:20]!r}...); DynamoDB "
        f"refuses attribute names, map keys included, over {MAX_NAME_BYTES:,} bytes"
    )


def nesting_error(where: str) -> ItemTooDeepError:
    """The error for a value that nests lists and maps deeper than `MAX_NESTING`."""
    return ItemTooDeepError(
        f"{where}: the value nests lists and maps more than {MAX_NESTING} levels deep; "
        f"DynamoDB stores at most {MAX_NESTING} in an attribute (32 levels, the item "
        "included) and refuses the whole request",
        limit=MAX_NESTING,
    )


def check_nesting(av: AttributeValue, where: str) -> AttributeValue:
    """Refuse an attribute value holding more than `MAX_NESTING` levels of lists and maps.

    Walked with a stack of its own, so a value of any depth is refused, not a
    `RecursionError`. Used where an attribute's depth is not known from its type (``Any``,
    a recursive model, a codec of the user's); the fast paths of ``dict[str, Any]`` and
    ``list[Any]`` count levels while they convert (`singletable.attributes.convert`).

    Returns:
        ``av`` itself.

    Raises:
        ItemTooDeepError: The value nests too deeply (`nesting_error`).
    """
    stack: list[tuple[Any, int]] = [(av, MAX_NESTING)]
    pop, push = stack.pop, stack.append
    while stack:
        node, room = pop()
        for kind, inner in node.items():
            if kind == "M":
                children = inner.values()
            elif kind == "L":
                children = inner
            else:
                continue
            if room == 0:
                raise nesting_error(where)
            for child in children:
                if child.__class__ is dict and ("M" in child or "L" in child):
                    push((child, room - 1))
    return av


def _utf8_len(text: str) -> int:
    # (A lone surrogate counts its 3 bytes here; requests holding one are refused before
    # sending, see `singletable.operations.limits`.)
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _number_size(text: Any) -> int:
    try:
        value = Decimal(text)
    except (InvalidOperation, TypeError, ValueError):
        raise ItemEncodeError(f"number {text!r} is not a valid DynamoDB number") from None
    if not value.is_finite():
        raise ItemEncodeError(f"number {text!r} is not a valid DynamoDB number")
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    end = len(digits)
    while end and digits[end - 1] == 0:
        end -= 1
        exponent += 1
    start = 0
    while start < end and digits[start] == 0:
        start += 1
    if start == end:
        return 1
    # Decimal powers of the most and least significant digits; digit pairs (base-100
    # digits) are aligned on the decimal point, so power p belongs to pair p // 2.
    low_power = exponent
    high_power = exponent + (end - start) - 1
    pairs = high_power // 2 - low_power // 2 + 1
    size = 1 + pairs + (1 if sign else 0)
    return min(size, 21)


def attribute_value_size(av: AttributeValue) -> int:
    """Return the size DynamoDB bills for one attribute value (its name not included).

    The rules, as documented in the DynamoDB Developer Guide ("Item sizes and formats",
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html)
    and made exact by measurement against DynamoDB Local 3.3.0 (bisecting the 1 KB write
    capacity boundary with ``ReturnConsumedCapacity``), which agrees with Zac Charles's
    calculator (github.com/zaccharles/dynamodb-calculator):

    * ``S``: UTF-8 bytes. ``B``: raw bytes (not base64). ``BOOL``, ``NULL``: 1.
    * ``N``: numbers are stored in base 100: ``1`` byte (exponent) plus one byte per
      base-100 digit, where the decimal digits are grouped in pairs *aligned on the
      decimal point* and zero pairs at either end are dropped; plus ``1`` for a negative
      number; at most ``21``. Zero is ``1``. So ``1``, ``10``, ``100`` and ``0.5`` are 2,
      ``110`` (``01 10``) and ``0.015`` (``.01 50``) are 3, ``-1`` is 3, ``12345`` is 4,
      38 nines are 20 and with a minus sign 21.
    * ``SS``, ``NS``, ``BS``: the sum of the elements' sizes, no overhead.
    * ``L``: ``3`` plus, per element, ``1`` plus the element's size.
    * ``M``: ``3`` plus, per entry, ``1`` plus the key's UTF-8 bytes plus the value's size.

    Args:
        av: A low-level attribute value such as ``{"N": "42"}``.

    Returns:
        The size in bytes.

    Raises:
        ItemEncodeError: ``av`` is not a well-formed attribute value.
    """
    if len(av) != 1:
        raise ItemEncodeError(f"not a DynamoDB attribute value: {av!r}")
    ((kind, value),) = av.items()
    if kind == "S":
        return _utf8_len(value)
    if kind == "N":
        return _number_size(value)
    if kind == "B":
        return len(value.encode("utf-8")) if isinstance(value, str) else len(value)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "L":
        return 3 + sum(1 + attribute_value_size(element) for element in value)
    if kind == "M":
        return 3 + sum(
            1 + _utf8_len(key) + attribute_value_size(element) for key, element in value.items()
        )
    if kind == "SS":
        return sum(_utf8_len(element) for element in value)
    if kind == "NS":
        return sum(_number_size(element) for element in value)
    if kind == "BS":
        return sum(len(e.encode("utf-8")) if isinstance(e, str) else len(e) for e in value)
    raise ItemEncodeError(f"not a DynamoDB attribute value: {av!r}")


def item_size(item: Mapping[str, AttributeValue]) -> int:
    """Return an item's size in bytes exactly as DynamoDB computes it.

    The size is the sum, over the attributes, of the name's UTF-8 bytes plus the value's
    size (see `attribute_value_size` for the rules and their source). Key attributes count
    like any other attribute.

    Args:
        item: A low-level item: attribute name -> attribute value.

    Returns:
        The size in bytes, as used for the 400 KB limit and capacity units.
    """
    return sum(_utf8_len(name) + attribute_value_size(av) for name, av in item.items())


def check_item_size(item: Mapping[str, AttributeValue], *, where: str) -> int:
    """Return the item's size, refusing items over DynamoDB's 400 KB limit.

    Args:
        item: A low-level item.
        where: The entity (or request) the item belongs to, for the error message.

    Returns:
        The item's size in bytes; exactly `MAX_ITEM_SIZE` is allowed.

    Raises:
        ItemTooLargeError: The item is larger than `MAX_ITEM_SIZE` bytes.
    """
    size = item_size(item)
    if size > MAX_ITEM_SIZE:
        raise ItemTooLargeError(
            f"{where}: item is {size} bytes, over DynamoDB's item size limit of "
            f"{MAX_ITEM_SIZE} bytes (400 KB); move large values to S3 or split the item",
            size=size,
            limit=MAX_ITEM_SIZE,
        )
    return size
