"""The generic runtime converter: any supported Python value <-> AttributeValue."""

from __future__ import annotations

import datetime as _dt
import enum
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pydantic

from singletable.attributes.numbers import number_from_text, number_text
from singletable.errors import ItemDecodeError, ItemEncodeError
from singletable.types import AttributeValue

_UTC = _dt.timezone.utc


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


def _model_to_av(value: pydantic.BaseModel, where: str) -> AttributeValue:
    result: dict[str, AttributeValue] = {}
    for name in type(value).model_fields:
        field_value = getattr(value, name)
        if isinstance(field_value, (set, frozenset)) and not field_value:
            continue  # empty sets are omitted, as for top-level attributes
        result[name] = to_attribute_value(field_value, where=f"{where}.{name}")
    return {"M": result}


def to_attribute_value(value: Any, *, where: str = "value") -> AttributeValue:  # noqa: C901 - one dispatch branch per supported runtime type
    """Convert a value of any supported type to a DynamoDB attribute value.

    This dispatches on the runtime type on every call; entity fields use the compiled
    codecs of `attribute_codec_for` instead. ``None`` becomes ``{"NULL": True}`` and an
    empty set is refused (DynamoDB has none).

    Args:
        value: The value to convert.
        where: What the value is, for error messages (e.g. ``"AuditEvent.score"``).

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
    if isinstance(value, pydantic.BaseModel):
        return _model_to_av(value, where)
    if isinstance(value, Mapping):
        result: dict[str, AttributeValue] = {}
        for key, element in value.items():
            if not isinstance(key, str):
                raise ItemEncodeError(
                    f"{where}: map keys must be strings to be stored as M, got {key!r}"
                )
            if not key:
                raise ItemEncodeError(
                    f"{where}: a map key is the empty string, which DynamoDB refuses "
                    "(empty attribute name); use a non-empty key"
                )
            result[key] = to_attribute_value(element, where=f"{where}[{key!r}]")
        return {"M": result}
    if isinstance(value, (list, tuple)):
        return {"L": [to_attribute_value(e, where=f"{where}[{i}]") for i, e in enumerate(value)]}
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
    if len(av) != 1:
        raise ItemDecodeError(f"not a DynamoDB attribute value: {av!r}")
    ((kind, value),) = av.items()
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
