"""The choice of a key field's codec: `KeyFormat` options and `codec_for`.

`codec_for` reads a field's annotation and its `KeyFormat` and returns the order-preserving
`KeyCodec` of its type: `text` (str, bool, UUID), `numbers` (int, Decimal, float), `times`
(datetime, date) or `choices` (Enum, Literal). A `SegmentEscaper` (`escaping`) then makes
the segment safe to join with the table's delimiter while keeping that order (see
``docs/architecture.md``, "Key encoding").
"""

from __future__ import annotations

import datetime as _dt
import enum
import types
import typing
import uuid
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any, Literal

import typing_extensions

from singletable.errors import KeyDecodeError, ModelDefinitionError
from singletable.keys.choices import EnumCodec, LiteralCodec
from singletable.keys.codec_base import KeyCodec
from singletable.keys.numbers import DecimalCodec, FixedIntCodec, FloatCodec, IntCodec
from singletable.keys.text import BoolCodec, StrCodec, UUIDCodec
from singletable.keys.times import PRECISION_NAMES, DateCodec, DatetimeCodec, NaivePolicy, Precision
from singletable.types import frozen_dataclass

__all__ = ["KeyFormat", "codec_for", "codec_from_params"]


@frozen_dataclass
class KeyFormat:
    """Options for how a field is written into keys, used as ``Annotated`` metadata.

    Example: ``seq: Annotated[int, KeyFormat(width=6)]`` writes ``42`` as ``000042``.

    Attributes:
        width: int fields only: write the value zero-padded to exactly this many digits.
            Values must then lie in ``0..10**width - 1``. Without it, ints use the
            variable-width, sign-aware int encoding.
        precision: datetime fields only: fractional seconds stored in the key, ``"s"``
            (none), ``"ms"`` (3 digits) or ``"us"`` (6 digits, the default). A value
            with a finer fraction than this is refused, never truncated.
        naive: datetime fields only: ``"refuse"`` (the default) refuses naive datetimes;
            ``"utc"`` takes them as UTC.
    """

    width: int | None = None
    precision: Precision = "us"
    naive: NaivePolicy = "refuse"

    def __post_init__(self) -> None:
        if self.width is not None and (
            not isinstance(self.width, int) or isinstance(self.width, bool) or self.width < 1
        ):
            raise ModelDefinitionError(
                f"KeyFormat(width={self.width!r}): width must be an int >= 1 "
                "(the number of zero-padded digits)"
            )
        if self.precision not in PRECISION_NAMES:
            raise ModelDefinitionError(
                f"KeyFormat(precision={self.precision!r}): precision must be 's', 'ms' or 'us'"
            )
        if self.naive not in ("refuse", "utc"):
            raise ModelDefinitionError(
                f"KeyFormat(naive={self.naive!r}): naive must be 'refuse' or 'utc'"
            )


_LITERAL_ORIGINS = {Literal, typing_extensions.Literal}
_ANNOTATED_ORIGINS = {typing.Annotated, typing_extensions.Annotated}
_COLLECTIONS = (list, tuple, set, frozenset, dict)


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__qualname__
    return repr(annotation)


def codec_for(annotation: Any, metadata: Sequence[Any], *, where: str) -> KeyCodec[Any]:
    """Choose the key codec of a field from its annotation and metadata.

    Args:
        annotation: The field's type, as in pydantic's ``FieldInfo.annotation``
            (``Annotated`` is stripped here too if present).
        metadata: The field's metadata, as in ``FieldInfo.metadata``; a `KeyFormat`
            among it selects options.
        where: Context for error messages, e.g.
            ``"AuditEvent.seq in template 'EVT#{ts}#{seq}'"``.

    Returns:
        The codec.

    Raises:
        ModelDefinitionError: The type cannot be a key field, or the `KeyFormat` options
            do not apply to it. The message starts with ``where``.
    """
    metadata = list(metadata)
    while typing_extensions.get_origin(annotation) in _ANNOTATED_ORIGINS:
        metadata.extend(annotation.__metadata__)
        annotation = annotation.__origin__
    while hasattr(annotation, "__supertype__"):  # typing.NewType
        annotation = annotation.__supertype__

    formats = [m for m in metadata if isinstance(m, KeyFormat)]
    if len(formats) > 1:
        raise ModelDefinitionError(f"{where}: more than one KeyFormat; merge them into one")
    fmt = formats[0] if formats else KeyFormat()

    codec = _codec_for_type(annotation, fmt, where)

    misapplied = []
    if fmt.width is not None and codec.kind != "fixed_int":
        misapplied.append(f"width={fmt.width!r} (int fields only)")
    if codec.kind != "datetime":
        if fmt.precision != "us":
            misapplied.append(f"precision={fmt.precision!r} (datetime fields only)")
        if fmt.naive != "refuse":
            misapplied.append(f"naive={fmt.naive!r} (datetime fields only)")
    if misapplied:
        raise ModelDefinitionError(
            f"{where}: KeyFormat option {', '.join(misapplied)} does not apply to a "
            f"{_type_name(annotation)} field; remove it"
        )
    return codec


def _codec_for_type(annotation: Any, fmt: KeyFormat, where: str) -> KeyCodec[Any]:  # noqa: C901 - one dispatch branch per supported key type
    origin = typing_extensions.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = typing_extensions.get_args(annotation)
        if type(None) in args:
            raise ModelDefinitionError(
                f"{where}: a key field cannot be optional ({_type_name(annotation)}); "
                "make the field required, or keep it out of key templates"
            )
        raise ModelDefinitionError(
            f"{where}: a key field cannot be a union ({_type_name(annotation)}); "
            "give it one scalar type"
        )
    if annotation is None or annotation is type(None):
        raise ModelDefinitionError(f"{where}: a key field cannot be None; give it a scalar type")
    if origin in _LITERAL_ORIGINS:
        return LiteralCodec(typing_extensions.get_args(annotation), where=where)
    if origin in _COLLECTIONS or annotation in _COLLECTIONS:
        raise ModelDefinitionError(
            f"{where}: key fields must be scalar, not {_type_name(annotation)}; "
            "put one scalar field per template segment"
        )
    if annotation is str:
        return StrCodec()
    if annotation is bool:
        return BoolCodec()
    if annotation is int:
        return FixedIntCodec(fmt.width) if fmt.width is not None else IntCodec()
    if annotation is Decimal:
        return DecimalCodec()
    if annotation is float:
        return FloatCodec()
    if annotation is _dt.datetime:
        return DatetimeCodec(fmt.precision, fmt.naive)
    if annotation is _dt.date:
        return DateCodec()
    if annotation is uuid.UUID:
        return UUIDCodec()
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        if issubclass(annotation, enum.Flag):
            raise ModelDefinitionError(
                f"{where}: flag enum {annotation.__name__} cannot be a key field "
                "(combined flags have no stored order); use a plain Enum"
            )
        return EnumCodec(annotation, where=where)
    if isinstance(annotation, type) and (
        hasattr(annotation, "model_fields") or hasattr(annotation, "__dataclass_fields__")
    ):
        raise ModelDefinitionError(
            f"{where}: key fields must be scalar, not the model {_type_name(annotation)}; "
            "use one of its scalar fields in the template instead"
        )
    raise ModelDefinitionError(
        f"{where}: type {_type_name(annotation)} is not supported in keys; use str, int, "
        "bool, Decimal, float, datetime, date, UUID, an Enum or a Literal of str or int values"
    )


def codec_from_params(params: Mapping[str, Any]) -> KeyCodec[Any]:
    """The codec that writes what `KeyCodec.params` describes (the inverse of ``params``).

    For the migration runner, which must compute keys the *old* model wrote (the guards of
    a constraint whose codec changed) from a snapshot, where no old class exists. An
    enum's codec comes back as the `LiteralCodec` over its values: it writes a value
    exactly as the enum's codec writes its member (pass ``member.value``).

    Raises:
        KeyDecodeError: ``params`` names no known codec.
    """
    kind = params.get("kind")
    simple: dict[str, Callable[[], KeyCodec[Any]]] = {
        "str": StrCodec,
        "int": IntCodec,
        "decimal": DecimalCodec,
        "float": FloatCodec,
        "bool": BoolCodec,
        "date": DateCodec,
        "uuid": UUIDCodec,
    }
    if kind in simple:
        return simple[kind]()
    if kind == "fixed_int":
        return FixedIntCodec(int(params["width"]))
    if kind == "datetime":
        return DatetimeCodec(params.get("precision", "us"), "utc")
    if kind in ("enum", "literal"):
        return LiteralCodec(list(params["values"]), where=f"stored {kind} codec")
    raise KeyDecodeError(f"no key codec {kind!r} (from a snapshot): {dict(params)!r}")
