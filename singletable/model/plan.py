"""Entities: pydantic models compiled once, at class creation, into an `EntityPlan`.

The plan holds everything the other layers need (key templates per index, key and
attribute codecs per field, the stored identifier) so that requests, table definitions,
snapshots and the CLI read the plan and never re-derive anything from the class.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Mapping
from dataclasses import field
from datetime import datetime, timezone
from typing import Annotated, Any

from pydantic import BaseModel, ValidationError

from singletable.attributes.codecs import AttributeCodec
from singletable.attributes.size import attribute_value_size, check_item_size
from singletable.errors import (
    ItemDecodeError,
    ItemEncodeError,
    KeyDecodeError,
    KeyTooLargeError,
    ModelDefinitionError,
)
from singletable.keys.templates import MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, KeyTemplate
from singletable.model.table import KEY_TYPES, KeyPart, KeySchema, KeyType, NativeGSI, Table
from singletable.types import AttributeValue, Item, frozen_dataclass

if typing.TYPE_CHECKING:
    from pydantic import TypeAdapter

    from singletable.model.unique import UniqueConstraint


def native_key_sides(native: NativeGSI) -> tuple[tuple[tuple[KeyPart, ...], int, str], ...]:
    """A native GSI's partition and sort parts, each with the byte limit of their total."""
    return (
        (native.pk, MAX_PARTITION_KEY_BYTES, "partition"),
        (native.sk, MAX_SORT_KEY_BYTES, "sort"),
    )


@frozen_dataclass
class IndexKeys:
    """The key templates an entity writes into one index (``pk`` is omitted for an LSI)."""

    pk: str | None = None
    sk: str | None = None


@frozen_dataclass
class FieldPlan:
    """How one model field is stored."""

    name: str
    attribute: str
    annotation: Any
    required: bool
    codec: AttributeCodec
    is_set: bool
    nullable: bool = False
    #: ``None`` is stored as ``NULL``, not by leaving the attribute out: the field's
    #: default is not ``None``, so an absent attribute reads back as that default.
    stores_none: bool = False


@frozen_dataclass
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


@frozen_dataclass
class NativePart:
    """One attribute of a native GSI key, as one entity stores it."""

    field: str
    attribute: str
    type: KeyType
    #: The stored form orders like the values (`KeyOrder` ``"ordered"``): range
    #: conditions on the part select what the same comparison selects in Python.
    ordered: bool


@frozen_dataclass
class NativeKeyPlan:
    """How an entity feeds a native GSI: its fields stored under every part's attribute.

    Nothing is written for the index; an item is in it exactly when every part's field is
    not ``None`` (`optional_fields` are the ones that can be).
    """

    spec: NativeGSI
    pk: tuple[NativePart, ...]
    sk: tuple[NativePart, ...]
    #: Fields whose ``None`` keeps the item out of this (sparse) index.
    optional_fields: frozenset[str] = frozenset()

    @property
    def index(self) -> str:
        """The index name."""
        return self.spec.name

    @property
    def parts(self) -> tuple[NativePart, ...]:
        """Every part: partition parts, then sort parts."""
        return self.pk + self.sk

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields of every part, partition parts first."""
        return tuple(p.field for p in self.parts)

    def in_index(self, obj: BaseModel) -> bool:
        """Whether ``obj``'s item is in the index (every part's field is set)."""
        values = obj.__dict__
        return all(values.get(name) is not None for name in self.optional_fields)

    def describe(self) -> dict[str, Any]:
        """JSON-able: the parts in order with their fields, types and order."""

        def part(p: NativePart) -> dict[str, Any]:
            return {
                "attribute": p.attribute,
                "field": p.field,
                "type": p.type,
                "ordered": p.ordered,
            }

        return {
            "native": True,
            "pk": [part(p) for p in self.pk],
            "sk": [part(p) for p in self.sk],
            "sparse_fields": sorted(self.optional_fields),
        }


@frozen_dataclass
class EntityPlan:
    """The compiled form of an entity class: read by every other layer."""

    model: type[BaseModel]
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
    #: Uniqueness constraints (`singletable.model.unique`), in declaration order.
    unique: tuple[UniqueConstraint, ...] = ()
    #: The native GSIs this entity feeds (it stores every part), by index name.
    native_indexes: Mapping[str, NativeKeyPlan] = field(default_factory=dict)
    _encoders: tuple[tuple[str, str, Callable[[Any], AttributeValue | None]], ...] = field(
        default=(), repr=False
    )
    # The hot paths of to_item/from_item, generated from the fields above on first use
    # (`codegen.install_generated_codecs` attaches them when the class is compiled).
    _item_encoder: Callable[[BaseModel], Item] = field(init=False, repr=False, compare=False)
    _item_decoder: Callable[..., BaseModel] = field(init=False, repr=False, compare=False)
    #: `singletable.model.pages.page_decoder`'s, made on first use (``False``: none).
    _page_decoder: Any = field(default=None, init=False, repr=False, compare=False)

    @property
    def label(self) -> str:
        """How messages name this entity."""
        return f"entity {self.name}"

    def key_fields(self) -> list[str]:
        """The fields any key template of the table or an index holds, in template order."""
        return list(
            dict.fromkeys(
                name
                for key_plan in (self.primary, *self.indexes.values())
                for template in key_plan.templates()
                for name in template.fields
            )
        )

    def native_text_parts(self) -> dict[str, str]:
        """The S and B native GSI parts this entity stores: attribute -> index name.

        Every entity that stores a part's attribute counts, whether or not it feeds the
        index: DynamoDB refuses an empty value in any index key attribute.
        """
        result: dict[str, str] = {}
        for index in self.table.native_indexes.values():
            for part in index.parts:
                for field_plan in self.fields.values():
                    kind = field_plan.codec.kind
                    if field_plan.attribute == part.attribute and kind in ("S", "B"):
                        result.setdefault(part.attribute, index.name)
        return result

    def check_native_parts(self, item: Item) -> None:
        """Refuse an item whose native GSI key attributes DynamoDB would refuse.

        An empty string or binary in any of them; or the attributes of one side of an
        index (its partition parts, or its sort parts) larger together than a key of
        that side may be (2,048 / 1,024 bytes). DynamoDB Local 3.3.0 refuses those with
        "Aggregate size for HASH (RANGE) key attributes ... has exceeded limit", for the
        parts present, whether or not the item has them all.

        Raises:
            ItemEncodeError: An empty key value.
            KeyTooLargeError: One side's attributes over its limit.
        """
        for attribute, index in self.native_text_parts().items():
            av = item.get(attribute)
            if av is not None and not next(iter(av.values())):
                raise ItemEncodeError(
                    f"{self.name}.{attribute}: an empty value cannot be stored in attribute "
                    f"{attribute!r}, a key attribute of native GSI {index!r} (DynamoDB refuses "
                    "empty key values); store None to leave the item out of the index"
                )
        for native in self.table.native_indexes.values():
            for parts, limit, side in native_key_sides(native):
                present = [item[p.attribute] for p in parts if p.attribute in item]
                size = sum(map(attribute_value_size, present))
                if size > limit:
                    names = ", ".join(p.attribute for p in parts)
                    raise KeyTooLargeError(
                        f"{self.name}: the {side} key attributes of native GSI "
                        f"{native.name!r} ({names}) hold {size} bytes together; DynamoDB's "
                        f"limit for a {side} key is {limit} bytes",
                        size=size,
                        limit=limit,
                    )

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

    def key_of_item(self, item: Item) -> Item:
        """The primary key attributes of an item `to_item` built (no re-encoding)."""
        table = self.table
        if table.sk is None:
            return {table.pk: item[table.pk]}
        return {table.pk: item[table.pk], table.sk: item[table.sk]}

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
                item[self.table.ttl_attribute] = {"N": str(epoch_seconds(ttl))}
        item[self.table.entity_attribute] = {"S": self.name}
        item[self.table.version_attribute] = {"N": str(self.version)}
        for field_plan in self.fields.values():
            if field_plan.stores_none and values[field_plan.name] is None:
                item[field_plan.attribute] = {"NULL": True}
        self.check_native_parts(item)
        check_item_size(item, where=self.label)
        return item

    def from_item(self, item: Mapping[str, AttributeValue], *, check: bool = False) -> BaseModel:
        """Decode a stored item into a validated model instance.

        Fields missing from the item (an index projection that did not copy them) are
        recovered from the key attributes when a key template holds them.

        Args:
            item: The low-level item.
            check: First refuse an item another entity wrote (`check_identity`).
        """
        return self._item_decoder(item, check)

    def check_identity(self, item: Mapping[str, AttributeValue]) -> None:
        """Refuse to decode an item that another entity (or registered version) wrote.

        An item without the entity attribute (not written by singletable) passes: decoding
        says what it misses.

        Raises:
            ItemDecodeError: The item names another entity, or another version of this
                one that the table has registered.
        """
        table = self.table
        et = item.get(table.entity_attribute)
        ev = item.get(table.version_attribute)
        name = et.get("S") if isinstance(et, Mapping) else None
        version = ev.get("N") if isinstance(ev, Mapping) else None
        if name is None:
            return
        registered_other = (
            version is not None
            and version != str(self.version)
            and version.isdigit()
            and entity_plan(table, name, int(version)) is not None
        )
        if name != self.name or registered_other:
            raise ItemDecodeError(
                f"{self.label}: the item was written by entity {name!r} version "
                f"{version}; read it with that entity's class"
            )

    def _from_item_reference(self, item: Mapping[str, AttributeValue]) -> BaseModel:
        """`from_item` written plainly: the specification the generated decoder must match."""
        data: dict[str, Any] = {}
        for name, plan in self.fields.items():
            av = item.get(plan.attribute)
            if av is not None:
                data[name] = plan.codec.from_av(av)
            elif plan.is_set and not plan.nullable:
                # Its own empty container: a strict frozenset field refuses a set.
                data[name] = (
                    frozenset() if typing.get_origin(plan.annotation) is frozenset else set()
                )
            elif plan.nullable and (plan.required or plan.is_set):
                # None is stored by omitting the attribute; a required Optional field
                # (no default) must get its None back explicitly. An Optional set reads
                # back None whatever its default: None and an empty set are both stored
                # as absence, and None is the one a reader can tell from "no elements".
                data[name] = None
        if len(data) < len(self.fields):
            self._fill_from_keys(item, data)
        try:
            # Stored attributes are named after the fields, whatever their aliases.
            return self.model.model_validate(data, by_name=True)
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
                name: {
                    **plan.codec.params(),
                    "required": plan.required,
                    **self._describe_default(plan),
                }
                for name, plan in self.fields.items()
            },
            "version_field": self.version_field,
            "ttl_field": self.ttl_field,
            # Only when declared, so snapshots of models without constraints are unchanged.
            **({"unique": [c.describe() for c in self.unique]} if self.unique else {}),
            **(
                {"native_indexes": {n: kp.describe() for n, kp in self.native_indexes.items()}}
                if self.native_indexes
                else {}
            ),
        }

    def unique_fields(self) -> frozenset[str]:
        """Every field that takes part in a uniqueness constraint."""
        return frozenset(f for c in self.unique for f in c.fields)

    def _describe_default(self, plan: FieldPlan) -> dict[str, Any]:
        """What an item without the field's attribute reads as (for the migration planner).

        ``{}`` for a required field; ``{"default": None}`` when it reads as ``None`` (or
        an empty set, which is stored the same way: by omitting the attribute); else the
        attribute value the default is stored as, or the factory that makes it.
        """
        if plan.required:
            return {}
        info = self.model.model_fields[plan.name]
        if info.default_factory is not None:
            factory = getattr(info.default_factory, "__qualname__", repr(info.default_factory))
            return {"default": {"factory": factory}}
        try:
            stored = plan.codec.to_av(info.default)
        except (ItemEncodeError, TypeError, ValueError):
            return {"default": {"unencodable": repr(info.default)}}
        return {"default": None if stored is None else {"stored": _jsonable(stored)}}


def _jsonable(value: Any) -> Any:
    """An attribute value as JSON-able data: bytes as hex text, sets as sorted lists."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_jsonable(v) for v in value), key=repr)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"hex": bytes(value).hex()}
    return value


@functools.cache
def _field_adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    info = model.model_fields[name]
    # Annotated[X, *metadata], spelled so that Python 3.10 parses it. The annotation is a
    # runtime value here, which static type forms cannot express: hence Any.
    params = (info.annotation, *info.metadata)
    annotation: Any = Annotated[params] if info.metadata else info.annotation
    # Imported here: pydantic loads its type_adapter module on first use, and the common
    # path (define entities, read and write them) never needs it (issue 24, cold start).
    from pydantic import TypeAdapter

    return TypeAdapter(annotation)


def epoch_seconds(value: Any) -> int:
    """A TTL value (aware or naive-as-UTC datetime, or epoch seconds) as epoch seconds."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return int(value.timestamp())
    return int(value)


# -- the registry of the entities stored in each table ----------------------------------

#: The key of a table's registry in the table's instance dict: the registry lives as long as
#: the table, as if it were an attribute, while `singletable.model.table` (below the plans)
#: knows nothing of `EntityPlan`.
_REGISTRY = "_singletable_entity_plans"


def _registry(table: Table) -> dict[tuple[str, int], EntityPlan]:
    registry: dict[tuple[str, int], EntityPlan] | None = vars(table).get(_REGISTRY)
    if registry is None:
        registry = vars(table)[_REGISTRY] = {}
    return registry


def register_plan(plan: EntityPlan) -> None:
    """Add an entity's compiled plan to its table; refuses a second entity with its identifier.

    Raises:
        ModelDefinitionError: Another class is stored under the same name and version.
    """
    table = plan.table
    ident = (plan.name, plan.version)
    registry = _registry(table)
    existing = registry.get(ident)
    if existing is not None and existing.model is not plan.model:
        raise ModelDefinitionError(
            f"entity identifier {plan.name!r} version {plan.version} is already used on "
            f"table {table.name!r} by {existing.model.__qualname__}; give "
            f"{plan.model.__qualname__} another name=... or version=..."
        )
    registry[ident] = plan


def entity_plans(table: Table) -> list[EntityPlan]:
    """Every entity registered on ``table``, in registration order."""
    return list(_registry(table).values())


def entity_plan(table: Table, name: str, version: int) -> EntityPlan | None:
    """The entity of ``table`` with that stored identifier (``_et``, ``_ev``), or ``None``."""
    return _registry(table).get((name, version))


def item_plan(table: Table, item: Mapping[str, AttributeValue]) -> EntityPlan | None:
    """The entity whose identifier (``_et``, ``_ev``) a stored item carries, or ``None``."""
    name = item.get(table.entity_attribute, {}).get("S")
    version = item.get(table.version_attribute, {}).get("N")
    if name is None or version is None:
        return None
    try:
        return entity_plan(table, name, int(version))
    except ValueError:
        return None


def native_key_types(table: Table, *, unknown_ok: bool = False) -> dict[str, KeyType]:
    """The type of every native GSI part attribute of ``table``.

    A part's declared type, else the type of the fields that store it in the entities
    registered on the table (class creation made them agree). With ``unknown_ok`` a part
    of unknown type is left out instead.

    Raises:
        ModelDefinitionError: A part has no declared type and no registered entity
            stores it.
    """
    stored: dict[str, KeyType] = {}
    for plan in entity_plans(table):
        for field_plan in plan.fields.values():
            key_type = KEY_TYPES.get(field_plan.codec.kind)
            if key_type is not None:
                stored.setdefault(field_plan.attribute, key_type)
    types: dict[str, KeyType] = {}
    for index in table.native_indexes.values():
        for part in index.parts:
            kind = part.type or stored.get(part.attribute)
            if kind is None and unknown_ok:
                continue
            if kind is None:
                raise ModelDefinitionError(
                    f"table {table.name!r}, native GSI {index.name!r}: no entity stores part "
                    f"{part.attribute!r} yet, so its type is unknown; define the entities "
                    f"first, or declare KeyPart({part.attribute!r}, 'S' | 'N' | 'B')"
                )
            types[part.attribute] = kind
    return types


def plan_of(model: type[BaseModel]) -> EntityPlan:
    """The compiled plan of an entity class; `ModelDefinitionError` for an abstract one."""
    plan = getattr(model, "__singletable_plan__", None)
    if not isinstance(plan, EntityPlan):
        raise ModelDefinitionError(
            f"{model.__qualname__} is abstract: declare pk=... (and table=...) on it"
        )
    return plan
