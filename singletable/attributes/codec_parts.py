"""What every compiled attribute codec is built from.

A codec is a pair of closures (`Built`: ``to_av``, ``from_av``) with its JSON-able
description and its fast path. How it treats ``None`` and empty sets depends on where the
value sits (`TOP` or `NESTED`); the helpers here produce those answers and the errors a
stored value of the wrong kind raises.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any, Final, Literal

from singletable.attributes.fastpath import FastPath
from singletable.errors import ItemDecodeError, ItemEncodeError
from singletable.types import AttributeValue

NULL: Final[AttributeValue] = {"NULL": True}

Encoder = Callable[[Any], "AttributeValue | None"]
Decoder = Callable[["AttributeValue"], Any]


# How a codec treats None and empty sets depends on where the value sits: a top-level
# attribute (and a nested model's field) is omitted; inside a list or map there is no
# "omitted", so None is NULL and an empty set is an error.
TOP = "top"
NESTED = "nested"


def _kind_name(av: Any) -> str:
    if isinstance(av, dict) and len(av) == 1:
        return str(next(iter(av)))
    return repr(av)


def decode_mismatch(where: str, expected: str, av: Any) -> ItemDecodeError:
    """The error for a stored attribute value of another kind than ``expected``."""
    return ItemDecodeError(
        f"{where}: expected a stored {expected} attribute value, got {_kind_name(av)}"
    )


def none_handler(where: str, nullable: bool, position: str) -> Callable[[], Any]:
    """Return what to produce for a None value."""
    if nullable:
        if position == TOP:
            return lambda: None
        return lambda: NULL

    def refuse() -> Any:
        raise ItemEncodeError(f"{where}: None is not allowed; the field is not Optional")

    return refuse


def is_null(av: Any) -> bool:
    """Whether ``av`` is DynamoDB's ``{"NULL": True}``."""
    return isinstance(av, dict) and av.get("NULL") is True


#: How a codec's stored form can serve as a key attribute of its own (a native GSI part):
#: ``"ordered"``: a scalar S, N or B whose DynamoDB order (numbers by value, strings and
#: bytes by their bytes) is the order of the Python values, one stored form per value;
#: ``"equality"``: one stored form per value, so equal values meet in one partition, but
#: the stored order is not the values' order (or the values have none);
#: ``"none"``: not a key scalar, or one value has several stored forms.
KeyOrder = Literal["ordered", "equality", "none"]


class Built(typing.NamedTuple):
    """A compiled codec's parts: closures, description (``params``), fast path, `KeyOrder`."""

    to_av: Encoder
    from_av: Decoder
    params: dict[str, Any]
    fast: FastPath
    key_order: KeyOrder = "none"
