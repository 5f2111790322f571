"""Compiling an entity class, once, into its frozen `EntityPlan`: options, fields, keys, codecs."""

from __future__ import annotations

import copy
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Union

from pydantic import BaseModel, PydanticUndefinedAnnotation

from singletable.attributes.codec_parts import Encoder
from singletable.attributes.codecs import AttributeCodec, attribute_codec_for, field_is_validated
from singletable.attributes.numbers import beyond_number_range
from singletable.errors import ModelDefinitionError
from singletable.keys.codec_base import KeyCodec
from singletable.keys.codecs import codec_for
from singletable.keys.templates import FIELD_SEGMENT, KeyTemplate
from singletable.model.codegen import install_generated_codecs
from singletable.model.plan import (
    EntityPlan,
    FieldPlan,
    IndexKeys,
    KeyPlan,
    NativeKeyPlan,
    NativePart,
    entity_plans,
)
from singletable.model.table import KEY_TYPES, LSI, KeyPart, KeySchema, KeyType, NativeGSI, Table
from singletable.model.unique import UniqueConstraint
from singletable.types import AttributeValue

# Keyword arguments of Entity's operation constructors: a key field so named could not
# be passed as a key value.
_KEY_OPTION_NAMES = frozenset({"capacity", "consistent", "condition", "return_old", "index"})


def _kept_in_the_key(
    encode: Callable[[Any], AttributeValue | None],
) -> Callable[[Any], AttributeValue | None]:
    """A primary key field's attribute encoder that keeps out-of-range values in the key.

    A value beyond the Number range (an int of 39 to 99 significant digits, a decimal
    exponent past ±130) gets no attribute: the key holds it, and decoding recovers it
    from there.
    """

    def to_av(value: Any) -> AttributeValue | None:
        if beyond_number_range(value):
            return None
        return encode(value)

    return to_av


def _with_item_encoder(codec: AttributeCodec, encode: Encoder) -> AttributeCodec:
    """``codec`` whose generated item encoder falls back to ``encode`` off its fast path.

    Conditions and updates keep the strict ``to_av`` (a value a Number cannot hold is
    refused there); only whole items leave such a key field to the key.
    """
    fast = copy.copy(codec.fast)
    fast.to_av = encode
    item_codec = copy.copy(codec)
    item_codec.fast = fast
    return item_codec


def _is_optional(annotation: Any) -> tuple[bool, Any]:
    origin = typing.get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        args = typing.get_args(annotation)
        if type(None) in args:
            rest = tuple(a for a in args if a is not type(None))
            return True, (rest[0] if len(rest) == 1 else Union[rest])  # noqa: UP007
    return False, annotation


def _is_set(annotation: Any) -> bool:
    origin = typing.get_origin(_is_optional(annotation)[1])
    return origin in (set, frozenset)


_OPTION_NAMES = frozenset(
    {
        "pk",
        "sk",
        "indexes",
        "name",
        "version",
        "version_field",
        "created_at",
        "updated_at",
        "ttl",
        "unique",
        "abstract",
    }
)


def compile_entity(cls: type[BaseModel], table: Table, options: dict[str, Any]) -> EntityPlan:
    """Compile entity class ``cls`` with its class keywords ``options`` into an `EntityPlan`.

    Every modelling mistake is refused here, at class definition, with a message naming
    the class, template or field.
    """
    _refuse_undefined_types(cls)
    plan = _Compiler(cls, table, options).plan()
    install_generated_codecs(plan)
    return plan


def _refuse_undefined_types(cls: type[BaseModel]) -> None:
    """Refuse a field whose type pydantic could not resolve when the class was created.

    Codecs and keys are compiled from the field types as the class is defined, so a type
    imported only under ``TYPE_CHECKING`` (or defined after the class) cannot be used.
    """
    if cls.__pydantic_complete__:
        return
    try:
        cls.model_rebuild(raise_errors=True)
    except PydanticUndefinedAnnotation as exc:
        fields = [
            name
            for name, info in cls.model_fields.items()
            if isinstance(info.annotation, typing.ForwardRef)
            and exc.name in info.annotation.__forward_arg__
        ]
        where = f"{cls.__qualname__}.{fields[0]}" if fields else cls.__qualname__
        raise ModelDefinitionError(
            f"{where}: the type {exc.name!r} is not defined when the class is created "
            "(imported only under TYPE_CHECKING, or defined later in the module); "
            "singletable compiles the entity's keys and attributes from its field types "
            f"as the class is defined: import {exc.name!r} at run time"
        ) from None


class _Compiler:
    """One compilation: the class, its table and keywords, and the checks in order."""

    def __init__(self, cls: type[BaseModel], table: Table, options: dict[str, Any]) -> None:
        self.cls = cls
        self.table = table
        self.options = options
        self.label = cls.__qualname__
        self.model_fields = cls.model_fields

    def plan(self) -> EntityPlan:
        name, version = self.identity()
        self.check_field_names()
        primary = self.key_plan(None, self.options["pk"], self.options.get("sk"))
        self.check_key_field_names(primary)
        indexes = self.index_plans()
        fields, encoders = self.field_plans(primary)
        native_indexes = self.native_plans(name, fields)
        ttl_field = self.special("ttl", (datetime, int), primary)
        if ttl_field is not None and self.table.ttl_attribute is None:
            raise ModelDefinitionError(
                f"{self.label}: ttl={ttl_field!r} needs Table(..., ttl_attribute='...')"
            )
        version_field = self.special("version_field", (int,), primary)
        self.check_version_field_not_indexed(version_field, indexes)
        unique = _unique_constraints(
            self.cls, name, self.table, self.options.get("unique"), primary, version_field
        )
        return EntityPlan(
            model=self.cls,
            name=name,
            version=version,
            table=self.table,
            primary=primary,
            indexes=indexes,
            fields=fields,
            version_field=version_field,
            created_at_field=self.special("created_at", (datetime,), primary),
            updated_at_field=self.special("updated_at", (datetime,), primary),
            ttl_field=ttl_field,
            unique=unique,
            native_indexes=native_indexes,
            _encoders=tuple(encoders),
        )

    # -- options and names -----------------------------------------------------------

    def identity(self) -> tuple[str, int]:
        unknown = set(self.options) - _OPTION_NAMES
        if unknown:
            raise ModelDefinitionError(
                f"{self.label}: unknown class keyword(s) {sorted(unknown)}; "
                f"known: {sorted(_OPTION_NAMES)}"
            )
        name = self.options.get("name") or self.cls.__name__
        version = self.options.get("version", 1)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise ModelDefinitionError(
                f"{self.label}: version must be an int >= 1, got {version!r}"
            )
        if self.cls.model_config.get("extra") == "allow":
            # Extra values have no declared type or codec: they would be dropped on write.
            raise ModelDefinitionError(
                f"{self.label}: model_config extra='allow' is not supported (extra values "
                "would not be stored); declare the fields, e.g. a dict[str, Any] field for "
                "free-form data"
            )
        return str(name), version

    def check_field_names(self) -> None:
        table = self.table
        reserved_attributes = table.bookkeeping_attributes()
        for field_name in self.model_fields:
            # Field names that shadow Entity's own attributes are refused by Entity itself,
            # before pydantic collects the fields (it only warns).
            if field_name in reserved_attributes:
                raise ModelDefinitionError(
                    f"{self.label}.{field_name}: the field name is a key or bookkeeping "
                    f"attribute of table {table.name!r}; rename the field"
                )

    def check_key_field_names(self, primary: KeyPlan) -> None:
        # Key fields are passed as keyword arguments next to these options (get(consistent=
        # ..., **key), query(index=..., **values)), so a key field cannot share their names.
        for key_field in primary.fields:
            if key_field in _KEY_OPTION_NAMES:
                raise ModelDefinitionError(
                    f"{self.label}.{key_field}: a key field cannot be named {key_field!r}, "
                    "which the operations take as an option; rename the field"
                )

    # -- keys ------------------------------------------------------------------------

    def key_codecs(
        self, template: str, *, sparse_ok: bool
    ) -> tuple[dict[str, KeyCodec[Any]], set[str]]:
        codecs: dict[str, KeyCodec[Any]] = {}
        optional: set[str] = set()
        for field_name, info in self.model_fields.items():
            if "{" + field_name + "}" not in template:
                continue
            where = f"{self.label}.{field_name} in template {template!r}"
            is_opt, inner = _is_optional(info.annotation)
            if is_opt:
                if not sparse_ok:
                    raise ModelDefinitionError(
                        f"{where}: a primary key field cannot be optional (None has no key); "
                        "make it required"
                    )
                optional.add(field_name)
            codecs[field_name] = codec_for(inner, info.metadata, where=where)
        return codecs, optional

    def template(
        self,
        source: str,
        schema: KeySchema,
        role: typing.Literal["pk", "sk"],
        *,
        sparse_ok: bool,
        where: str,
    ) -> tuple[KeyTemplate, set[str]]:
        label = self.label
        if not isinstance(source, str):
            raise ModelDefinitionError(f"{label}: {role} template must be a str, got {source!r}")
        # Checked here, not by KeyTemplate: it only sees the codecs of the fields it names.
        unknown = [n for n in FIELD_SEGMENT.findall(source) if n not in self.model_fields]
        if unknown:
            raise ModelDefinitionError(
                f"{label} ({where}), {role} template {source!r}: unknown field {unknown[0]!r}; "
                f"the template can only name fields of {label} "
                f"({', '.join(self.model_fields) or 'none'})"
            )
        codecs, optional = self.key_codecs(source, sparse_ok=sparse_ok)
        attribute = schema.pk if role == "pk" else schema.sk
        assert attribute is not None
        key_type = schema.pk_type if role == "pk" else schema.sk_type
        compiled = KeyTemplate(
            source,
            attribute=attribute,
            role=role,
            key_type=key_type,
            escaper=self.table.escaper,
            codecs=codecs,
            where=f"{label} ({where})",
        )
        return compiled, optional

    def key_plan(self, index: str | None, pk: str | None, sk: str | None) -> KeyPlan:
        schema = self.table.key_schema(index)
        where = "table key" if index is None else f"index {index}"
        if pk is None:
            raise ModelDefinitionError(f"{self.label}: {where} needs a pk template")
        if schema.sk is None and sk is not None:
            raise ModelDefinitionError(
                f"{self.label}: {where} has no sort key attribute, but sk={sk!r} was given"
            )
        if schema.sk is not None and sk is None:
            raise ModelDefinitionError(
                f"{self.label}: {where} has sort key attribute {schema.sk!r}; declare sk=..."
            )
        sparse_ok = index is not None
        pk_t, pk_opt = self.template(pk, schema, "pk", sparse_ok=sparse_ok, where=where)
        sk_t, sk_opt = (
            (None, set())
            if sk is None
            else self.template(sk, schema, "sk", sparse_ok=sparse_ok, where=where)
        )
        return KeyPlan(schema, pk_t, sk_t, frozenset(pk_opt | sk_opt))

    def index_plans(self) -> dict[str, KeyPlan]:
        indexes: dict[str, KeyPlan] = {}
        for index_name, keys in (self.options.get("indexes") or {}).items():
            indexes[index_name] = self.index_plan(index_name, keys)
        return indexes

    def index_plan(self, index_name: str, keys: object) -> KeyPlan:
        label, table = self.label, self.table
        spec = table.indexes.get(index_name)
        if spec is None:
            known = ", ".join(sorted(table.indexes)) or "none"
            raise ModelDefinitionError(
                f"{label}: table {table.name!r} has no index {index_name!r} (indexes: {known})"
            )
        if isinstance(keys, str):
            keys = IndexKeys(sk=keys) if isinstance(spec, LSI) else IndexKeys(pk=keys)
        elif isinstance(keys, tuple):
            keys = IndexKeys(*keys)
        if not isinstance(keys, IndexKeys):
            raise ModelDefinitionError(
                f"{label}: indexes[{index_name!r}] must be IndexKeys(pk=..., sk=...)"
            )
        if not isinstance(spec, LSI):
            return self.key_plan(index_name, keys.pk, keys.sk)
        if keys.pk is not None and keys.pk != self.options["pk"]:
            raise ModelDefinitionError(
                f"{label}: LSI {index_name!r} shares the table's partition key; give only sk=..."
            )
        return self.key_plan(index_name, self.options["pk"], keys.sk)

    # -- fields ----------------------------------------------------------------------

    def field_plans(
        self, primary: KeyPlan
    ) -> tuple[dict[str, FieldPlan], list[tuple[str, str, Callable[[Any], AttributeValue | None]]]]:
        fields: dict[str, FieldPlan] = {}
        encoders: list[tuple[str, str, Callable[[Any], AttributeValue | None]]] = []
        for field_name, info in self.model_fields.items():
            codec = attribute_codec_for(
                info.annotation,
                info.metadata,
                where=f"{self.label}.{field_name}",
                validated=field_is_validated(self.cls, field_name),
            )
            encode = codec.to_av
            if field_name in primary.fields and codec.kind == "N":
                encode = _kept_in_the_key(encode)
                codec = _with_item_encoder(codec, encode)
            # Any admits None, which is stored by omission like an Optional's.
            nullable = _is_optional(info.annotation)[0] or info.annotation is Any
            fields[field_name] = FieldPlan(
                name=field_name,
                attribute=field_name,
                annotation=info.annotation,
                required=info.is_required(),
                codec=codec,
                is_set=_is_set(info.annotation),
                nullable=nullable,
                # Left out, it would read back as the default (a factory's included; an
                # Optional set reads absence as None: DynamoDB stores no empty set).
                stores_none=nullable
                and not info.is_required()
                and not _is_set(info.annotation)
                and (info.default_factory is not None or info.default is not None),
            )
            encoders.append((field_name, field_name, encode))
        return fields, encoders

    # -- native GSIs -----------------------------------------------------------------

    def native_plans(self, name: str, fields: Mapping[str, FieldPlan]) -> dict[str, NativeKeyPlan]:
        """The native GSIs this entity feeds; every part attribute it stores is checked.

        A field stored under a part's attribute must be S, N or B and agree in type with
        the declaration and the table's other entities, whether or not the entity stores
        the other parts: DynamoDB refuses an item whose index key attribute has another
        type. Only an entity that stores every part is in the index; its sort parts must
        order like their values, its partition parts have one stored form per value.
        """
        result: dict[str, NativeKeyPlan] = {}
        if not self.table.native_indexes:
            # other_types walks every entity already on the table: quadratic in the number
            # of entities (a fifth of defining 20 entities, bench_overheads), for nothing
            # on a table without native GSIs.
            return result
        by_attribute = {f.attribute: f for f in fields.values()}
        others = self.other_types(name)
        for spec in self.table.native_indexes.values():
            parts: list[NativePart] = []
            for role, declared in [("pk", p) for p in spec.pk] + [("sk", p) for p in spec.sk]:
                field_plan = by_attribute.get(declared.attribute)
                if field_plan is not None:
                    where = (
                        f"{self.label}.{field_plan.name} (attribute {declared.attribute!r} of "
                        f"native GSI {spec.name!r})"
                    )
                    kind = self.part_type(where, field_plan, declared, others)
                    parts.append(self.native_part(where, role, field_plan, kind))
            if len(parts) < len(spec.parts):
                continue  # not every part stored: never in the index
            self.check_native_field_names(spec, parts)
            optional = frozenset(p.field for p in parts if fields[p.field].nullable)
            pk_parts = tuple(parts[: len(spec.pk)])
            result[spec.name] = NativeKeyPlan(
                spec, pk_parts, tuple(parts[len(spec.pk) :]), optional
            )
        return result

    def other_types(self, name: str) -> dict[str, tuple[KeyType, str]]:
        """The key-scalar type of each attribute the table's other entities store."""
        types: dict[str, tuple[KeyType, str]] = {}
        for plan in entity_plans(self.table):
            if plan.name == name:  # another version of this entity: migrations handle it
                continue
            for field_plan in plan.fields.values():
                key_type = KEY_TYPES.get(field_plan.codec.kind)
                if key_type is not None:
                    where = f"{plan.name}.{field_plan.name}"
                    types.setdefault(field_plan.attribute, (key_type, where))
        return types

    def part_type(
        self,
        where: str,
        field_plan: FieldPlan,
        declared: KeyPart,
        others: Mapping[str, tuple[KeyType, str]],
    ) -> KeyType:
        kind = KEY_TYPES.get(field_plan.codec.kind)
        if kind is None:
            raise ModelDefinitionError(
                f"{where}: the field is stored as {field_plan.codec.kind}, and a key attribute "
                "must be S, N or B; give it a str, number, bytes, date, UUID or enum type, or "
                "rename the field"
            )
        if declared.type is not None and declared.type != kind:
            raise ModelDefinitionError(
                f"{where}: the field is stored as {kind}, but the index declares the "
                f"attribute as {declared.type}"
            )
        other = others.get(declared.attribute)
        if other is not None and other[0] != kind:
            raise ModelDefinitionError(
                f"{where}: the field is stored as {kind}, but {other[1]} stores the same "
                f"attribute as {other[0]}; DynamoDB refuses an index key attribute of either "
                "type once the other is the index's; give the fields one type or other names"
            )
        return kind

    def native_part(
        self, where: str, role: str, field_plan: FieldPlan, kind: KeyType
    ) -> NativePart:
        order = field_plan.codec.key_order
        if field_plan.stores_none:
            raise ModelDefinitionError(
                f"{where}: None is stored as NULL (the field's default is not None), and "
                "a key attribute cannot be NULL; make None the default, or the field required"
            )
        if order == "none" or (role == "sk" and order != "ordered"):
            need = "one stored form per value" if role == "pk" else "a stored form that orders"
            raise ModelDefinitionError(
                f"{where}: a {role} part needs {need} like its values, and the field's "
                f"{field_plan.codec.params().get('python', kind)} codec does not give it "
                f"(key order: {order}); store a number, str, date, UUID or ordered enum "
                "instead (an epoch int for a datetime), or key a template GSI with a key codec"
            )
        return NativePart(field_plan.name, field_plan.attribute, kind, order == "ordered")

    def check_native_field_names(self, spec: NativeGSI, parts: list[NativePart]) -> None:
        # The parts are passed to query(index=..., **values) beside its options.
        for part in parts:
            if part.field in _KEY_OPTION_NAMES:
                raise ModelDefinitionError(
                    f"{self.label}.{part.field}: a field of native GSI {spec.name!r} cannot "
                    f"be named {part.field!r}, which the operations take as an option"
                )

    def special(self, option: str, allowed: tuple[type, ...], primary: KeyPlan) -> str | None:
        """The field named by keyword ``option`` (ttl, version_field, created_at, ...)."""
        label = self.label
        field_name = self.options.get(option)
        if field_name is None:
            return None
        if field_name not in self.model_fields:
            raise ModelDefinitionError(f"{label}: {option}={field_name!r} is not a field")
        annotation = _is_optional(self.model_fields[field_name].annotation)[1]
        if annotation not in allowed:
            names = " or ".join(t.__name__ for t in allowed)
            raise ModelDefinitionError(f"{label}: {option} field {field_name!r} must be {names}")
        if field_name in primary.fields:
            raise ModelDefinitionError(
                f"{label}: {option} field {field_name!r} cannot be part of the primary key"
            )
        return str(field_name)

    def check_version_field_not_indexed(
        self, version_field: str | None, indexes: Mapping[str, KeyPlan]
    ) -> None:
        if version_field is None:
            return
        for index_name, index_plan in indexes.items():
            if version_field in index_plan.fields:
                # Updates bump the version with ADD, whose result is not known client-side,
                # so an index keyed on it could never be kept in step.
                raise ModelDefinitionError(
                    f"{self.label}: version_field {version_field!r} cannot be part of index "
                    f"{index_name!r}'s key templates; key the index on another field"
                )


def _unique_constraints(
    cls: type[BaseModel],
    name: str,
    table: Table,
    declared: Any,
    primary: KeyPlan,
    version_field: str | None,
) -> tuple[UniqueConstraint, ...]:
    """Compile the ``unique=`` class keyword into constraints.

    ``"email"`` or ``("email", "phone")`` declare one constraint per field,
    ``[("tenant_id", "email")]`` one constraint over the group.
    """
    label = cls.__qualname__
    if declared is None:
        return ()
    groups: list[tuple[str, ...]] = []
    entries = [declared] if isinstance(declared, str) else declared
    if not isinstance(entries, (list, tuple)) or not entries:
        raise ModelDefinitionError(
            f"{label}: unique= takes a field name, or a list of field names and tuples of "
            f"field names (one constraint each), got {declared!r}"
        )
    for entry in entries:
        group = (entry,) if isinstance(entry, str) else entry
        if (
            not isinstance(group, (list, tuple))
            or not group
            or not all(isinstance(f, str) for f in group)
        ):
            raise ModelDefinitionError(
                f"{label}: unique= entry {entry!r} must be a field name or a tuple of field names"
            )
        group = tuple(group)
        if len(set(group)) != len(group):
            raise ModelDefinitionError(f"{label}: unique= entry {group!r} names a field twice")
        if group in groups:
            raise ModelDefinitionError(f"{label}: unique= declares {group!r} twice")
        groups.append(group)
    if groups and (table.pk_type != "S" or (table.sk is not None and table.sk_type != "S")):
        raise ModelDefinitionError(
            f"{label}: unique= keeps guard items under string keys, but table {table.name!r} "
            "has a non-string key attribute; use a table with string keys"
        )
    model_fields = cls.model_fields
    result: list[UniqueConstraint] = []
    for group in groups:
        codecs: dict[str, KeyCodec[Any]] = {}
        for field_name in group:
            info = model_fields.get(field_name)
            if info is None:
                raise ModelDefinitionError(f"{label}: unique field {field_name!r} is not a field")
            if field_name == version_field:
                raise ModelDefinitionError(
                    f"{label}: unique field {field_name!r} is the version_field, which every "
                    "update changes with ADD; a uniqueness guard cannot follow it"
                )
            inner = _is_optional(info.annotation)[1]
            codecs[field_name] = codec_for(
                inner, info.metadata, where=f"{label}.{field_name} in unique={group!r}"
            )
        if set(group) == set(primary.fields):
            raise ModelDefinitionError(
                f"{label}: unique={group!r} is the primary key, which is unique already"
            )
        result.append(UniqueConstraint.build(name, group, table, codecs))
    return tuple(result)
