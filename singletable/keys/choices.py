"""Key codecs of values from a closed set: ``Enum`` members and ``Literal[...]`` values."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from singletable.errors import KeyDecodeError, KeyEncodeError, ModelDefinitionError
from singletable.keys.codec_base import KeyCodec
from singletable.keys.numbers import IntCodec
from singletable.keys.text import StrCodec


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
