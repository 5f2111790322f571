"""`Entity`: the base class users declare entities with, and its operation constructors.

This is the declarative face of the library. It sits above the operations layer: its
class methods (``Order.query(...)``, ``Order.put(o)``) construct operation values, and its
class hook compiles each subclass once into an `EntityPlan` (`singletable.model`).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Generic, TypeVar, cast

from pydantic import BaseModel, ConfigDict, create_model
from typing_extensions import Self

# Updates, scans and queries are read from the package's lazy names
# (``operations.Update``): their modules load on first use, not with every program that
# defines an entity (issue 24, cold start).
from singletable import operations
from singletable.errors import EntityTypeError, ModelDefinitionError
from singletable.expressions.conditions import Condition
from singletable.model.codegen import GENERAL_TO_ITEM, GENERATED_TO_ITEM
from singletable.model.compile import compile_entity
from singletable.model.fields import FieldRefsDescriptor
from singletable.model.plan import EntityPlan, plan_of, register_plan
from singletable.model.table import Table
from singletable.operations.items import Delete, Get, Put
from singletable.operations.protocol import ReturnCapacity
from singletable.types import AttributeValue, Item

if typing.TYPE_CHECKING:
    from singletable.operations.query import EntityQuery
    from singletable.operations.scan import Scan
    from singletable.operations.update import Update

__all__ = [
    "Entity",
    "EntityInput",
]

E = TypeVar("E", bound=BaseModel)


class EntityInput(BaseModel, Generic[E]):
    """A request model made by `Entity.input_model`: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")
    __entity__: ClassVar[type[Any]]

    def to_entity(self, **values: Any) -> E:
        """The entity with these fields and ``values`` (by field name; e.g. from the URL).

        Validated by the entity, its validators included; the fields the input model
        leaves out take their defaults unless ``values`` gives them.
        """
        fields = self.__entity__.model_fields
        given = {(fields[k].alias if k in fields else None) or k: v for k, v in values.items()}
        entity: E = self.__entity__.model_validate({**self.model_dump(by_alias=True), **given})
        return entity


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
    or epoch-seconds field written to the table's TTL attribute), ``unique`` (fields whose
    values no two items may share: ``unique=("email",)`` is one constraint per field,
    ``unique=[("tenant_id", "email")]`` one over the group; see ``docs/uniqueness.md``).
    A class without ``pk``
    is abstract: it can hold shared fields and the ``table`` for its subclasses.
    """

    __singletable_plan__: ClassVar[EntityPlan | None] = None
    __singletable_table__: ClassVar[Table | None] = None
    __singletable_options__: ClassVar[dict[str, Any]] = {}

    f: ClassVar[FieldRefsDescriptor] = FieldRefsDescriptor()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Checked here, before pydantic collects the fields: a field named like a class
        # attribute (``f``, ``query``, ``put``) would hide it, and pydantic only warns.
        _refuse_shadowing_fields(cls)
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
        _pin_to_item(cls)
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
        cls.__singletable_plan__ = compile_entity(cls, table, options)
        register_plan(cls.__singletable_plan__)

    @classmethod
    def plan(cls) -> EntityPlan:
        """The compiled plan of this entity class."""
        return plan_of(cls)

    def to_item(self) -> Item:
        """This instance as a low-level DynamoDB item (keys, attributes, identifier)."""
        # The first call generates the class's encoder, which then replaces this method on
        # the class itself (`codegen.install_generated_codecs`): this frame and its plan
        # read (through pydantic's attribute hook) cost ~1,000 instructions a call
        # (callgrind; benchmarks/README.md, "Issue 24, encode round 4").
        plan = self.__singletable_plan__
        if plan is None:
            plan_of(type(self))  # raises: abstract
        return plan._item_encoder(self)  # type: ignore[union-attr]

    def key(self) -> Item:
        """This instance's primary key as low-level attribute values."""
        return self.plan().key(self)

    # -- operations ------------------------------------------------------------------
    # Thin constructors of the operation values (singletable.operations, the layer below).
    # Each returns a value with ``.params()`` (the exact request) and ``.run(db)``.

    @classmethod
    def get(
        cls, *, consistent: bool = False, capacity: ReturnCapacity | None = None, **key: Any
    ) -> Get[Self]:
        """Read one item by its primary key fields (``None`` when missing)."""
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
        cls._check_instance(obj)
        return Put(obj, condition=condition, capacity=capacity)

    @classmethod
    def create(cls, obj: Self, *, capacity: ReturnCapacity | None = None) -> Put[Self]:
        """Write ``obj``; `AlreadyExistsError` if an item with its key exists."""
        cls._check_instance(obj)
        return Put(obj, create=True, capacity=capacity)

    @classmethod
    def update(cls, *, capacity: ReturnCapacity | None = None, **key: Any) -> Update[Self]:
        """Change attributes of an existing item (`NotFoundError` if it is missing)."""
        return operations.Update(cls.plan(), key, capacity=capacity)

    @classmethod
    def upsert(cls, *, capacity: ReturnCapacity | None = None, **key: Any) -> Update[Self]:
        """Like `update`, but create the item when it is missing."""
        return operations.Update(cls.plan(), key, upsert=True, capacity=capacity)

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
        plan = cls.plan()
        expected = None
        unique_values = None
        if obj is not None:
            cls._check_instance(obj)
            key = {f: getattr(obj, f) for f in plan.primary.fields}
            if plan.version_field is not None:
                expected = getattr(obj, plan.version_field)
            if plan.unique:
                # The object's values name the guards to release (checked on the item).
                unique_values = {f: getattr(obj, f) for f in plan.unique_fields()}
        return Delete(
            plan,
            key,
            condition=condition,
            return_old=return_old,
            expected_version=expected,
            capacity=capacity,
            unique_values=unique_values,
        )

    @classmethod
    def query(cls, *, index: str | None = None, **values: Any) -> EntityQuery[Self]:
        """Query one partition: partition key fields, then leading sort key fields.

        On a native GSI (`NativeGSI`): every partition part's field, then leading sort
        parts' fields, left to right.
        """
        plan = cls.plan()
        if index is not None and index in plan.table.native_indexes:
            return operations.NativeQuery(plan, values, index)
        return operations.EntityQuery(plan, values, index)

    @classmethod
    def scan(cls, *, index: str | None = None) -> Scan[Self]:
        """Scan the table (or an index) for items of this entity."""
        plan = cls.plan()
        return operations.Scan(plan.table, plan, index)

    @classmethod
    def input_model(
        cls, *, exclude: Iterable[str] = (), keep: Iterable[str] = (), name: str | None = None
    ) -> type[EntityInput[Self]]:
        """A request model of this entity's fields that a client may give.

        Left out: the fields the library writes (``version_field``, ``created_at``,
        ``updated_at``), the ``ttl`` field, and ``exclude`` (e.g. key fields taken from the
        URL); ``keep`` names the ones of the first kind to keep. A body with a field left
        out, or any other unknown field, is refused (pydantic's ``extra="forbid"``: 422 in
        FastAPI), so a client cannot forge ``version`` or ``created_at``.
        `EntityInput.to_entity` makes the entity, the left-out fields at their defaults.

        Raises:
            ModelDefinitionError: An unknown name, or a required field the library writes
                (give `EntityInput.to_entity` the required fields ``exclude`` names).
        """
        plan = cls.plan()
        managed = {plan.version_field, plan.created_at_field, plan.updated_at_field}
        managed.add(plan.ttl_field)
        kept, excluded = set(keep), set(exclude)
        for given, what in ((kept, "keep"), (excluded, "exclude")):
            unknown = sorted(given - set(cls.model_fields))
            if unknown:
                raise ModelDefinitionError(
                    f"{cls.__qualname__}.input_model: {what}= names unknown fields {unknown}"
                )
        left_out = (managed - kept - {None}) | excluded
        fields: dict[str, Any] = {}
        for field_name, info in cls.model_fields.items():
            if field_name not in left_out:
                fields[field_name] = (info.annotation, info)
            elif info.is_required() and field_name not in excluded:
                raise ModelDefinitionError(
                    f"{cls.__qualname__}.input_model: field {field_name!r} is written by "
                    "the library but required, so an entity made from the input would lack "
                    f"it; give it a default, or keep={field_name!r}"
                )
        base = EntityInput[cls]  # type: ignore[valid-type]
        model = cast(
            "type[EntityInput[Self]]",
            create_model(
                name or f"{cls.__name__}Input", __base__=base, __module__=cls.__module__, **fields
            ),
        )
        model.__entity__ = cls
        return model

    @classmethod
    def _check_instance(cls, obj: object) -> None:
        if not isinstance(obj, cls):
            raise EntityTypeError(
                f"{cls.__qualname__}.put/create/delete takes a {cls.__qualname__}, "
                f"got {type(obj).__qualname__}"
            )

    @classmethod
    def from_item(cls, item: Mapping[str, AttributeValue]) -> Self:
        """Decode a low-level item (written for this entity) into an instance."""
        plan = cls.__singletable_plan__
        if plan is None:
            plan_of(cls)  # raises: abstract
        obj = plan._item_decoder(item, True)  # type: ignore[union-attr]
        assert isinstance(obj, cls)
        return obj


setattr(Entity.to_item, GENERAL_TO_ITEM, True)


def _pin_to_item(cls: type[Entity]) -> None:
    """Give ``cls`` the general `Entity.to_item` unless it (or a base) defines its own.

    A concrete class's first `to_item` call installs the generated encoder on that class
    (see `Entity.to_item`): pinned, a subclass never inherits its parent's encoder.
    """
    if "to_item" in cls.__dict__:
        return
    inherited = cls.to_item
    if inherited is Entity.to_item or getattr(inherited, GENERATED_TO_ITEM, False):
        cls.to_item = Entity.to_item  # type: ignore[method-assign]


def _resolve_own_annotations(cls: type[BaseModel]) -> None:
    """Replace ``cls``'s own string annotations (this module defers them) by their values.

    pydantic evaluates the annotations of every class in a model's MRO each time a
    subclass is created: Entity's four ClassVars were four ``eval``s (each a compile) per
    entity defined, 7% of defining the 20-entity model of bench_overheads (callgrind).
    """
    hints = typing.get_type_hints(cls)
    cls.__annotations__ = {name: hints[name] for name in cls.__annotations__}


_resolve_own_annotations(Entity)


def _refuse_shadowing_fields(cls: type[Entity]) -> None:
    """Refuse a field whose name hides an attribute of `Entity` (or pydantic's BaseModel)."""
    for name, annotation in inspect.get_annotations(cls).items():
        if name.startswith("_") or "ClassVar" in str(annotation):
            continue
        # Looked up in the class dictionaries: reading ``Entity.f`` would run its descriptor.
        if any(name in vars(base) for base in Entity.__mro__):
            where = "BaseModel" if any(name in vars(b) for b in BaseModel.__mro__) else "Entity"
            raise ModelDefinitionError(
                f"{cls.__qualname__}.{name}: the field name shadows {where}.{name}, which "
                f"{cls.__qualname__} needs; rename the field"
            )
