"""Type aliases shared by every layer."""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = [
    "AttributeValue",
    "Item",
]

#: A DynamoDB low-level attribute value, e.g. ``{"S": "abc"}`` or ``{"N": "42"}``.
AttributeValue: TypeAlias = dict[str, Any]
#: A DynamoDB item (or key) in low-level form: attribute name -> attribute value.
Item: TypeAlias = dict[str, AttributeValue]
