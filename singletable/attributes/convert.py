"""The generic runtime converter: any supported Python value <-> AttributeValue."""

from __future__ import annotations

import datetime as _dt
import enum
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pydantic

from singletable.attributes.numbers import (
    FLOAT_FAST_HIGH,
    FLOAT_FAST_LOW,
    INT_FAST_BOUND,
    MAX_NUMBER_DIGITS,
    decimal_text,
    number_from_text,
    number_text,
)
from singletable.attributes.size import (
    MAX_NAME_BYTES,
    MAX_NESTING,
    attribute_value_size,
    long_name,
    name_error,
    name_too_long,
    nesting_error,
)
from singletable.errors import ItemDecodeError, ItemEncodeError
from singletable.types import AttributeValue

_UTC = _dt.timezone.utc
#: Largest size (bytes) of any DynamoDB number attribute value.
_MAX_NUMBER_SIZE = 21


def datetime_text(value: _dt.datetime) -> str:
    """A datetime attribute's stored text: aware values in UTC, always with microseconds.

    One offset and one width make the text sort like the instants, so range conditions
    and filters on datetime attributes compare correctly (a naive value stays naive).
    """
    if value.tzinfo is not None and value.utcoffset():
        value = value.astimezone(_UTC)
    return value.isoformat(timespec="microseconds")


def _set_to_av(value: set[Any] | frozenset[Any], where: str) -> AttributeValue:
    if not value:
        raise ItemEncodeError(
            f"{where}: an empty set cannot be stored inside a list or map (DynamoDB has no "
            "empty sets); use a list, or leave the set out"
        )
    if all(isinstance(e, str) for e in value):
        return {"SS": [str(e) for e in value]}
    if all(isinstance(e, (bytes, bytearray)) for e in value):
        return {"BS": [bytes(e) for e in value]}
    if all(isinstance(e, (int, float, Decimal)) and not isinstance(e, bool) for e in value):
        return {"NS": [number_text(e, where) for e in value]}
    raise ItemEncodeError(
        f"{where}: a set must hold only strings, only numbers or only bytes to be stored "
        "as SS, NS or BS"
    )


def _model_to_av(value: pydantic.BaseModel, where: str, room: int) -> AttributeValue:
    result: dict[str, AttributeValue] = {}
    for name in type(value).model_fields:
        field_value = getattr(value, name)
        if isinstance(field_value, (set, frozenset)) and not field_value:
            continue  # empty sets are omitted, as for top-level attributes
        result[name] = to_attribute_value(field_value, where=f"{where}.{name}", room=room - 1)
    return {"M": result}


def map_key(value: Any, where: str) -> str:
    """A map key as stored (a str subclass as its text), or the reason DynamoDB refuses it."""
    if not isinstance(value, str):
        raise ItemEncodeError(f"{where}: map keys must be strings to be stored as M, got {value!r}")
    key = value if value.__class__ is str else str(value)
    if not key:
        raise ItemEncodeError(
            f"{where}: a map key is the empty string, which DynamoDB refuses "
            "(empty attribute name); use a non-empty key"
        )
    if name_too_long(key):
        raise name_error(where, key)
    return key


def to_attribute_value(  # noqa: C901 - one dispatch branch per supported runtime type
    value: Any, *, where: str = "value", room: int = MAX_NESTING
) -> AttributeValue:
    """Convert a value of any supported type to a DynamoDB attribute value.

    This dispatches on the runtime type on every call; entity fields use the compiled
    codecs of `attribute_codec_for` instead. ``None`` becomes ``{"NULL": True}`` and an
    empty set is refused (DynamoDB has none).

    Args:
        value: The value to convert.
        where: What the value is, for error messages (e.g. ``"AuditEvent.score"``).
        room: Levels of lists and maps the value may hold (`MAX_NESTING` for an
            attribute): deeper is refused, and a value of any depth gives that error,
            not a `RecursionError`.

    Returns:
        A low-level attribute value.

    Raises:
        ItemEncodeError: The value's type is not supported or it breaks a DynamoDB rule.
    """
    cls = value.__class__
    if cls is str:
        return {"S": value}
    if value is None:
        return {"NULL": True}
    if cls is bool:
        return {"BOOL": value}
    if cls is int or cls is float or cls is Decimal:
        return {"N": number_text(value, where)}
    if isinstance(value, enum.Enum):
        return to_attribute_value(value.value, where=where)
    if isinstance(value, str):
        return {"S": str(value)}
    if isinstance(value, bool):
        return {"BOOL": bool(value)}
    if isinstance(value, (int, float, Decimal)):
        return {"N": number_text(value, where)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"B": bytes(value)}
    if isinstance(value, _dt.datetime):
        return {"S": datetime_text(value)}
    if isinstance(value, (_dt.date, _dt.time)):
        return {"S": value.isoformat()}
    if isinstance(value, uuid.UUID):
        return {"S": str(value)}
    if isinstance(value, (set, frozenset)):
        return _set_to_av(value, where)
    if isinstance(value, (pydantic.BaseModel, Mapping, list, tuple)) and room < 1:
        raise nesting_error(where)
    if isinstance(value, pydantic.BaseModel):
        return _model_to_av(value, where, room)
    if isinstance(value, Mapping):
        result: dict[str, AttributeValue] = {}
        for raw_key, element in value.items():
            key = map_key(raw_key, where)
            result[key] = to_attribute_value(element, where=f"{where}[{key!r}]", room=room - 1)
        return {"M": result}
    if isinstance(value, (list, tuple)):
        return {
            "L": [
                to_attribute_value(e, where=f"{where}[{i}]", room=room - 1)
                for i, e in enumerate(value)
            ]
        }
    raise ItemEncodeError(
        f"{where}: cannot store a {cls.__name__} value in DynamoDB; supported are str, "
        "int, float, Decimal, bool, bytes, datetime, date, time, UUID, Enum, list, tuple, "
        "set, dict and pydantic models"
    )


def from_attribute_value(av: AttributeValue) -> Any:
    """Convert a DynamoDB attribute value back to a plain Python value.

    ``N`` becomes ``int`` when the number is integral and ``Decimal`` otherwise, ``B``
    ``bytes``, ``L`` a list, ``M`` a dict, ``SS`` / ``NS`` / ``BS`` a set and ``NULL``
    ``None``.

    Args:
        av: A low-level attribute value.

    Returns:
        The Python value.

    Raises:
        ItemDecodeError: ``av`` is not a well-formed attribute value.
    """
    try:
        ((kind, value),) = av.items()
    except (ValueError, AttributeError):
        # Tested after the fact: a length test first cost an eighth of decoding a nested
        # dict[str, Any] (bench_family trail decode 1.22x -> 1.17x hand-written instructions).
        if len(av) != 1:
            raise ItemDecodeError(f"not a DynamoDB attribute value: {av!r}") from None
        raise
    if kind == "S":
        return value
    if kind == "N":
        return number_from_text(value)
    if kind == "BOOL":
        return bool(value)
    if kind == "NULL":
        return None
    if kind == "B":
        return bytes(value)
    if kind == "L":
        return [from_attribute_value(e) for e in value]
    if kind == "M":
        return {k: from_attribute_value(e) for k, e in value.items()}
    if kind == "SS":
        return set(value)
    if kind == "NS":
        return {number_from_text(e) for e in value}
    if kind == "BS":
        return {bytes(e) for e in value}
    raise ItemDecodeError(f"not a DynamoDB attribute value: {av!r}")


def _text_bound(text: str) -> int:
    # str.isascii() is O(1) in CPython: ASCII text is one byte a character, other text
    # at most four.
    return len(text) if text.isascii() else 4 * len(text)


def to_attribute_value_sized(
    value: Any, where: str = "value", room: int = MAX_NESTING
) -> tuple[AttributeValue, int]:
    """`to_attribute_value` and a bound of the result's size in bytes, in one walk.

    The common JSON-like shapes (exact ``str``, ``int``, ``float``, ``bool``, ``None``,
    ``dict`` with non-empty string keys, ``list``, ``tuple``) are converted here while the
    size is counted; anything else is converted by `to_attribute_value` and measured by
    `attribute_value_size`.

    Args:
        value: The value to convert.
        where: What the value is, for error messages.
        room: Levels of lists and maps the value may hold, as for `to_attribute_value`.

    Returns:
        ``(attribute_value, bound)`` with the attribute value equal to
        ``to_attribute_value(value)`` and ``bound`` at least its size.

    Raises:
        ItemEncodeError: The value cannot be stored, or holds a map key this function
            leaves to `to_attribute_value` (the message may then name a less precise
            place: call `to_attribute_value` for the exact one).
    """
    cls = value.__class__
    if cls is str:
        return {"S": value}, _text_bound(value)
    if cls is int:
        if -INT_FAST_BOUND < value < INT_FAST_BOUND:
            return {"N": str(value)}, _MAX_NUMBER_SIZE
    elif cls is bool:
        return {"BOOL": value}, 1
    elif cls is float:
        if FLOAT_FAST_LOW < value < FLOAT_FAST_HIGH or -FLOAT_FAST_HIGH < value < -FLOAT_FAST_LOW:
            return {"N": repr(value)}, _MAX_NUMBER_SIZE
    elif value is None:
        return {"NULL": True}, 1
    elif cls is dict:
        return sized_map(value, where, room)
    elif cls is list or cls is tuple:
        return sized_list(value, where, room)
    av = to_attribute_value(value, where=where, room=room)
    return av, attribute_value_size(av)


# sized_map and sized_list convert their commonest entries (text, small ints, booleans,
# None, Decimals, nested dicts and lists) without a dispatching call each, and count text
# bounds inline: they run once per `dict[str, Any]` field on every write. A map key counts
# 4 bytes a character (no isascii() test per key), and a finite non-zero Decimal whose
# text has at most 38 characters and whose adjusted exponent is in range is stored as
# that text without `decimal_text` (which returns that text for it).
# Both measured on bench_family's trail (a nested dict[str, Any]): sized_map 1.11x ->
# ~0.9x the instructions of the hand-written converter (benchmarks/README.md).
# They count the levels of lists and maps they open (``room``), so DynamoDB's nesting
# limit is enforced while converting, not by a second walk of the value.


def _number_text(value: Decimal, where: str) -> str:
    """A Decimal's stored text inside ``dict[str, Any]`` / ``list[Any]`` values.

    A finite, non-zero Decimal of at most 38 characters whose exponent is in range is a
    Number as ``str`` writes it, so that text is taken without `decimal_text`'s digit walk;
    anything else goes through `decimal_text`, which normalises or refuses it.
    """
    text = str(value)
    if (
        len(text) <= MAX_NUMBER_DIGITS
        and value  # decimal_text writes every zero as "0"
        and value.is_finite()
        and -130 <= value.adjusted() <= 125
    ):
        return text
    return decimal_text(value, where, value)


def sized_map(
    value: dict[Any, Any], where: str, room: int = MAX_NESTING
) -> tuple[AttributeValue, int]:
    """`to_attribute_value_sized` of an exact ``dict`` (same result, same errors)."""
    if room < 1:
        raise nesting_error(where)
    entries: dict[str, AttributeValue] = {}
    size = 3 + len(value)  # the map's own bytes, and one per entry
    for key, element in value.items():
        if key.__class__ is not str or not key:
            raise ItemEncodeError(f"{where}: map key {key!r} is left to the full converter")
        size += 4 * len(key)
        kind = element.__class__
        if kind is str:
            entries[key] = {"S": element}
            size += len(element) if element.isascii() else 4 * len(element)
        elif kind is int and -INT_FAST_BOUND < element < INT_FAST_BOUND:
            entries[key] = {"N": str(element)}
            size += _MAX_NUMBER_SIZE
        elif kind is bool:
            entries[key] = {"BOOL": element}
            size += 1
        elif element is None:
            entries[key] = {"NULL": True}
            size += 1
        elif kind is Decimal:
            # decimal_text refuses what no Number holds, so the largest Number's size bounds it.
            entries[key] = {"N": _number_text(element, where)}
            size += _MAX_NUMBER_SIZE
        elif kind is dict:
            entries[key], element_size = sized_map(element, where, room - 1)
            size += element_size
        elif kind is list or kind is tuple:
            entries[key], element_size = sized_list(element, where, room - 1)
            size += element_size
        else:
            entries[key], element_size = to_attribute_value_sized(element, where, room - 1)
            size += element_size
    # A key over DynamoDB's name limit makes the map's bound (4 bytes a key character)
    # larger than the limit: the keys are looked at only then, once a map.
    if size > MAX_NAME_BYTES and long_name(entries) is not None:
        raise ItemEncodeError(f"{where}: a map key is left to the full converter")
    return {"M": entries}, size


def sized_list(
    value: list[Any] | tuple[Any, ...], where: str, room: int = MAX_NESTING
) -> tuple[AttributeValue, int]:
    """`to_attribute_value_sized` of an exact ``list`` or ``tuple``."""
    if room < 1:
        raise nesting_error(where)
    elements: list[AttributeValue] = []
    size = 3 + len(value)  # the list's own bytes, and one per element
    for element in value:
        kind = element.__class__
        if kind is str:
            elements.append({"S": element})
            size += len(element) if element.isascii() else 4 * len(element)
        elif kind is int and -INT_FAST_BOUND < element < INT_FAST_BOUND:
            elements.append({"N": str(element)})
            size += _MAX_NUMBER_SIZE
        elif kind is bool:
            elements.append({"BOOL": element})
            size += 1
        elif element is None:
            elements.append({"NULL": True})
            size += 1
        elif kind is Decimal:
            elements.append({"N": _number_text(element, where)})
            size += _MAX_NUMBER_SIZE
        elif kind is dict:
            av, element_size = sized_map(element, where, room - 1)
            elements.append(av)
            size += element_size
        else:
            av, element_size = to_attribute_value_sized(element, where, room - 1)
            elements.append(av)
            size += element_size
    return {"L": elements}, size
