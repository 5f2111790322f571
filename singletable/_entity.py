"""Entities: pydantic models compiled once, at class creation, into an `EntityPlan`.

The plan holds everything the other layers need (key templates per index, key and
attribute codecs per field, the stored identifier) so that requests, table definitions,
snapshots and the CLI read the plan and never re-derive anything from the class.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Annotated, Any, ClassVar, Union

from pydantic import BaseModel, TypeAdapter, ValidationError
from typing_extensions import Self

from singletable._attributes import (
    AttributeCodec,
    attribute_codec_for,
    check_item_size,
    to_attribute_value,
)
from singletable._codecs import KeyCodec, codec_for
from singletable._codegen import build_item_decoder, build_item_encoder
from singletable._errors import (
    ExpressionError,
    ItemDecodeError,
    ItemEncodeError,
    KeyDecodeError,
    ModelDefinitionError,
)
from singletable._expressions import FieldRef
from singletable._table import LSI, KeySchema, Table
from singletable._templates import _FIELD_SEGMENT, KeyTemplate
from singletable._types import AttributeValue, Item

if typing.TYPE_CHECKING:
    from singletable._expressions import Condition
    from singletable._query import EntityQuery, Scan
    from singletable._requests import Delete, Get, Put, ReturnCapacity, Update

# Names the Entity base class itself uses; a model field with one of them would shadow it.
_KEY_OPTION_NAMES = frozenset({"capacity", "consistent", "condition", "return_old", "index"})
_RESERVED_NAMES = frozenset(
    {
        "f",
        "key",
        "get",
        "put",
        "create",
        "update",
        "upsert",
        "delete",
        "query",
        "scan",
        "to_item",
        "from_item",
        "plan",
    }
)


@dataclass(frozen=True)
class IndexKeys:
    """The key templates an entity writes into one index (``pk`` is omitted for an LSI)."""

    pk: str | None = None
    sk: str | None = None


@dataclass(frozen=True)
class FieldPlan:
    """How one model field is stored."""

    name: str
    attribute: str
    annotation: Any
    required: bool
    codec: AttributeCodec
    is_set: bool
    nullable: bool = False


@dataclass(frozen=True)
class KeyPlan:
    """The templates an entity writes into the table's key or one index's key."""

    schema: KeySchema
    pk: KeyTemplate
    sk: KeyTemplate | None
    #: Fields whose ``None`` keeps the item out of this (sparse) index.
    optional_fields: frozenset[str] = frozenset()

    @property
    def index(self) -> str | None:
        """The index name, or ``None`` for the table's primary key."""
        return self.schema.index

    @property
    def fields(self) -> tuple[str, ...]:
        """Every field the key is built from, partition key fields first."""
        return self.pk.fields + (self.sk.fields if self.sk else ())

    def templates(self) -> list[KeyTemplate]:
        """The partition key template and, if any, the sort key template."""
        return [self.pk] if self.sk is None else [self.pk, self.sk]

    def key_item(self, obj: BaseModel) -> Item | None:
        """The key attributes for ``obj``; ``None`` when a sparse field is unset."""
        values = obj.__dict__
        for name in self.optional_fields:
            if values.get(name) is None:
                return None
        return {t.attribute: t.attribute_value(t.format_object(obj)) for t in self.templates()}

    def key_from_values(self, values: Mapping[str, Any]) -> Item:
        """The key attributes from field values (a mapping holding every key field)."""
        return {t.attribute: t.attribute_value(t.format(values)) for t in self.templates()}


@dataclass(frozen=True)
class EntityPlan:
    """The compiled form of an entity class: read by every other layer."""

    model: type[Entity]
    name: str
    version: int
    table: Table
    primary: KeyPlan
    indexes: Mapping[str, KeyPlan]
    fields: Mapping[str, FieldPlan]
    version_field: str | None = None
    created_at_field: str | None = None
    updated_at_field: str | None = None
    ttl_field: str | None = None
    _encoders: tuple[tuple[str, str, Callable[[Any], AttributeValue | None]], ...] = field(
        default=(), repr=False
    )
    # Generated from the fields above (see _codegen.py): the hot paths of to_item/from_item.
    _item_encoder: Callable[[BaseModel], Item] = field(init=False, repr=False, compare=False)
    _item_decoder: Callable[[Mapping[str, AttributeValue]], Entity] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        encoder = build_item_encoder(self, epoch_seconds=_epoch_seconds)
        object.__setattr__(self, "_item_encoder", encoder)
        object.__setattr__(self, "_item_decoder", build_item_decoder(self))

    @property
    def label(self) -> str:
        """How messages name this entity."""
        return f"entity {self.name}"

    def key_plan(self, index: str | None) -> KeyPlan:
        """The table's key plan (``None``) or the named index's."""
        if index is None:
            return self.primary
        try:
            return self.indexes[index]
        except KeyError:
            known = ", ".join(sorted(self.indexes)) or "none"
            raise ModelDefinitionError(
                f"{self.label} writes no keys for index {index!r} (it writes: {known})"
            ) from None

    def key(self, obj: BaseModel) -> Item:
        """The primary key attributes of a model instance."""
        key = self.primary.key_item(obj)
        assert key is not None  # primary key fields are never optional
        return key

    def key_from_values(self, values: Mapping[str, Any]) -> Item:
        """The primary key attributes from field values."""
        return self.primary.key_from_values(values)

    def identity_attributes(self) -> Item:
        """The bookkeeping attributes that identify the entity on every stored item."""
        return {
            self.table.entity_attribute: {"S": self.name},
            self.table.version_attribute: {"N": str(self.version)},
        }

    def to_item(self, obj: BaseModel) -> Item:
        """The full low-level item for a model instance, size-checked."""
        return self._item_encoder(obj)

    def _to_item_reference(self, obj: BaseModel) -> Item:
        """`to_item` written plainly: the specification the generated encoder must match."""
        item: Item = self.key(obj)
        for index in self.indexes.values():
            index_key = index.key_item(obj)
            if index_key is not None:
                item.update(index_key)
        values = obj.__dict__
        for name, attribute, encode in self._encoders:
            value = values[name]
            if value is not None:
                av = encode(value)
                if av is not None:
                    item[attribute] = av
        if self.ttl_field is not None and self.table.ttl_attribute is not None:
            ttl = values[self.ttl_field]
            if ttl is not None:
                item[self.table.ttl_attribute] = {"N": str(_epoch_seconds(ttl))}
        item[self.table.entity_attribute] = {"S": self.name}
        item[self.table.version_attribute] = {"N": str(self.version)}
        check_item_size(item, where=self.label)
        return item

    def from_item(self, item: Mapping[str, AttributeValue]) -> Entity:
        """Decode a stored item into a validated model instance.

        Fields missing from the item (an index projection that did not copy them) are
        recovered from the key attributes when a key template holds them.
        """
        return self._item_decoder(item)

    def _from_item_reference(self, item: Mapping[str, AttributeValue]) -> Entity:
        """`from_item` written plainly: the specification the generated decoder must match."""
        data: dict[str, Any] = {}
        for name, plan in self.fields.items():
            av = item.get(plan.attribute)
            if av is not None:
                data[name] = plan.codec.from_av(av)
            elif plan.is_set:
                data[name] = set()
            elif plan.nullable and plan.required:
                # None is stored by omitting the attribute; a required Optional field
                # (no default) must get its None back explicitly.
                data[name] = None
        if len(data) < len(self.fields):
            self._fill_from_keys(item, data)
        try:
            return self.model.model_validate(data)
        except ValueError as exc:
            raise ItemDecodeError(f"{self.label}: stored item does not validate: {exc}") from exc

    def validate_field(self, name: str, value: Any) -> Any:
        """``value`` validated (and coerced) as field ``name`` would be on the model.

        Used for values that reach an item without a model instance (update ``set``), so
        they meet the same type and constraints as a put; field validators declared with
        ``@field_validator`` run only on whole models.
        """
        try:
            return _field_adapter(self.model, name).validate_python(value)
        except ValidationError as exc:
            problems = "; ".join(e["msg"] for e in exc.errors())
            raise ItemEncodeError(f"{self.name}.{name}: {problems} (got {value!r})") from None

    def fields_from_keys(self, item: Mapping[str, AttributeValue]) -> dict[str, Any]:
        """The field values that the item's key attributes hold (where they parse)."""
        data: dict[str, Any] = {}
        self._fill_from_keys(item, data)
        return data

    def _fill_from_keys(self, item: Mapping[str, AttributeValue], data: dict[str, Any]) -> None:
        for key_plan in (self.primary, *self.indexes.values()):
            for template in key_plan.templates():
                if any(f not in data for f in template.fields):
                    av = item.get(template.attribute)
                    if av is None or template.key_type not in av:
                        continue
                    try:
                        parsed = template.parse(av[template.key_type])
                    except KeyDecodeError:
                        continue
                    for name, value in parsed.items():
                        data.setdefault(name, value)

    def describe(self) -> dict[str, Any]:
        """A JSON-able description of what this entity stores (for snapshots and docs)."""
        return {
            "name": self.name,
            "version": self.version,
            "class": f"{self.model.__module__}.{self.model.__qualname__}",
            "keys": {
                (kp.index or "<table>"): {
                    "pk": kp.pk.describe(),
                    **({"sk": kp.sk.describe()} if kp.sk else {}),
                    "sparse_fields": sorted(kp.optional_fields),
                }
                for kp in (self.primary, *self.indexes.values())
            },
            "attributes": {
                name: {**plan.codec.params(), "required": plan.required}
                for name, plan in self.fields.items()
            },
            "version_field": self.version_field,
            "ttl_field": self.ttl_field,
        }


@functools.cache
def _field_adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    info = model.model_fields[name]
    # Annotated[X, *metadata], spelled so that Python 3.10 parses it. The annotation is a
    # runtime value here, which static type forms cannot express: hence Any.
    params = (info.annotation, *info.metadata)
    annotation: Any = Annotated[params] if info.metadata else info.annotation
    return TypeAdapter(annotation)


def _epoch_seconds(value: Any) -> int:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return int(value.timestamp())
    return int(value)


_SCALAR_TYPES = frozenset({"S", "N", "B", "BOOL", "NULL"})


class _FieldRefs:
    """``Entity.f``: typed references to an entity's attributes, for conditions and updates."""

    def __init__(self, plan: EntityPlan) -> None:
        self._plan = plan

    def __getattr__(self, name: str) -> FieldRef:
        plan = self._plan.fields.get(name)
        if plan is None:
            raise AttributeError(
                f"{self._plan.model.__qualname__} has no field {name!r} "
                f"(fields: {', '.join(self._plan.fields)})"
            )
        # Elements and sub-paths of a collection (contains("x") on a set, meta["k"] == v)
        # are not values of the whole field: convert them by their runtime type.
        elements = None if plan.codec.params()["type"] in _SCALAR_TYPES else to_attribute_value
        return FieldRef(
            (plan.attribute,),
            _null_aware(plan.codec),
            element_to_av=elements,
            label=f"{self._plan.name}.{name}",
            # A top-level None is stored by omitting the attribute.
            none_is_missing=True,
        )


def _null_aware(codec: AttributeCodec) -> Callable[[Any], AttributeValue]:
    def to_av(value: Any) -> AttributeValue:
        if value is None:
            return {"NULL": True}
        av = codec.to_av(value)
        if av is None:
            raise ExpressionError(
                f"{codec.where}: an empty set cannot be compared (DynamoDB stores none, the "
                "attribute is left out); test attribute_not_exists() instead"
            )
        return av

    return to_av


class _FieldRefsDescriptor:
    def __get__(self, instance: object, owner: type[Entity]) -> _FieldRefs:
        return _FieldRefs(owner.plan())


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


class Entity(BaseModel):
    """Base class of entities: pydantic models stored in a single table.

    Declare the table and key templates as class keywords::

        class AuditEvent(Entity, table=app, pk="ACTOR#{actor_id}", sk="EVT#{ts}#{seq}"):
            actor_id: str
            ts: datetime
            seq: Annotated[int, KeyFormat(width=6)]

    Class keywords: ``table``, ``pk``, ``sk``, ``indexes`` (index name -> `IndexKeys`),
    ``name`` (stored identifier, default the class name), ``version`` (schema version,
    default 1), ``version_field`` (an int field used for optimistic locking),
    ``created_at`` / ``updated_at`` (datetime fields stamped on writes), ``ttl`` (a datetime
    or epoch-seconds field written to the table's TTL attribute). A class without ``pk``
    is abstract: it can hold shared fields and the ``table`` for its subclasses.
    """

    __singletable_plan__: ClassVar[EntityPlan | None] = None
    __singletable_table__: ClassVar[Table | None] = None
    __singletable_options__: ClassVar[dict[str, Any]] = {}

    f: ClassVar[_FieldRefsDescriptor] = _FieldRefsDescriptor()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The keywords are read in __pydantic_init_subclass__, once the fields exist.
        cls.__singletable_options__ = kwargs
        super().__init_subclass__()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__()
        options = dict(cls.__singletable_options__)
        table = options.pop("table", None) or cls.__singletable_table__
        if table is not None and not isinstance(table, Table):
            raise ModelDefinitionError(f"{cls.__qualname__}: table= must be a Table, got {table!r}")
        cls.__singletable_table__ = table
        cls.__singletable_plan__ = None
        if options.get("pk") is None:
            unknown = set(options) - {"abstract"}
            if unknown:
                raise ModelDefinitionError(
                    f"{cls.__qualname__}: options {sorted(unknown)} need a partition key "
                    "template pk=..."
                )
            return
        if table is None:
            raise ModelDefinitionError(f"{cls.__qualname__}: an entity needs table=Table(...)")
        cls.__singletable_plan__ = _compile(cls, table, options)
        table.register(cls.__singletable_plan__)

    @classmethod
    def plan(cls) -> EntityPlan:
        """The compiled plan of this entity class."""
        plan = cls.__singletable_plan__
        if plan is None:
            raise ModelDefinitionError(
                f"{cls.__qualname__} is abstract: declare pk=... (and table=...) on it"
            )
        return plan

    def to_item(self) -> Item:
        """This instance as a low-level DynamoDB item (keys, attributes, identifier)."""
        return self.plan().to_item(self)

    def key(self) -> Item:
        """This instance's primary key as low-level attribute values."""
        return self.plan().key(self)

    # -- operations ------------------------------------------------------------------
    # Thin constructors for the pure builders of the request layer (imported lazily, as
    # that layer is built on top of this one). Each returns a value with ``.params()``
    # (the exact request) and ``.run(db)``.

    @classmethod
    def get(
        cls, *, consistent: bool = False, capacity: ReturnCapacity | None = None, **key: Any
    ) -> Get[Self]:
        """Read one item by its primary key fields (``None`` when missing)."""
        from singletable._requests import Get

        return Get(cls.plan(), key, consistent=consistent, capacity=capacity)

    @classmethod
    def put(
        cls,
        obj: Self,
        *,
        condition: Condition | None = None,
        capacity: ReturnCapacity | None = None,
    ) -> Put[Self]:
        """Write ``obj``, replacing any item with the same key."""
        from singletable._requests import Put

        cls._check_instance(obj)
        return Put(obj, condition=condition, capacity=capacity)

    @classmethod
    def create(cls, obj: Self, *, capacity: ReturnCapacity | None = None) -> Put[Self]:
        """Write ``obj``; `AlreadyExistsError` if an item with its key exists."""
        from singletable._requests import Put

        cls._check_instance(obj)
        return Put(obj, create=True, capacity=capacity)

    @classmethod
    def update(cls, *, capacity: ReturnCapacity | None = None, **key: Any) -> Update[Self]:
        """Change attributes of an existing item (`NotFoundError` if it is missing)."""
        from singletable._requests import Update

        return Update(cls.plan(), key, capacity=capacity)

    @classmethod
    def upsert(cls, *, capacity: ReturnCapacity | None = None, **key: Any) -> Update[Self]:
        """Like `update`, but create the item when it is missing."""
        from singletable._requests import Update

        return Update(cls.plan(), key, upsert=True, capacity=capacity)

    @classmethod
    def delete(
        cls,
        obj: Self | None = None,
        *,
        condition: Condition | None = None,
        return_old: bool = False,
        capacity: ReturnCapacity | None = None,
        **key: Any,
    ) -> Delete[Self]:
        """Delete by key fields, or delete ``obj`` (checking its version if locking is on)."""
        from singletable._requests import Delete

        plan = cls.plan()
        expected = None
        if obj is not None:
            cls._check_instance(obj)
            key = {f: getattr(obj, f) for f in plan.primary.fields}
            if plan.version_field is not None:
                expected = getattr(obj, plan.version_field)
        return Delete(
            plan,
            key,
            condition=condition,
            return_old=return_old,
            expected_version=expected,
            capacity=capacity,
        )

    @classmethod
    def query(cls, *, index: str | None = None, **values: Any) -> EntityQuery[Self]:
        """Query one partition: partition key fields, then leading sort key fields."""
        from singletable._query import EntityQuery

        return EntityQuery(cls.plan(), values, index)

    @classmethod
    def scan(cls, *, index: str | None = None) -> Scan[Self]:
        """Scan the table (or an index) for items of this entity."""
        from singletable._query import Scan

        plan = cls.plan()
        return Scan(plan.table, plan, index)

    @classmethod
    def _check_instance(cls, obj: object) -> None:
        if not isinstance(obj, cls):
            raise TypeError(
                f"{cls.__qualname__}.put/create/delete takes a {cls.__qualname__}, "
                f"got {type(obj).__qualname__}"
            )

    @classmethod
    def from_item(cls, item: Mapping[str, AttributeValue]) -> Self:
        """Decode a low-level item (written for this entity) into an instance."""
        plan = cls.plan()
        et = item.get(plan.table.entity_attribute)
        if et is not None and et.get("S") != plan.name:
            raise ItemDecodeError(f"item belongs to entity {et.get('S')!r}, not {plan.name!r}")
        obj = plan.from_item(item)
        assert isinstance(obj, cls)
        return obj


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
        "abstract",
    }
)


def _compile(cls: type[Entity], table: Table, options: dict[str, Any]) -> EntityPlan:
    label = cls.__qualname__
    unknown = set(options) - _OPTION_NAMES
    if unknown:
        raise ModelDefinitionError(
            f"{label}: unknown class keyword(s) {sorted(unknown)}; known: {sorted(_OPTION_NAMES)}"
        )
    name = options.get("name") or cls.__name__
    version = options.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelDefinitionError(f"{label}: version must be an int >= 1, got {version!r}")
    model_fields = cls.model_fields
    if cls.model_config.get("extra") == "allow":
        # Extra values have no declared type or codec: they would be dropped on write.
        raise ModelDefinitionError(
            f"{label}: model_config extra='allow' is not supported (extra values would not "
            "be stored); declare the fields, e.g. a dict[str, Any] field for free-form data"
        )
    reserved_attributes = set(table.key_attributes()) | {
        table.entity_attribute,
        table.version_attribute,
    }
    if table.ttl_attribute:
        reserved_attributes.add(table.ttl_attribute)
    for field_name in model_fields:
        if field_name in _RESERVED_NAMES:
            raise ModelDefinitionError(
                f"{label}.{field_name}: the field name shadows Entity.{field_name}; rename it"
            )
        if field_name in reserved_attributes:
            raise ModelDefinitionError(
                f"{label}.{field_name}: the field name is a key or bookkeeping attribute of "
                f"table {table.name!r}; rename the field"
            )

    def key_codecs(template: str, *, sparse_ok: bool) -> tuple[dict[str, KeyCodec[Any]], set[str]]:
        codecs: dict[str, KeyCodec[Any]] = {}
        optional: set[str] = set()
        for field_name, info in model_fields.items():
            if "{" + field_name + "}" not in template:
                continue
            where = f"{label}.{field_name} in template {template!r}"
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
        source: str,
        schema: KeySchema,
        role: typing.Literal["pk", "sk"],
        *,
        sparse_ok: bool,
        where: str,
    ) -> tuple[KeyTemplate, set[str]]:
        if not isinstance(source, str):
            raise ModelDefinitionError(f"{label}: {role} template must be a str, got {source!r}")
        # Checked here, not by KeyTemplate: it only sees the codecs of the fields it names.
        unknown = [n for n in _FIELD_SEGMENT.findall(source) if n not in model_fields]
        if unknown:
            raise ModelDefinitionError(
                f"{label} ({where}), {role} template {source!r}: unknown field {unknown[0]!r}; "
                f"the template can only name fields of {label} "
                f"({', '.join(model_fields) or 'none'})"
            )
        codecs, optional = key_codecs(source, sparse_ok=sparse_ok)
        attribute = schema.pk if role == "pk" else schema.sk
        assert attribute is not None
        key_type = schema.pk_type if role == "pk" else schema.sk_type
        compiled = KeyTemplate(
            source,
            attribute=attribute,
            role=role,
            key_type=key_type,
            escaper=table.escaper,
            codecs=codecs,
            where=f"{label} ({where})",
        )
        return compiled, optional

    def key_plan(index: str | None, pk: str | None, sk: str | None) -> KeyPlan:
        schema = table.key_schema(index)
        where = "table key" if index is None else f"index {index}"
        if pk is None:
            raise ModelDefinitionError(f"{label}: {where} needs a pk template")
        if schema.sk is None and sk is not None:
            raise ModelDefinitionError(
                f"{label}: {where} has no sort key attribute, but sk={sk!r} was given"
            )
        if schema.sk is not None and sk is None:
            raise ModelDefinitionError(
                f"{label}: {where} has sort key attribute {schema.sk!r}; declare sk=..."
            )
        sparse_ok = index is not None
        pk_t, pk_opt = template(pk, schema, "pk", sparse_ok=sparse_ok, where=where)
        sk_t, sk_opt = (
            (None, set())
            if sk is None
            else template(sk, schema, "sk", sparse_ok=sparse_ok, where=where)
        )
        return KeyPlan(schema, pk_t, sk_t, frozenset(pk_opt | sk_opt))

    primary = key_plan(None, options["pk"], options.get("sk"))
    # Key fields are passed as keyword arguments next to these options (get(consistent=
    # ..., **key), query(index=..., **values)), so a key field cannot share their names.
    for key_field in {*primary.fields}:
        if key_field in _KEY_OPTION_NAMES:
            raise ModelDefinitionError(
                f"{label}.{key_field}: a key field cannot be named {key_field!r}, which the "
                "operations take as an option; rename the field"
            )
    indexes: dict[str, KeyPlan] = {}
    for index_name, keys in (options.get("indexes") or {}).items():
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
        if isinstance(spec, LSI):
            if keys.pk is not None and keys.pk != options["pk"]:
                raise ModelDefinitionError(
                    f"{label}: LSI {index_name!r} shares the table's partition key; "
                    "give only sk=..."
                )
            indexes[index_name] = key_plan(index_name, options["pk"], keys.sk)
        else:
            indexes[index_name] = key_plan(index_name, keys.pk, keys.sk)

    fields: dict[str, FieldPlan] = {}
    encoders: list[tuple[str, str, Callable[[Any], AttributeValue | None]]] = []
    for field_name, info in model_fields.items():
        codec = attribute_codec_for(info.annotation, info.metadata, where=f"{label}.{field_name}")
        fields[field_name] = FieldPlan(
            name=field_name,
            attribute=field_name,
            annotation=info.annotation,
            required=info.is_required(),
            codec=codec,
            is_set=_is_set(info.annotation),
            nullable=_is_optional(info.annotation)[0],
        )
        encoders.append((field_name, field_name, codec.to_av))

    def special(option: str, allowed: tuple[type, ...]) -> str | None:
        field_name = options.get(option)
        if field_name is None:
            return None
        if field_name not in model_fields:
            raise ModelDefinitionError(f"{label}: {option}={field_name!r} is not a field")
        annotation = _is_optional(model_fields[field_name].annotation)[1]
        if annotation not in allowed:
            names = " or ".join(t.__name__ for t in allowed)
            raise ModelDefinitionError(f"{label}: {option} field {field_name!r} must be {names}")
        if field_name in primary.fields:
            raise ModelDefinitionError(
                f"{label}: {option} field {field_name!r} cannot be part of the primary key"
            )
        return str(field_name)

    ttl_field = special("ttl", (datetime, int))
    if ttl_field is not None and table.ttl_attribute is None:
        raise ModelDefinitionError(
            f"{label}: ttl={ttl_field!r} needs Table(..., ttl_attribute='...')"
        )
    version_field = special("version_field", (int,))
    for index_name, index_plan in indexes.items():
        if version_field is not None and version_field in index_plan.fields:
            # Updates bump the version with ADD, whose result is not known client-side,
            # so an index keyed on it could never be kept in step.
            raise ModelDefinitionError(
                f"{label}: version_field {version_field!r} cannot be part of index "
                f"{index_name!r}'s key templates; key the index on another field"
            )
    return EntityPlan(
        model=cls,
        name=name,
        version=version,
        table=table,
        primary=primary,
        indexes=indexes,
        fields=fields,
        version_field=version_field,
        created_at_field=special("created_at", (datetime,)),
        updated_at_field=special("updated_at", (datetime,)),
        ttl_field=ttl_field,
        _encoders=tuple(encoders),
    )
