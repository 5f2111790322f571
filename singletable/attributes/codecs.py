"""Attribute codecs: model values <-> DynamoDB low-level AttributeValues, and item size.

Every non-key field of an entity gets one `AttributeCodec`, compiled once from the field's
annotation by `attribute_codec_for`. A codec holds two plain closures, `to_av` and
`from_av`, so the hot path is one attribute load and one call per field: each closure first
checks the exact class of the value it was built for and falls back to a slower, thorough
path only when that check fails (a subclass, ``None``, a wrong type, an out-of-range number).

This module dispatches on the annotation; the codecs themselves live in `scalars`,
`choices` (enums, literals) and `containers`, built from `codec_parts`. Nested models are
compiled here, since their fields recurse into the dispatch.

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
  `to_attribute_value` / `from_attribute_value`. A class none of whose values that
  converter stores (``timedelta``, ``IPv4Address``, ``Path``, ``HttpUrl``, a dataclass)
  is refused when the field is compiled, unless a validator may change the value's type.

Numbers are checked against DynamoDB's limits when they are encoded: at most 38
significant digits and a magnitude of zero or within ``1E-130 .. 9.9999999999999999999999
999999999999999E+125``. A ``float`` is written as ``repr(x)``, its shortest round-trip
form, so ``float(text) == x`` exactly; NaN and infinities are refused.
"""

from __future__ import annotations

import datetime
import enum
import functools
import inspect
import types
import typing
import uuid
from collections.abc import Iterator, Mapping, MutableMapping, MutableSequence, Sequence
from collections.abc import Set as AbstractSet
from decimal import Decimal
from typing import Any, Literal, Union

import pydantic
import pydantic_core
from pydantic import AfterValidator, BeforeValidator, PlainValidator, WrapValidator
from pydantic.fields import FieldInfo

from singletable.attributes.choices import enum_codec, literal_codec
from singletable.attributes.codec_parts import (
    NESTED,
    TOP,
    Built,
    Decoder,
    Encoder,
    KeyOrder,
    decode_mismatch,
    is_null,
    none_handler,
)
from singletable.attributes.containers import fixed_tuple_codec, list_codec, map_codec, set_codec
from singletable.attributes.fastpath import FastPath, ModelFast
from singletable.attributes.scalars import (
    SCALAR_TEXT_TYPES,
    generic_codec,
    scalar_bool,
    scalar_bytes,
    scalar_decimal,
    scalar_float,
    scalar_int,
    scalar_str,
    scalar_text,
)
from singletable.attributes.size import MAX_NESTING, check_nesting, nesting_error
from singletable.errors import ItemEncodeError, ItemTooDeepError, ModelDefinitionError
from singletable.types import AttributeValue

__all__ = [
    "AttributeCodec",
    "attribute_codec_for",
    "field_is_validated",
    "lax_field",
    "sees_raw_input",
]


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
        key_order: Whether the stored form can be a key attribute of its own (a native
            GSI part) and whether it orders like the values (`KeyOrder`).
    """

    __slots__ = ("_params", "fast", "from_av", "key_order", "to_av", "where")

    def __init__(
        self,
        to_av: Encoder,
        from_av: Decoder,
        params: dict[str, Any],
        *,
        where: str,
        fast: FastPath | None = None,
        key_order: KeyOrder = "none",
    ) -> None:
        self.key_order: KeyOrder = key_order
        self.to_av: Encoder = to_av
        self.from_av: Decoder = from_av
        self._params = params
        self.where = where
        self.fast: FastPath = fast if fast is not None else FastPath(to_av)

    @property
    def kind(self) -> str:
        """The ``"type"`` of `params` (``"S"``, ``"N"``, ``"list"``, ``"model"``...), uncopied."""
        kind: str = self._params["type"]
        return kind

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
            to_av, from_av, params, fast, _order = _build_with_metadata(
                info.annotation,
                tuple(info.metadata),
                field_where,
                _NESTED_FIELD,
                validated=field_is_validated(model, name),
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


def lax_field(model: type[Any], name: str) -> bool:
    """Whether field ``name`` of ``model`` may be handed stored text for pydantic to parse.

    Only when pydantic validates it in lax mode, NaN and infinities stay refused as the
    codecs refuse them, and no validator of the user's runs before pydantic's own (it
    would see text where it saw numbers or UUIDs).
    """
    if model.model_config.get("strict") or sees_raw_input(model, name):
        return False
    decorators = model.__pydantic_decorators__
    if any(d.info.mode != "after" for d in decorators.model_validators.values()):
        return False
    return not any(
        getattr(m, "strict", False) is True or getattr(m, "allow_inf_nan", False)
        for m in _field_markers(model.model_fields[name])
    )


def sees_raw_input(model: type[Any], name: str) -> bool:
    """Whether a validator of the user's sees field ``name``'s input before pydantic's own.

    A ``before``, ``wrap`` or ``plain`` field validator, or one of those in the field's
    metadata (``Annotated[str, BeforeValidator(...)]``).
    """
    if any(d.info.mode != "after" for d in _field_validators(model, name)):
        return True
    return any(isinstance(m, _INPUT_VALIDATORS) for m in _field_markers(model.model_fields[name]))


def field_is_validated(model: type[pydantic.BaseModel], name: str) -> bool:
    """Whether a ``@field_validator`` of ``model`` (any mode) validates field ``name``."""
    return any(True for _ in _field_validators(model, name))


def _field_validators(model: type[Any], name: str) -> Iterator[Any]:
    """The ``@field_validator`` decorators of ``model`` that validate field ``name``."""
    for decorator in model.__pydantic_decorators__.field_validators.values():
        fields = decorator.info.fields
        if name in fields or "*" in fields:
            yield decorator


#: The validators, in a field's metadata, that see its input before pydantic's own.
_INPUT_VALIDATORS = (BeforeValidator, PlainValidator, WrapValidator)


def _field_markers(info: FieldInfo) -> tuple[Any, ...]:
    """A field's metadata and everything inside its annotation (`_annotation_parts`)."""
    return (*info.metadata, *_annotation_parts(info.annotation))


def _annotation_parts(annotation: Any) -> Iterator[Any]:
    """Every argument inside ``annotation`` (element types, ``Annotated`` metadata)."""
    for arg in typing.get_args(annotation):
        yield arg
        yield from _annotation_parts(arg)
        if isinstance(arg, FieldInfo):
            yield from arg.metadata


def _model_codec(
    where: str, nullable: bool, position: str, model: type[pydantic.BaseModel]
) -> Built:
    plan = _model_plan(model)
    fields = plan.fields
    on_none = none_handler(where, nullable, position)

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
            if is_null(av):
                return None
            raise decode_mismatch(where, "M", av) from None
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
    fast = ModelFast(
        to_av,
        model,
        lambda: plan.fast,
        nullable=nullable,
        decoding=lambda: [(key, lax_field(model, name)) for name, key, _to, _from in fields],
    )
    return Built(to_av, from_av, params, fast)


def _build_with_metadata(
    annotation: Any, metadata: Sequence[Any], where: str, position: str, *, validated: bool
) -> Built:
    # Pydantic keeps constraints (min_length, Strict, ...) in metadata; none of them
    # changes the stored representation, so metadata is not interpreted, except that a
    # validator in it may hand the field a value of another type than its annotation's.
    # ``validated``: the model has a field validator of its own for the field (likewise).
    unstorable = _unstorable_part(annotation)
    if (
        unstorable is not None
        and not validated
        and not any(
            isinstance(m, (AfterValidator, *_INPUT_VALIDATORS))
            for m in (*metadata, *_annotation_parts(annotation))
        )
    ):
        name = unstorable.__name__
        raise ModelDefinitionError(
            f"{where}: {name} values cannot be stored in DynamoDB, so no {name} value of "
            "this field could be written. Supported are str, int, float, Decimal, bool, "
            "bytes, datetime, date, time, UUID, Enum, Literal, list, tuple, set, dict and "
            f"pydantic models: store the {name}'s text or number in a field of one of "
            "those types"
        )
    return _build(annotation, where, False, position)


#: Classes some of whose values the generic converter stores (`to_attribute_value`).
_STORABLE_BASES: tuple[type[Any], ...] = (
    str,
    bytes,
    bytearray,
    memoryview,
    int,
    float,
    Decimal,
    enum.Enum,
    datetime.date,
    datetime.time,
    uuid.UUID,
    set,
    frozenset,
    Mapping,
    list,
    tuple,
    pydantic.BaseModel,
)


#: The commonest annotations, stored (None as absence or NULL): no subclass test for them.
_STORED = frozenset({str, int, float, bool, bytes, Decimal, datetime.datetime, object, type(None)})


@functools.cache
def _pydantic_value_classes() -> tuple[type[Any], ...]:
    """The classes of pydantic's whose validated values are instances of themselves.

    URLs, secrets, a name with an email: a schema hook of theirs hides it (`_unstorable`).
    Imported when first asked for: `pydantic.networks` costs ``import singletable`` time.
    """
    import pydantic.networks
    import pydantic.types

    return (
        pydantic.networks.AnyUrl,
        pydantic.networks.NameEmail,
        pydantic.types.SecretStr,
        pydantic.types.SecretBytes,
        pydantic_core.Url,
        pydantic_core.MultiHostUrl,
        *pydantic.networks.PostgresDsn.__mro__[1:-1],  # the multi-host URLs' private base
    )


def _unstorable(cls: type[Any]) -> bool:
    """Whether no value pydantic validates for a field of class ``cls`` can be stored.

    Its values are its own instances (no schema hook of the class makes them something
    else, pydantic's value classes aside), of no class the generic converter stores,
    and the class is concrete: an abstract class or a protocol (``Hashable``) admits
    values of other classes.
    """
    if cls in _STORED or issubclass(cls, _STORABLE_BASES):
        return False
    if inspect.isabstract(cls) or getattr(cls, "_is_protocol", False):
        return False
    return not hasattr(cls, "__get_pydantic_core_schema__") or issubclass(
        cls, _pydantic_value_classes()
    )


def _unstorable_part(annotation: Any) -> type[Any] | None:
    """A class in ``annotation`` that can hold no storable value, if any.

    A ``timedelta``, an ``IPv4Address`` or a ``Path`` field (or one of a list of them,
    a map's values, an optional one, a union's member) passed class creation, and every
    write of such a value was refused with `ItemEncodeError`: `_build_with_metadata`
    refuses it instead, before any entity exists.
    """
    if annotation.__class__ is type:  # most fields: no Annotated, alias or generic
        return annotation if _unstorable(annotation) else None
    annotation = _unwrap(annotation)
    origin = typing.get_origin(annotation)
    if _is_union(origin) or origin in _CONTAINERS:
        args = typing.get_args(annotation)
        for part in args[1:] if origin in _MAPS else args:
            if part is not Ellipsis and part != ():
                found = _unstorable_part(part)
                if found is not None:
                    return found
        return None
    # A generic class (``re.Pattern[str]``) holds instances of its origin.
    cls = origin if isinstance(origin, type) else annotation
    if isinstance(cls, type) and cls is not Any and _unstorable(cls):
        return cls
    return None


_MAPS = (dict, Mapping, MutableMapping)
_CONTAINERS = (list, Sequence, MutableSequence, tuple, set, frozenset, AbstractSet, *_MAPS)


def _build(annotation: Any, where: str, nullable: bool, position: str) -> Built:
    """Build (to_av, from_av, params) for an unwrapped annotation."""
    # A nested model's field omits empty sets like a top-level attribute but stores None
    # as NULL; map that to the two basic positions per concern.
    none_position = NESTED if position in (NESTED, _NESTED_FIELD) else TOP
    built = _build_inner(annotation, where, nullable, none_position, position)
    if nullable and "nullable" not in built.params:
        return built._replace(params={**built.params, "nullable": True})
    return built


def _build_inner(  # noqa: C901 - one dispatch branch per supported annotation
    annotation: Any, where: str, nullable: bool, none_position: str, position: str
) -> Built:
    annotation = _unwrap(annotation)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)

    if _is_union(origin):
        members = [a for a in args if a is not type(None)]
        nullable = nullable or len(members) != len(args)
        if len(members) == 1:
            return _build(members[0], where, nullable, position)
        return generic_codec(where, nullable, none_position, {"type": "any"})
    if annotation is Any or annotation is object:
        return generic_codec(where, True, none_position, {"type": "any"})
    if annotation is type(None):
        return generic_codec(where, True, none_position, {"type": "NULL"})
    if origin is Literal:
        return literal_codec(where, nullable, none_position, args)
    if annotation is str:
        return scalar_str(where, nullable, none_position, "str")
    if annotation is bool:
        return scalar_bool(where, nullable, none_position)
    if annotation is int:
        return scalar_int(where, nullable, none_position)
    if annotation is float:
        return scalar_float(where, nullable, none_position)
    if annotation is Decimal:
        return scalar_decimal(where, nullable, none_position)
    if annotation is bytes or annotation is bytearray:
        return scalar_bytes(where, nullable, none_position)
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return enum_codec(where, nullable, none_position, annotation)
        for text_type, (python, to_text, from_text) in SCALAR_TEXT_TYPES.items():
            if annotation is text_type:
                return scalar_text(
                    where, nullable, none_position, text_type, python, to_text, from_text
                )
        if issubclass(annotation, pydantic.BaseModel):
            return _model_codec(where, nullable, none_position, annotation)
        if issubclass(annotation, str):
            return scalar_str(where, nullable, none_position, annotation.__name__)
        if issubclass(annotation, int) and not issubclass(annotation, bool):
            return scalar_int(where, nullable, none_position)

    return _build_container(annotation, origin, args, where, nullable, none_position, position)


def _build_container(
    annotation: Any,
    origin: Any,
    args: tuple[Any, ...],
    where: str,
    nullable: bool,
    none_position: str,
    position: str,
) -> Built:
    """The codec of a list, tuple, set or map annotation (the generic one for any other)."""
    container = origin if origin is not None else annotation
    if container is list or container is Sequence or container is MutableSequence:
        item = args[0] if args else Any
        return list_codec(
            where, nullable, none_position, _build(item, f"{where}[]", False, NESTED), False
        )
    if container is tuple:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            item = args[0] if args else Any
            return list_codec(
                where, nullable, none_position, _build(item, f"{where}[]", False, NESTED), True
            )
        if args == ((),):
            return fixed_tuple_codec(where, nullable, none_position, [])
        return fixed_tuple_codec(
            where,
            nullable,
            none_position,
            [_build(a, f"{where}[{i}]", False, NESTED) for i, a in enumerate(args)],
        )
    if container is set or container is frozenset or container is AbstractSet:
        element = args[0] if args else Any
        set_position = TOP if position in (TOP, _NESTED_FIELD) else NESTED
        return _set_of(where, nullable, set_position, element, container is frozenset)
    if container is dict or container is Mapping or container is MutableMapping:
        key_type = _unwrap(args[0]) if args else str
        if key_type is not str and key_type is not Any:
            raise ModelDefinitionError(
                f"{where}: DynamoDB maps (M) have string keys; {annotation!r} has "
                f"{key_type!r} keys. Use dict[str, ...]"
            )
        value_type = args[1] if len(args) > 1 else Any
        return map_codec(
            where, nullable, none_position, _build(value_type, f"{where}[]", False, NESTED)
        )
    return generic_codec(where, nullable, none_position, {"type": "any"})


def _set_of(where: str, nullable: bool, position: str, element: Any, frozen: bool) -> Built:
    element = _unwrap(element)
    element_origin = typing.get_origin(element)
    if _is_union(element_origin) or element is Any or element is object:
        return generic_codec(where, nullable, position, {"type": "set", "of": "any"})
    elements = _build(element, f"{where}[]", False, NESTED)
    return set_codec(where, nullable, position, element, elements, frozen)


def attribute_codec_for(
    annotation: Any, metadata: Sequence[Any] = (), *, where: str, validated: bool = False
) -> AttributeCodec:
    """Compile the attribute codec of one top-level (non-key) model field.

    Call once per field when the entity class is compiled; the returned codec's closures
    do no type dispatch for values of the declared type.

    Args:
        annotation: The field's annotation (``FieldInfo.annotation``), e.g. ``int | None``.
        metadata: The field's metadata (``FieldInfo.metadata``); accepted, currently none of
            it changes the stored form.
        where: ``"Entity.field"``, used in every error message.
        validated: The model has a field validator for the field (`field_is_validated`),
            which may hand it values of other types than its annotation's.

    Returns:
        The compiled codec. Its ``to_av`` returns ``None`` when the attribute must be
        omitted (``None`` or an empty set).

    Raises:
        ModelDefinitionError: The annotation cannot be stored (a set of lists, a dict with
            non-string keys, a ``timedelta``, ...).
    """
    to_av, from_av, params, fast, order = _build_with_metadata(
        annotation, tuple(metadata), where, TOP, validated=validated
    )
    levels = fast.nesting()
    if levels is None or levels > MAX_NESTING:
        # The type does not bound the value's depth: every encoding of the attribute
        # (reference, updates, the generated code's calls of the codec) checks it.
        to_av = fast.to_av = _nesting_checked(to_av, where)
    return AttributeCodec(to_av, from_av, params, where=where, fast=fast, key_order=order)


def _nesting_checked(to_av: Encoder, where: str) -> Encoder:
    """``to_av`` refusing a value that nests lists and maps deeper than DynamoDB stores."""

    def checked(value: Any) -> AttributeValue | None:
        try:
            av = to_av(value)
        except (RecursionError, ItemTooDeepError):
            # Refused deeper down (by a nested model's codec, or by Python's recursion
            # limit): the error names the entity's field, as the generated code does.
            raise nesting_error(where) from None
        return None if av is None else check_nesting(av, where)

    return checked
