"""The two sides of an entity's stored items, each field's value as a symbol, and `Effect`.

A field's value is what the item stores (`Stored`), a constant default (`Const`), a fresh
value from a default factory (`Fresh`), or unreadable (`Unreadable`); `Comparison` gives
it for either side, for an item that stores the field's attribute or not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from singletable.tooling.migrations.codec_changes import (
    codec_params,
    narrowing,
    stores_alike,
    widens,
)

__all__ = [
    "NONE",
    "Comparison",
    "Const",
    "Effect",
    "Fresh",
    "Side",
    "Stored",
    "Symbol",
    "Unreadable",
    "absent_value",
    "may_be_absent",
    "numbers_convert",
    "show",
    "stores_none",
]


@dataclass(frozen=True)
class Effect:
    """One way stored items of an entity differ under the new model.

    Attributes:
        subject: What differs, e.g. ``"GSI1 key"``, ``"attribute status"``, ``"ttl"``.
        reason: Why, in terms of stored items, and what to do.
        rewrite: Stored items differ from what the new model writes; rewriting them
            with the new model makes them match.
        unreadable: Some stored items no longer decode under the new model.
        needs_transform: Why a mechanical rewrite (read with the new model, write it
            back) fails for some stored values, or ``None`` when it works for all.
    """

    subject: str
    reason: str
    rewrite: bool = True
    unreadable: bool = False
    needs_transform: str | None = None


@dataclass(frozen=True)
class Stored:
    """The value the stored item holds for a field, read unchanged."""

    field: str


@dataclass(frozen=True)
class Const:
    """A constant: the default an absent attribute reads as (``stored=None``: None)."""

    stored: Any

    @property
    def is_none(self) -> bool:
        """Whether the constant is None."""
        return self.stored is None

    def text(self) -> str:
        """The constant as a reader would write it (`repr` of a string or number)."""
        if self.stored is None:
            return "None"
        value = self.stored
        if isinstance(value, dict) and len(value) == 1:
            ((kind, inner),) = value.items()
            if kind in ("S", "N"):
                return repr(inner)
        return json.dumps(value, sort_keys=True)


@dataclass(frozen=True)
class Fresh:
    """A new value from a default factory, made on every read."""

    factory: str


@dataclass(frozen=True)
class Unreadable:
    """The field does not decode under the new model."""

    why: str


Symbol = Stored | Const | Fresh | Unreadable
NONE = Const(None)


def absent_value(attr: Mapping[str, Any] | None) -> Symbol:
    """What a model reads for a field whose attribute the item does not store."""
    if attr is None:
        return NONE  # the model has no such field: nothing is written for it
    if "default" not in attr:
        if attr.get("nullable") or attr.get("type") in ("set", "frozenset"):
            return NONE  # a required Optional reads None; a set reads empty (omitted)
        if attr.get("required", True):
            return Unreadable("required, and stored items do not have it")
        return NONE  # older snapshots did not record defaults
    default = attr["default"]
    if default is None:
        return NONE
    if "factory" in default:
        return Fresh(str(default["factory"]))
    if "unencodable" in default:
        return Unreadable(f"its default {default['unencodable']} cannot be stored")
    return Const(default.get("stored"))


def stores_none(attr: Mapping[str, Any]) -> bool:
    """Whether the model writes a ``None`` of this field as NULL (see `FieldPlan`).

    An optional field whose default is another value (a factory's included; not a set,
    whose absence reads as None): left out, the attribute would read back as the default.
    """
    default = attr.get("default")
    return (
        bool(attr.get("nullable"))
        and default is not None
        and attr.get("type")
        not in (
            "SS",
            "NS",
            "BS",
            "set",
            "frozenset",
        )
    )


def may_be_absent(attr: Mapping[str, Any] | None) -> bool:
    """Whether an item written by a model can lack the field's attribute (None, empty set)."""
    if attr is None:
        return True
    if attr.get("nullable") or attr.get("type") in ("set", "frozenset", "any"):
        return True
    return "default" in attr and attr["default"] is None


def numbers_convert(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether every stored value of ``before`` reads as a value of ``after``.

    Numbers read as ``float`` or ``Decimal``, and any stored text reads as a ``str``;
    the value may then be stored or keyed differently, which the comparisons see.
    """
    b, a = codec_params(before), codec_params(after)
    if b.get("type") == a.get("type") == "S" and a.get("python") == "str":
        return "nullable" not in b or "nullable" in a
    return (
        b.get("type") == a.get("type") == "N"
        and b.get("python") in ("int", "float", "Decimal")
        and a.get("python") in ("float", "Decimal")
    )


def show(value: Symbol) -> str:
    """A symbol in a sentence: the default, a fresh value, the stored value."""
    if isinstance(value, Const):
        return value.text()
    if isinstance(value, Fresh):
        return f"a fresh {value.factory}()"
    if isinstance(value, Unreadable):
        return "nothing (unreadable)"
    return f"the stored {value.field}"


@dataclass
class Side:
    """One model's view of an entity's stored items."""

    entity: Mapping[str, Any]
    encoding: Mapping[str, Any]

    @property
    def attributes(self) -> Mapping[str, Any]:
        """The entity's fields, by name, as the snapshot describes them."""
        result: Mapping[str, Any] = self.entity["attributes"]
        return result


class Comparison:
    """The old and new side of one entity, and the per-field value symbols."""

    def __init__(self, old: Side, new: Side) -> None:
        self.old, self.new = old, new
        self.transforms: dict[str, str] = {}

    def old_value(self, field: str, stored: bool) -> Symbol:
        """What the old model holds for the field of an item (``stored``: with its attribute)."""
        if stored:
            return Stored(field)
        return absent_value(self.old.attributes.get(field))

    def new_value(self, field: str, stored: bool) -> Symbol:
        """What the new model reads for the field of the same stored item."""
        attr = self.new.attributes.get(field)
        if not stored:
            return absent_value(attr)
        if attr is None:
            return NONE
        before = self.old.attributes[field]
        if (
            widens(codec_params(before), codec_params(attr))
            or stores_alike(before, attr)
            or numbers_convert(before, attr)
        ):
            # The value reads as it was stored (a number read as another numeric type
            # keeps its value; its key text may differ, which the key comparison sees).
            return Stored(field)
        why = narrowing(before, attr, f"field {field}")
        assert why is not None
        self.transforms.setdefault(f"attribute {field}", why)
        return Unreadable(why)

    def fields_stored(self, field: str) -> list[bool]:
        """The cases to consider for a field: attribute stored, not stored, or both."""
        attr = self.old.attributes.get(field)
        if attr is None:
            return [False]
        return [True, False] if may_be_absent(attr) else [True]
