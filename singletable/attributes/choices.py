"""Compiled codecs of values from a closed set: ``Enum`` classes and ``Literal[...]``.

An enum is stored as the attribute value of its ``.value``, a literal as the type of its
values; a stored value reads back as the member (or literal value) it stands for, matched
by stored form so that numbers compare by value.
"""

from __future__ import annotations

import contextlib
import enum
import typing
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from singletable.attributes.codec_parts import (
    Built,
    Decoder,
    Encoder,
    KeyOrder,
    decode_mismatch,
    none_handler,
)
from singletable.attributes.convert import to_attribute_value
from singletable.attributes.fastpath import DecodeExpr, Expr, FastPath, Writer
from singletable.attributes.numbers import INT_FAST_BOUND, int_text, number_from_text
from singletable.attributes.scalars import (
    MAX_NUMBER_SIZE,
    decode_number_slow,
    generic_codec,
    scalar_bool,
    scalar_int,
    scalar_str,
)
from singletable.errors import ItemEncodeError
from singletable.types import AttributeValue


def enum_codec(where: str, nullable: bool, position: str, cls: type[enum.Enum]) -> Built:
    """The codec of an ``Enum`` class: its members stored as their values' attribute values."""
    members = list(cls)
    values = [m.value for m in members]
    params: dict[str, Any] = {
        "enum": cls.__qualname__,
        "values": [v if isinstance(v, (str, int, float, bool)) else repr(v) for v in values],
    }
    by_value: dict[Any, enum.Enum] = {}
    for member in members:
        with contextlib.suppress(TypeError):  # an unhashable value is left to pydantic
            by_value.setdefault(member.value, member)
    on_none = none_handler(where, nullable, position)
    members_of = _EnumMembers(cls, values, by_value, on_none)
    # A str or int mixin enum's members compare as their values; a plain enum's do not
    # order at all, so its stored values can be matched, not ranged.
    order: KeyOrder = "ordered" if issubclass(cls, (str, int)) else "equality"
    if values and all(type(v) is str for v in values):
        built = _str_enum(where, nullable, members_of, {"type": "S", "python": "enum", **params})
        return built._replace(key_order=order)
    if values and all(type(v) is int for v in values):
        built = _int_enum(where, nullable, members_of, {"type": "N", "python": "enum", **params})
        return built._replace(key_order=order)
    generic_from = generic_codec(where, nullable, position, {}).from_av
    return _any_enum(where, members_of, generic_from, {"type": "any", "python": "enum", **params})


class _EnumMembers(typing.NamedTuple):
    cls: type[enum.Enum]
    values: list[Any]
    by_value: dict[Any, enum.Enum]
    on_none: Callable[[], Any]


def _str_enum(where: str, nullable: bool, enum_: _EnumMembers, params: dict[str, Any]) -> Built:
    cls, values, by_value, on_none = enum_

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is cls:
            return {"S": value.value}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, cls):
            return {"S": value.value}
        raise ItemEncodeError(f"{where}: expected a {cls.__name__} member, got {value!r}")

    def from_av(av: AttributeValue) -> Any:
        try:
            raw = av["S"]
        except (KeyError, TypeError):
            if isinstance(av, dict) and av.get("NULL"):
                return None
            raise decode_mismatch(where, "S", av) from None
        return by_value.get(raw, raw)

    return Built(to_av, from_av, params, _EnumFast(to_av, values, "S", by_value, nullable=nullable))


def _int_enum(where: str, nullable: bool, enum_: _EnumMembers, params: dict[str, Any]) -> Built:
    cls, values, by_value, on_none = enum_

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is cls:
            return {"N": int_text(value.value, where)}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, cls):
            return {"N": int_text(value.value, where)}
        raise ItemEncodeError(f"{where}: expected a {cls.__name__} member, got {value!r}")

    def from_av(av: AttributeValue) -> Any:
        try:
            text = av["N"]
        except (KeyError, TypeError):
            return decode_number_slow(where, av)
        raw = number_from_text(text)
        return by_value.get(raw, raw)

    return Built(to_av, from_av, params, _EnumFast(to_av, values, "N", by_value, nullable=nullable))


def _any_enum(
    where: str, enum_: _EnumMembers, generic_from: Decoder, params: dict[str, Any]
) -> Built:
    cls, values, by_value, on_none = enum_
    # Values such as 0.1 or (1, 2) do not read back as themselves (Decimal("0.1"), [1, 2]),
    # so stored values are matched by their attribute value instead.
    by_stored = _stored_lookup(list(cls), values, where)

    def to_av_any(value: Any) -> AttributeValue | None:
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if not isinstance(value, cls):
            raise ItemEncodeError(f"{where}: expected a {cls.__name__} member, got {value!r}")
        return to_attribute_value(value.value, where=where)

    def from_av_any(av: AttributeValue) -> Any:
        member = by_stored.get(_stored_key(av), _MISSING)
        if member is not _MISSING:
            return member
        raw = generic_from(av)
        try:
            return by_value.get(raw, raw)
        except TypeError:
            return raw

    return Built(to_av_any, from_av_any, params, FastPath(to_av_any))


class _EnumFast(FastPath):
    """An enum of str (or int) values: the member's value, read from its ``_value_``."""

    levels = 0

    def __init__(
        self,
        to_av: Encoder,
        values: list[Any],
        kind: str,
        by_value: dict[Any, enum.Enum],
        *,
        nullable: bool,
    ) -> None:
        super().__init__(to_av, nullable=nullable)
        self.cls = type(next(iter(by_value.values()))) if by_value else None
        self.kind = kind
        self.by_value = by_value
        if kind == "S":
            self.static = max((len(v.encode("utf-8")) for v in values), default=0)
            self.inline = True
        else:
            self.static = MAX_NUMBER_SIZE
            self.inline = all(-INT_FAST_BOUND < v < INT_FAST_BOUND for v in values)

    def expression(self, w: Writer, x: str) -> Expr | None:
        if self.cls is None or not self.inline:
            return None
        guard = f"{x}.__class__ is {w.ref(self.cls, 'enum')}"
        scalar = f"{x}._value_" if self.kind == "S" else f"str({x}._value_)"
        return Expr(guard, self.kind, scalar, static=self.static)

    def decode(self, w: Writer, av: str, *, lax: bool = False) -> DecodeExpr | None:
        del lax  # the member is looked up in any mode
        if self.kind != "S":
            return None
        raw = w.var("raw")
        lookup = w.ref(self.by_value, "by_value")
        return DecodeExpr(f"{lookup}.get({raw} := {av}['S'], {raw})")


def literal_codec(where: str, nullable: bool, position: str, values: tuple[Any, ...]) -> Built:
    """The codec of ``Literal[values]``: stored as the type of its values."""
    params_values = [v if isinstance(v, (str, int, float, bool)) else repr(v) for v in values]
    non_none = tuple(v for v in values if v is not None)
    nullable = nullable or len(non_none) != len(values)
    built: Built
    if non_none and all(type(v) is str for v in non_none):
        built = scalar_str(where, nullable, position, "literal")
    elif non_none and all(type(v) is bool for v in non_none):
        built = scalar_bool(where, nullable, position)
    elif non_none and all(type(v) is int for v in non_none):
        built = scalar_int(where, nullable, position)
    elif non_none and all(isinstance(v, enum.Enum) for v in non_none):
        built = enum_codec(where, nullable, position, type(non_none[0]))
        if not all(type(v) is type(non_none[0]) for v in non_none):
            built = generic_codec(where, nullable, position, {})
    else:
        generic_to, generic_from, generic_params, generic_fast, _order = generic_codec(
            where, nullable, position, {}
        )
        # Literal[0.1] reads back as Decimal("0.1"), which pydantic does not accept as
        # 0.1: match the stored attribute value against the literal values' instead.
        by_stored = _stored_lookup(list(non_none), list(non_none), where)

        def literal_from(av: AttributeValue) -> Any:
            value = by_stored.get(_stored_key(av), _MISSING)
            return generic_from(av) if value is _MISSING else value

        built = Built(generic_to, literal_from, generic_params, generic_fast)
    return built._replace(params={**built.params, "python": "literal", "values": params_values})


_MISSING: Final = object()


def _stored_key(av: Any) -> Any:
    """A hashable form of an attribute value in which equal stored values are equal.

    Numbers compare by value (DynamoDB normalises ``"0.10"`` to ``"0.1"``), sets ignore
    their order; an unexpected shape gives a key that matches nothing.
    """
    if not isinstance(av, dict) or len(av) != 1:
        return _MISSING
    ((kind, value),) = av.items()
    try:
        if kind == "N":
            return kind, Decimal(value)
        if kind == "NS":
            return kind, frozenset(Decimal(v) for v in value)
        if kind in ("SS", "BS"):
            return kind, frozenset(bytes(v) if kind == "BS" else v for v in value)
        if kind == "B":
            return kind, bytes(value)
        if kind == "L":
            return kind, tuple(_stored_key(e) for e in value)
        if kind == "M":
            return kind, frozenset((k, _stored_key(e)) for k, e in value.items())
        return kind, value
    except (InvalidOperation, TypeError, ValueError):
        return _MISSING


def _stored_lookup(results: list[Any], values: list[Any], where: str) -> dict[Any, Any]:
    """Map the stored form of each of ``values`` to the matching entry of ``results``."""
    lookup: dict[Any, Any] = {}
    for result, value in zip(results, values, strict=True):
        try:
            key = _stored_key(to_attribute_value(value, where=where))
            lookup.setdefault(key, result)
        except (ItemEncodeError, TypeError):
            continue  # a value that cannot be stored is never read back either
    return lookup
