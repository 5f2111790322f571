"""Attribute codecs: model values <-> DynamoDB low-level AttributeValues, and item size.

Every non-key field of an entity gets one `AttributeCodec`, compiled once from the field's
annotation by `attribute_codec_for`. A codec holds two plain closures, `to_av` and
`from_av`, so the hot path is one attribute load and one call per field: each closure first
checks the exact class of the value it was built for and falls back to a slower, thorough
path only when that check fails (a subclass, ``None``, a wrong type, an out-of-range number).

Mapping of Python types to DynamoDB types:

* ``str`` -> ``S``; ``bool`` -> ``BOOL``; ``int`` / ``float`` / ``Decimal`` -> ``N``;
  ``bytes`` / ``bytearray`` -> ``B``.
* ``datetime`` -> ``S`` in ISO 8601 with microseconds; an aware value is **converted to
  UTC** (``2026-06-23T06:00:00.000000+00:00`` for 08:00+02:00), so it reads back as the
  same instant, and the text of every stored value sorts like its instant: conditions and
  filters such as ``Event.f.created > t`` compare correctly. A naive value stays naive.
  ``date`` and ``time`` -> ``S`` in ISO form, ``UUID`` -> ``S`` (canonical hyphenated form).
* ``Enum`` -> the attribute value of its ``.value``; ``Literal[...]`` -> the type of its
  values.
* ``list`` / ``tuple`` / ``Sequence`` -> ``L``; ``dict[str, X]`` / ``Mapping`` -> ``M``
  (keys must be strings); a nested pydantic model -> ``M`` keyed by **field name** (not
  alias), compiled recursively once per model class.
* ``set`` / ``frozenset`` of strings -> ``SS``, of numbers -> ``NS``, of bytes -> ``BS``.
  DynamoDB rejects empty sets, so an **empty set is omitted** as a top-level attribute (and
  as a field of a nested model) and a top-level set field reads back as an empty set;
  ``set[X] | None`` reads back ``None`` (absence stands for both). **Give every set field
  a default** (``Field(default_factory=set)``). Inside a list or a
  map an empty set has no representation and is refused.
* ``X | None``: ``None`` omits a top-level attribute and is ``{"NULL": True}`` inside
  lists, maps and nested models.
* ``Any``, unions of several types and unknown types use the generic runtime converter
  `to_attribute_value` / `from_attribute_value`.

Numbers are checked against DynamoDB's limits when they are encoded: at most 38
significant digits and a magnitude of zero or within ``1E-130 .. 9.9999999999999999999999
999999999999999E+125``. A ``float`` is written as ``repr(x)``, its shortest round-trip
form, so ``float(text) == x`` exactly; NaN and infinities are refused.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import enum
import types
import typing
import uuid
from collections.abc import Callable, Mapping, MutableMapping, MutableSequence, Sequence
from collections.abc import Set as AbstractSet
from decimal import Decimal, InvalidOperation
from typing import Any, Final, Literal, Union

import pydantic

from singletable.attributes.convert import (
    datetime_text,
    from_attribute_value,
    to_attribute_value,
)
from singletable.attributes.fastpath import (
    DecodeExpr,
    Expr,
    FastPath,
    GenericFast,
    ListFast,
    MapFast,
    ModelFast,
    SetFast,
    Writer,
)
from singletable.attributes.numbers import (
    FLOAT_FAST_HIGH,
    FLOAT_FAST_LOW,
    INT_FAST_BOUND,
    MAX_NUMBER_DIGITS,
    decimal_text,
    float_text,
    int_text,
    number_from_text,
    number_text,
    parse_number,
)
from singletable.errors import ItemDecodeError, ItemEncodeError, ModelDefinitionError
from singletable.types import AttributeValue

__all__ = ["AttributeCodec", "attribute_codec_for"]

_NULL: Final[AttributeValue] = {"NULL": True}

Encoder = Callable[[Any], "AttributeValue | None"]
Decoder = Callable[["AttributeValue"], Any]


class AttributeCodec:
    """A compiled converter between one field's Python values and DynamoDB attribute values.

    Instances are built by `attribute_codec_for`. ``to_av`` and ``from_av`` are plain
    functions stored on the instance (not methods), so calling them costs no bound-method
    creation.

    Attributes:
        to_av: Converts a value to an attribute value, or to ``None`` when the attribute
            must be omitted (a top-level ``None``, an empty set). Raises `ItemEncodeError`.
        from_av: Converts a stored attribute value back to a value that pydantic validation
            accepts for the field. Raises `ItemDecodeError`.
        fast: The codec's fast paths as source, for generated item encoders and decoders
            (see `singletable.attributes.fastpath`).
        where: The field this codec was compiled for, e.g. ``"AuditEvent.score"``.
    """

    __slots__ = ("_params", "fast", "from_av", "to_av", "where")

    def __init__(
        self,
        to_av: Encoder,
        from_av: Decoder,
        params: dict[str, Any],
        *,
        where: str,
        fast: FastPath | None = None,
    ) -> None:
        self.to_av: Encoder = to_av
        self.from_av: Decoder = from_av
        self._params = params
        self.where = where
        self.fast: FastPath = fast if fast is not None else FastPath(to_av)

    def params(self) -> dict[str, Any]:
        """Describe the codec as JSON-able data, for snapshots and migration plans.

        Returns:
            For example ``{"type": "S", "python": "str"}`` or
            ``{"type": "list", "items": {"type": "N", "python": "int"}}``.
        """
        copied: dict[str, Any] = _copy_params(self._params)
        return copied

    def __repr__(self) -> str:
        return f"AttributeCodec({self.where!r}, {self._params!r})"


def _copy_params(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_params(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_params(v) for v in value]
    return value


# --------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------
# Item size
# --------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------
# Generic runtime conversion
# --------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------
# Compiled codecs
# --------------------------------------------------------------------------------------

# How a codec treats None and empty sets depends on where the value sits: a top-level
# attribute (and a nested model's field) is omitted; inside a list or map there is no
# "omitted", so None is NULL and an empty set is an error.
_TOP = "top"
_NESTED = "nested"


def _kind_name(av: Any) -> str:
    if isinstance(av, dict) and len(av) == 1:
        return str(next(iter(av)))
    return repr(av)


def _decode_mismatch(where: str, expected: str, av: Any) -> ItemDecodeError:
    return ItemDecodeError(
        f"{where}: expected a stored {expected} attribute value, got {_kind_name(av)}"
    )


def _none_handler(where: str, nullable: bool, position: str) -> Callable[[], Any]:
    """Return what to produce for a None value."""
    if nullable:
        if position == _TOP:
            return lambda: None
        return lambda: _NULL

    def refuse() -> Any:
        raise ItemEncodeError(f"{where}: None is not allowed; the field is not Optional")

    return refuse


def _is_null(av: Any) -> bool:
    return isinstance(av, dict) and av.get("NULL") is True


class _Built(typing.NamedTuple):
    to_av: Encoder
    from_av: Decoder
    params: dict[str, Any]
    fast: FastPath


def _scalar_str(where: str, nullable: bool, position: str, python: str) -> _Built:
    on_none = _none_handler(where, nullable, position)

    def slow(value: Any) -> AttributeValue | None:
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, str):
            return {"S": str(value)}
        raise ItemEncodeError(f"{where}: expected a str, got {type(value).__name__}")

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is str:
            return {"S": value}
        return slow(value)

    def from_av(av: AttributeValue) -> Any:
        try:
            return av["S"]
        except (KeyError, TypeError):
            if _is_null(av):
                return None
            raise _decode_mismatch(where, "S", av) from None

    return _Built(
        to_av, from_av, {"type": "S", "python": python}, _StrFast(to_av, nullable=nullable)
    )


class _StrFast(FastPath):
    def expression(self, w: Writer, x: str) -> Expr:
        return Expr(f"{x}.__class__ is str", "S", x, chars=f"len({x})")

    def decode(self, w: Writer, av: str) -> DecodeExpr:
        return DecodeExpr(f"{av}['S']")


def _scalar_bool(where: str, nullable: bool, position: str) -> _Built:
    on_none = _none_handler(where, nullable, position)

    def to_av(value: Any) -> AttributeValue | None:
        if value is True or value is False:
            return {"BOOL": value}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, bool):
            return {"BOOL": bool(value)}
        raise ItemEncodeError(f"{where}: expected a bool, got {type(value).__name__}")

    def from_av(av: AttributeValue) -> Any:
        try:
            return av["BOOL"]
        except (KeyError, TypeError):
            if _is_null(av):
                return None
            raise _decode_mismatch(where, "BOOL", av) from None

    return _Built(
        to_av, from_av, {"type": "BOOL", "python": "bool"}, _BoolFast(to_av, nullable=nullable)
    )


class _BoolFast(FastPath):
    def expression(self, w: Writer, x: str) -> Expr:
        return Expr(f"{x} is True or {x} is False", "BOOL", x, static=1)

    def decode(self, w: Writer, av: str) -> DecodeExpr:
        return DecodeExpr(f"{av}['BOOL']")


def _decode_number_slow(where: str, av: AttributeValue) -> Any:
    if _is_null(av):
        return None
    raise _decode_mismatch(where, "N", av)


def _scalar_int(where: str, nullable: bool, position: str) -> _Built:
    on_none = _none_handler(where, nullable, position)
    low, high = -INT_FAST_BOUND, INT_FAST_BOUND

    def slow(value: Any) -> AttributeValue | None:
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, bool):
            return {"N": "1" if value else "0"}
        if isinstance(value, int):
            return {"N": int_text(int(value), where)}
        raise ItemEncodeError(f"{where}: expected an int, got {type(value).__name__}")

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is int and low < value < high:
            return {"N": str(value)}
        return slow(value)

    def from_slow(av: AttributeValue) -> Any:
        text = av.get("N") if isinstance(av, dict) else None
        if text is None:
            return _decode_number_slow(where, av)
        number = parse_number(text, where)
        if number != number.to_integral_value():
            raise ItemDecodeError(f"{where}: stored number {text} is not an integer")
        return int(number)

    def from_av(av: AttributeValue) -> Any:
        try:
            return int(av["N"])
        except (KeyError, TypeError, ValueError):
            return from_slow(av)

    return _Built(
        to_av, from_av, {"type": "N", "python": "int"}, _IntFast(to_av, nullable=nullable)
    )


#: Largest size (bytes) of any DynamoDB number attribute value.
_MAX_NUMBER_SIZE = 21


class _IntFast(FastPath):
    def expression(self, w: Writer, x: str) -> Expr:
        bound = INT_FAST_BOUND
        guard = f"{x}.__class__ is int and {-bound} < {x} < {bound}"
        return Expr(guard, "N", f"str({x})", static=_MAX_NUMBER_SIZE)

    def decode(self, w: Writer, av: str) -> DecodeExpr:
        return DecodeExpr(f"int({av}['N'])", "KeyError, TypeError, ValueError")


def _scalar_float(where: str, nullable: bool, position: str) -> _Built:
    on_none = _none_handler(where, nullable, position)
    low, high = FLOAT_FAST_LOW, FLOAT_FAST_HIGH
    neg_low, neg_high = -low, -high

    def slow(value: Any) -> AttributeValue | None:
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            if isinstance(value, float):
                return {"N": float_text(float(value), where)}
            return {"N": number_text(value, where)}
        raise ItemEncodeError(f"{where}: expected a float, got {type(value).__name__}")

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is float and (low < value < high or neg_high < value < neg_low):
            return {"N": repr(value)}
        return slow(value)

    def from_av(av: AttributeValue) -> Any:
        try:
            return float(av["N"])
        except (KeyError, TypeError, ValueError):
            text = av.get("N") if isinstance(av, dict) else None
            if text is None:
                return _decode_number_slow(where, av)
            raise ItemDecodeError(f"{where}: stored number {text!r} is not a number") from None

    return _Built(
        to_av, from_av, {"type": "N", "python": "float"}, _FloatFast(to_av, nullable=nullable)
    )


class _FloatFast(FastPath):
    def expression(self, w: Writer, x: str) -> Expr:
        low, high = FLOAT_FAST_LOW, FLOAT_FAST_HIGH
        guard = (
            f"{x}.__class__ is float and ({low!r} < {x} < {high!r} or {-high!r} < {x} < {-low!r})"
        )
        return Expr(guard, "N", f"repr({x})", static=_MAX_NUMBER_SIZE)

    def decode(self, w: Writer, av: str) -> DecodeExpr:
        return DecodeExpr(f"float({av}['N'])", "KeyError, TypeError, ValueError")


def _scalar_decimal(where: str, nullable: bool, position: str) -> _Built:
    on_none = _none_handler(where, nullable, position)

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is Decimal:
            # Text of at most 38 characters holds at most 38 digits, and with that many
            # digits the adjusted exponent alone decides the range.
            text = str(value)
            if (
                len(text) <= MAX_NUMBER_DIGITS
                and value.is_finite()
                and -130 <= value.adjusted() <= 125
            ):
                return {"N": text}
            return {"N": decimal_text(value, where, value)}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            return {"N": number_text(value, where)}
        raise ItemEncodeError(f"{where}: expected a Decimal, got {type(value).__name__}")

    def from_av(av: AttributeValue) -> Any:
        try:
            text = av["N"]
        except (KeyError, TypeError):
            return _decode_number_slow(where, av)
        return parse_number(text, where)

    fast = _DecimalFast(to_av, nullable=nullable)
    fast.from_av = from_av
    return _Built(to_av, from_av, {"type": "N", "python": "Decimal"}, fast)


class _DecimalFast(FastPath):
    def expression(self, w: Writer, x: str) -> Expr:
        # Text in plain notation (no exponent, not NaN or Infinity) of at most 38
        # characters is finite, has at most 38 digits and an adjusted exponent within
        # -7..37: the codec stores exactly that text. Anything else goes to the codec.
        t = w.var("t")
        guard = (
            f"{x}.__class__ is {w.ref(Decimal, 'Decimal')} and len({t} := str({x})) <= "
            f"{MAX_NUMBER_DIGITS} and 'E' not in {t} and 'n' not in {t} and 'N' not in {t}"
        )
        return Expr(guard, "N", t, static=_MAX_NUMBER_SIZE)

    def decode(self, w: Writer, av: str) -> DecodeExpr:
        d = w.var("d")
        number = f"({d} := {w.ref(Decimal, 'Decimal')}({av}['N']))"
        # Not finite, or not a number: the codec raises its own error.
        expression = f"{d} if {number}.is_finite() else {w.ref(self.from_av, 'decode')}({av})"
        return DecodeExpr(expression, "KeyError, TypeError, ValueError, ArithmeticError")


def _scalar_bytes(where: str, nullable: bool, position: str) -> _Built:
    on_none = _none_handler(where, nullable, position)

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is bytes:
            return {"B": value}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, (bytes, bytearray, memoryview)):
            return {"B": bytes(value)}
        raise ItemEncodeError(f"{where}: expected bytes, got {type(value).__name__}")

    def from_av(av: AttributeValue) -> Any:
        try:
            value = av["B"]
        except (KeyError, TypeError):
            if _is_null(av):
                return None
            raise _decode_mismatch(where, "B", av) from None
        return value if value.__class__ is bytes else bytes(value)

    return _Built(
        to_av, from_av, {"type": "B", "python": "bytes"}, _BytesFast(to_av, nullable=nullable)
    )


class _BytesFast(FastPath):
    def expression(self, w: Writer, x: str) -> Expr:
        return Expr(f"{x}.__class__ is bytes", "B", x, nbytes=f"len({x})")


def _scalar_text(
    where: str,
    nullable: bool,
    position: str,
    cls: type[Any],
    python: str,
    to_text: Callable[[Any], str],
    from_text: Callable[[str], Any],
) -> _Built:
    """Codec for types stored as their text form (datetime, date, time, UUID)."""
    on_none = _none_handler(where, nullable, position)

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is cls:
            return {"S": to_text(value)}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, cls):
            return {"S": to_text(value)}
        raise ItemEncodeError(f"{where}: expected a {python}, got {type(value).__name__}")

    def from_av(av: AttributeValue) -> Any:
        try:
            text = av["S"]
        except (KeyError, TypeError):
            if _is_null(av):
                return None
            raise _decode_mismatch(where, "S", av) from None
        try:
            return from_text(text)
        except ValueError:
            return text  # let pydantic parse forms fromisoformat does not know (3.10 "Z")

    fast = _TextFast(to_av, cls, nullable=nullable)
    return _Built(to_av, from_av, {"type": "S", "python": python}, fast)


class _TextFast(FastPath):
    """datetime (UTC only), date, time (naive only) and UUID: their text, inline."""

    def __init__(self, to_av: Encoder, cls: type[Any], *, nullable: bool) -> None:
        super().__init__(to_av, nullable=nullable)
        self.cls = cls

    def expression(self, w: Writer, x: str) -> Expr:
        guard = f"{x}.__class__ is {w.ref(self.cls, self.cls.__name__)}"
        if self.cls is _dt.datetime:
            # A UTC value's stored text is its isoformat; any other offset is converted
            # to UTC by the codec (`datetime_text`).
            guard += f" and {x}.tzinfo is {w.ref(_dt.timezone.utc, 'utc')}"
            return Expr(guard, "S", f"{x}.isoformat(timespec='microseconds')", static=32)
        if self.cls is _dt.date:
            return Expr(guard, "S", f"{x}.isoformat()", static=10)
        if self.cls is _dt.time:
            return Expr(guard + f" and {x}.tzinfo is None", "S", f"{x}.isoformat()", static=15)
        return Expr(guard, "S", f"str({x})", static=36)  # UUID

    def decode(self, w: Writer, av: str) -> DecodeExpr | None:
        if self.cls is uuid.UUID:
            # uuid.UUID(text) costs more than pydantic's own parsing of the text, which a
            # lax model does; a strict one needs the UUID.
            return DecodeExpr(f"{av}['S']", lax=True)
        parse = w.ref(self.cls.fromisoformat, f"{self.cls.__name__}_parse")
        # A text fromisoformat refuses is returned as text by the codec, for pydantic.
        return DecodeExpr(f"{parse}({av}['S'])", "KeyError, TypeError, ValueError")


def _generic(where: str, nullable: bool, position: str, params: dict[str, Any]) -> _Built:
    def to_av(value: Any) -> AttributeValue | None:
        if value is None:
            if position == _TOP:
                return None
            return _NULL
        if position == _TOP and isinstance(value, (set, frozenset)) and not value:
            return None
        return to_attribute_value(value, where=where)

    def from_av(av: AttributeValue) -> Any:
        try:
            return from_attribute_value(av)
        except ItemDecodeError as exc:
            raise ItemDecodeError(f"{where}: {exc}") from None

    return _Built(to_av, from_av, params, GenericFast(to_av, where, nullable=True))


_SCALAR_TEXT_TYPES: dict[type[Any], tuple[str, Callable[[Any], str], Callable[[str], Any]]] = {
    _dt.datetime: ("datetime", datetime_text, _dt.datetime.fromisoformat),
    _dt.date: ("date", _dt.date.isoformat, _dt.date.fromisoformat),
    _dt.time: ("time", _dt.time.isoformat, _dt.time.fromisoformat),
    uuid.UUID: ("UUID", str, uuid.UUID),
}


def _unwrap(annotation: Any) -> Any:
    """Strip Annotated, NewType and type aliases down to the underlying type."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
            continue
        supertype = getattr(annotation, "__supertype__", None)
        if supertype is not None:  # NewType
            annotation = supertype
            continue
        value = getattr(annotation, "__value__", None)
        if value is not None and type(annotation).__name__ == "TypeAliasType":
            annotation = value
            continue
        return annotation


def _is_union(origin: Any) -> bool:
    return origin is Union or origin is types.UnionType


def _enum_codec(where: str, nullable: bool, position: str, cls: type[enum.Enum]) -> _Built:  # noqa: C901 - one branch per member-value kind (str, int, float, mixed)
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
    on_none = _none_handler(where, nullable, position)

    if values and all(type(v) is str for v in values):
        kind = "S"
    elif values and all(type(v) is int for v in values):
        kind = "N"
    else:
        kind = ""

    if kind == "S":

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
                raise _decode_mismatch(where, "S", av) from None
            return by_value.get(raw, raw)

        fast = _EnumFast(to_av, values, "S", by_value, nullable=nullable)
        return _Built(to_av, from_av, {"type": "S", "python": "enum", **params}, fast)

    if kind == "N":

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
                return _decode_number_slow(where, av)
            raw = number_from_text(text)
            return by_value.get(raw, raw)

        fast = _EnumFast(to_av, values, "N", by_value, nullable=nullable)
        return _Built(to_av, from_av, {"type": "N", "python": "enum", **params}, fast)

    generic_from = _generic(where, nullable, position, {}).from_av
    # Values such as 0.1 or (1, 2) do not read back as themselves (Decimal("0.1"), [1, 2]),
    # so stored values are matched by their attribute value instead.
    by_stored = _stored_lookup(members, [m.value for m in members], where)

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

    return _Built(
        to_av_any, from_av_any, {"type": "any", "python": "enum", **params}, FastPath(to_av_any)
    )


class _EnumFast(FastPath):
    """An enum of str (or int) values: the member's value, read from its ``_value_``."""

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
            self.static = _MAX_NUMBER_SIZE
            self.inline = all(-INT_FAST_BOUND < v < INT_FAST_BOUND for v in values)

    def expression(self, w: Writer, x: str) -> Expr | None:
        if self.cls is None or not self.inline:
            return None
        guard = f"{x}.__class__ is {w.ref(self.cls, 'enum')}"
        scalar = f"{x}._value_" if self.kind == "S" else f"str({x}._value_)"
        return Expr(guard, self.kind, scalar, static=self.static)

    def decode(self, w: Writer, av: str) -> DecodeExpr | None:
        if self.kind != "S":
            return None
        raw = w.var("raw")
        lookup = w.ref(self.by_value, "by_value")
        return DecodeExpr(f"{lookup}.get({raw} := {av}['S'], {raw})")


def _literal_codec(where: str, nullable: bool, position: str, values: tuple[Any, ...]) -> _Built:
    params_values = [v if isinstance(v, (str, int, float, bool)) else repr(v) for v in values]
    non_none = tuple(v for v in values if v is not None)
    nullable = nullable or len(non_none) != len(values)
    built: _Built
    if non_none and all(type(v) is str for v in non_none):
        built = _scalar_str(where, nullable, position, "literal")
    elif non_none and all(type(v) is bool for v in non_none):
        built = _scalar_bool(where, nullable, position)
    elif non_none and all(type(v) is int for v in non_none):
        built = _scalar_int(where, nullable, position)
    elif non_none and all(isinstance(v, enum.Enum) for v in non_none):
        built = _enum_codec(where, nullable, position, type(non_none[0]))
        if not all(type(v) is type(non_none[0]) for v in non_none):
            built = _generic(where, nullable, position, {})
    else:
        generic_to, generic_from, generic_params, generic_fast = _generic(
            where, nullable, position, {}
        )
        # Literal[0.1] reads back as Decimal("0.1"), which pydantic does not accept as
        # 0.1: match the stored attribute value against the literal values' instead.
        by_stored = _stored_lookup(list(non_none), list(non_none), where)

        def literal_from(av: AttributeValue) -> Any:
            value = by_stored.get(_stored_key(av), _MISSING)
            return generic_from(av) if value is _MISSING else value

        built = _Built(generic_to, literal_from, generic_params, generic_fast)
    to_av, from_av, params, fast = built
    return _Built(to_av, from_av, {**params, "python": "literal", "values": params_values}, fast)


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


def _list_codec(where: str, nullable: bool, position: str, item: _Built, as_tuple: bool) -> _Built:
    item_to, item_from, item_params, item_fast = item
    on_none = _none_handler(where, nullable, position)
    kind = "tuple" if as_tuple else "list"
    str_items = item_params.get("python") == "str"

    def to_av(value: Any) -> AttributeValue | None:
        cls = value.__class__
        if cls is list or cls is tuple:
            if str_items:  # skip a call per element for the common list[str]
                return {"L": [{"S": e} if e.__class__ is str else item_to(e) for e in value]}
            return {"L": [item_to(e) for e in value]}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(value, Sequence):
            raise ItemEncodeError(f"{where}: expected a {kind}, got {type(value).__name__}")
        return {"L": [item_to(e) for e in value]}

    def from_av(av: AttributeValue) -> Any:
        try:
            elements = av["L"]
        except (KeyError, TypeError):
            if _is_null(av):
                return None
            raise _decode_mismatch(where, "L", av) from None
        if as_tuple:
            return tuple([item_from(e) for e in elements])
        return [item_from(e) for e in elements]

    fast = ListFast(to_av, item_fast, nullable=nullable)
    return _Built(to_av, from_av, {"type": kind, "items": item_params}, fast)


def _fixed_tuple_codec(where: str, nullable: bool, position: str, items: list[_Built]) -> _Built:
    encoders = [b[0] for b in items]
    decoders = [b[1] for b in items]
    count = len(items)
    on_none = _none_handler(where, nullable, position)

    def to_av(value: Any) -> AttributeValue | None:
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if not isinstance(value, (tuple, list)) or len(value) != count:
            raise ItemEncodeError(f"{where}: expected a tuple of {count} items, got {value!r}")
        return {"L": [enc(e) for enc, e in zip(encoders, value, strict=True)]}

    def from_av(av: AttributeValue) -> Any:
        try:
            elements = av["L"]
        except (KeyError, TypeError):
            if _is_null(av):
                return None
            raise _decode_mismatch(where, "L", av) from None
        if len(elements) != count:
            raise ItemDecodeError(
                f"{where}: stored list has {len(elements)} items, the tuple has {count}"
            )
        return tuple([dec(e) for dec, e in zip(decoders, elements, strict=True)])

    params = {"type": "tuple", "items": [b[2] for b in items]}
    return _Built(to_av, from_av, params, FastPath(to_av, nullable=nullable))


def _map_codec(where: str, nullable: bool, position: str, value_codec: _Built) -> _Built:
    value_to, value_from, value_params, value_fast = value_codec
    on_none = _none_handler(where, nullable, position)
    str_values = value_params.get("python") == "str"

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is dict and str_values:
            fast = {k: {"S": v} if v.__class__ is str else value_to(v) for k, v in value.items()}
            for key in fast:
                if key.__class__ is not str or not key:
                    break
            else:
                return {"M": fast}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if not isinstance(value, Mapping):
            raise ItemEncodeError(f"{where}: expected a mapping, got {type(value).__name__}")
        result: dict[str, Any] = {}
        for key, element in value.items():
            if key.__class__ is not str:
                if not isinstance(key, str):
                    raise ItemEncodeError(
                        f"{where}: map keys must be strings to be stored as M, got {key!r}"
                    )
                key = str(key)
            if not key:
                raise ItemEncodeError(
                    f"{where}: a map key is the empty string, which DynamoDB refuses "
                    "(empty attribute name); use a non-empty key"
                )
            result[key] = value_to(element)
        return {"M": result}

    def from_av(av: AttributeValue) -> Any:
        try:
            entries = av["M"]
        except (KeyError, TypeError):
            if _is_null(av):
                return None
            raise _decode_mismatch(where, "M", av) from None
        return {key: value_from(element) for key, element in entries.items()}

    fast = MapFast(to_av, value_fast, nullable=nullable)
    return _Built(to_av, from_av, {"type": "map", "values": value_params}, fast)


def _set_codec(
    where: str,
    nullable: bool,
    position: str,
    element: Any,
    frozen: bool,
) -> _Built:
    element = _unwrap(element)
    element_origin = typing.get_origin(element)
    if _is_union(element_origin) or element is Any or element is object:
        return _generic(where, nullable, position, {"type": "set", "of": "any"})
    elem_to, elem_from, elem_params, elem_fast = _build(element, f"{where}[]", False, _NESTED)
    scalar = elem_params.get("type")
    if scalar not in ("S", "N", "B"):
        raise ModelDefinitionError(
            f"{where}: a set must hold strings, numbers or bytes (stored as SS, NS or BS), "
            f"not {element!r}; use a list instead"
        )
    set_kind = scalar + "S"
    on_none = _none_handler(where, nullable, position)
    make = frozenset if frozen else set

    def to_av(value: Any) -> AttributeValue | None:
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if not isinstance(value, (set, frozenset)):
            raise ItemEncodeError(f"{where}: expected a set, got {type(value).__name__}")
        if not value:
            if position == _TOP:
                return None
            raise ItemEncodeError(
                f"{where}: an empty set cannot be stored inside a list or map (DynamoDB has "
                "no empty sets); use a list, or leave the set out"
            )
        elements: list[Any] = []
        for e in value:
            av = elem_to(e)
            if av is None or scalar not in av:
                raise ItemEncodeError(f"{where}: a set cannot hold {e!r}")
            elements.append(av[scalar])
        return {set_kind: elements}

    def from_av(av: AttributeValue) -> Any:
        try:
            elements = av[set_kind]
        except (KeyError, TypeError):
            if isinstance(av, dict):
                if av.get("NULL"):
                    return None
                if av.get("L") == []:
                    return make()
            raise _decode_mismatch(where, set_kind, av) from None
        return make([elem_from({scalar: e}) for e in elements])

    return _Built(
        to_av,
        from_av,
        {"type": "frozenset" if frozen else "set", "of": set_kind, "items": elem_params},
        SetFast(to_av, elem_fast, set_kind, frozen=frozen, nullable=nullable),
    )


class _ModelPlan:
    """The compiled field codecs of a nested model class (filled after registration)."""

    # A plain class: a dataclass costs ~0.3 ms of import time to generate (issue 13).
    __slots__ = ("building", "fast", "fields", "params")

    def __init__(self) -> None:
        self.fields: list[tuple[str, str, Encoder, Decoder]] = []
        self.fast: list[tuple[str, FastPath]] = []
        self.params: dict[str, Any] = {}
        self.building = True


_MODEL_PLANS: dict[type[pydantic.BaseModel], _ModelPlan] = {}


def _input_key(model: type[pydantic.BaseModel], name: str, info: Any) -> str:
    """The key under which model_validate accepts the field (name, unless alias-only)."""
    config = model.model_config
    by_name = config.get("populate_by_name") or config.get("validate_by_name")
    alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
    if isinstance(alias, str) and alias != name and not by_name:
        return alias
    return name


def _model_plan(model: type[pydantic.BaseModel]) -> _ModelPlan:
    plan = _MODEL_PLANS.get(model)
    if plan is not None:
        return plan
    plan = _ModelPlan()
    _MODEL_PLANS[model] = plan  # registered first, so self-references find it
    try:
        for name, info in model.model_fields.items():
            field_where = f"{model.__name__}.{name}"
            # A nested model's field behaves like a top-level attribute for empty sets
            # (omitted, the default restores it) but stores None as NULL so that a
            # required Optional field reads back.
            to_av, from_av, params, fast = _build_with_metadata(
                info.annotation, tuple(info.metadata), field_where, _NESTED_FIELD
            )
            plan.fields.append((name, _input_key(model, name, info), to_av, from_av))
            plan.fast.append((name, fast))
            plan.params[name] = params
    except BaseException:
        del _MODEL_PLANS[model]
        raise
    plan.building = False
    return plan


_NESTED_FIELD = "field"


def _model_codec(
    where: str, nullable: bool, position: str, model: type[pydantic.BaseModel]
) -> _Built:
    plan = _model_plan(model)
    fields = plan.fields
    on_none = _none_handler(where, nullable, position)

    def encode_fields(value: pydantic.BaseModel) -> AttributeValue:
        result: dict[str, Any] = {}
        for name, _key, field_to, _from in fields:
            av = field_to(getattr(value, name))
            if av is not None:
                result[name] = av
        return {"M": result}

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is model:
            return encode_fields(value)
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, model):
            return encode_fields(value)
        raise ItemEncodeError(
            f"{where}: expected a {model.__name__} instance, got {type(value).__name__}"
        )

    def from_av(av: AttributeValue) -> Any:
        try:
            entries = av["M"]
        except (KeyError, TypeError):
            if _is_null(av):
                return None
            raise _decode_mismatch(where, "M", av) from None
        result: dict[str, Any] = {}
        for name, key, _to, field_from in fields:
            stored = entries.get(name)
            if stored is not None:
                result[key] = field_from(stored)
        return result

    params: dict[str, Any] = {"type": "model", "model": model.__qualname__}
    if plan.building:
        params["recursive"] = True
    else:
        params["fields"] = plan.params
    fast = ModelFast(to_av, model, lambda: plan.fast, nullable=nullable)
    return _Built(to_av, from_av, params, fast)


def _build_with_metadata(
    annotation: Any, metadata: Sequence[Any], where: str, position: str
) -> _Built:
    # Pydantic keeps constraints (min_length, Strict, ...) in metadata; none of them
    # changes the stored representation, so metadata is accepted and not interpreted.
    del metadata
    return _build(annotation, where, False, position)


def _build(annotation: Any, where: str, nullable: bool, position: str) -> _Built:
    """Build (to_av, from_av, params) for an unwrapped annotation."""
    # A nested model's field omits empty sets like a top-level attribute but stores None
    # as NULL; map that to the two basic positions per concern.
    none_position = _NESTED if position in (_NESTED, _NESTED_FIELD) else _TOP
    built = _build_inner(annotation, where, nullable, none_position, position)
    to_av, from_av, params, fast = built
    if nullable and "nullable" not in params:
        params = {**params, "nullable": True}
    return _Built(to_av, from_av, params, fast)


def _build_inner(  # noqa: C901 - one dispatch branch per supported annotation
    annotation: Any, where: str, nullable: bool, none_position: str, position: str
) -> _Built:
    annotation = _unwrap(annotation)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)

    if _is_union(origin):
        members = [a for a in args if a is not type(None)]
        nullable = nullable or len(members) != len(args)
        if len(members) == 1:
            return _build(members[0], where, nullable, position)
        return _generic(where, nullable, none_position, {"type": "any"})
    if annotation is Any or annotation is object:
        return _generic(where, True, none_position, {"type": "any"})
    if annotation is type(None):
        return _generic(where, True, none_position, {"type": "NULL"})
    if origin is Literal:
        return _literal_codec(where, nullable, none_position, args)
    if annotation is str:
        return _scalar_str(where, nullable, none_position, "str")
    if annotation is bool:
        return _scalar_bool(where, nullable, none_position)
    if annotation is int:
        return _scalar_int(where, nullable, none_position)
    if annotation is float:
        return _scalar_float(where, nullable, none_position)
    if annotation is Decimal:
        return _scalar_decimal(where, nullable, none_position)
    if annotation is bytes or annotation is bytearray:
        return _scalar_bytes(where, nullable, none_position)
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return _enum_codec(where, nullable, none_position, annotation)
        for text_type, (python, to_text, from_text) in _SCALAR_TEXT_TYPES.items():
            if annotation is text_type:
                return _scalar_text(
                    where, nullable, none_position, text_type, python, to_text, from_text
                )
        if issubclass(annotation, pydantic.BaseModel):
            return _model_codec(where, nullable, none_position, annotation)
        if issubclass(annotation, str):
            return _scalar_str(where, nullable, none_position, annotation.__name__)
        if issubclass(annotation, int) and not issubclass(annotation, bool):
            return _scalar_int(where, nullable, none_position)

    container = origin if origin is not None else annotation
    if container is list or container is Sequence or container is MutableSequence:
        item = args[0] if args else Any
        return _list_codec(
            where, nullable, none_position, _build(item, f"{where}[]", False, _NESTED), False
        )
    if container is tuple:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            item = args[0] if args else Any
            return _list_codec(
                where, nullable, none_position, _build(item, f"{where}[]", False, _NESTED), True
            )
        if args == ((),):
            return _fixed_tuple_codec(where, nullable, none_position, [])
        return _fixed_tuple_codec(
            where,
            nullable,
            none_position,
            [_build(a, f"{where}[{i}]", False, _NESTED) for i, a in enumerate(args)],
        )
    if container is set or container is frozenset or container is AbstractSet:
        element = args[0] if args else Any
        set_position = _TOP if position in (_TOP, _NESTED_FIELD) else _NESTED
        return _set_codec(where, nullable, set_position, element, container is frozenset)
    if container is dict or container is Mapping or container is MutableMapping:
        key_type = _unwrap(args[0]) if args else str
        if key_type is not str and key_type is not Any:
            raise ModelDefinitionError(
                f"{where}: DynamoDB maps (M) have string keys; {annotation!r} has "
                f"{key_type!r} keys. Use dict[str, ...]"
            )
        value_type = args[1] if len(args) > 1 else Any
        return _map_codec(
            where, nullable, none_position, _build(value_type, f"{where}[]", False, _NESTED)
        )
    return _generic(where, nullable, none_position, {"type": "any"})


def attribute_codec_for(
    annotation: Any, metadata: Sequence[Any] = (), *, where: str
) -> AttributeCodec:
    """Compile the attribute codec of one top-level (non-key) model field.

    Call once per field when the entity class is compiled; the returned codec's closures
    do no type dispatch for values of the declared type.

    Args:
        annotation: The field's annotation (``FieldInfo.annotation``), e.g. ``int | None``.
        metadata: The field's metadata (``FieldInfo.metadata``); accepted, currently none of
            it changes the stored form.
        where: ``"Entity.field"``, used in every error message.

    Returns:
        The compiled codec. Its ``to_av`` returns ``None`` when the attribute must be
        omitted (``None`` or an empty set).

    Raises:
        ModelDefinitionError: The annotation cannot be stored (a set of lists, a dict with
            non-string keys, ...).
    """
    to_av, from_av, params, fast = _build_with_metadata(annotation, tuple(metadata), where, _TOP)
    return AttributeCodec(to_av, from_av, params, where=where, fast=fast)
