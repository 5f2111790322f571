"""``Entity.f``: typed references to an entity's attributes, built from its plan."""

from __future__ import annotations

import typing
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from singletable.attributes.codecs import AttributeCodec
from singletable.attributes.convert import to_attribute_value
from singletable.errors import ExpressionError, UnknownFieldError
from singletable.expressions.fields import FieldRef
from singletable.model.plan import EntityPlan, FieldPlan, plan_of
from singletable.types import AttributeValue

if typing.TYPE_CHECKING:
    pass


_SCALAR_TYPES = frozenset({"S", "N", "B", "BOOL", "NULL"})

#: The entity class ``Entity.f`` is read from (a pydantic model: entities sit above this layer).
_M = TypeVar("_M", bound=BaseModel)


class FieldRefs(Generic[_M]):
    """``Entity.f``: typed references to an entity's attributes, for conditions and updates.

    Generic in the entity so that a type checker knows which entity ``Order.f`` belongs
    to; the ``singletable.mypy`` plugin reads it to check ``Order.f.<name>`` and give the
    reference its field's type. Without the plugin every name is a ``FieldRef[Any]``.
    """

    def __init__(self, plan: EntityPlan) -> None:
        self._plan = plan

    def __getattr__(self, name: str) -> FieldRef[Any]:
        plan = self._plan.fields.get(name)
        if plan is None:
            raise UnknownFieldError(
                f"{self._plan.model.__qualname__} has no field {name!r} "
                f"(fields: {', '.join(self._plan.fields)})"
            )
        # Elements and sub-paths of a collection (contains("x") on a set, meta["k"] == v)
        # are not values of the whole field: convert them by their runtime type.
        elements = None if plan.codec.kind in _SCALAR_TYPES else to_attribute_value
        ref: FieldRef[Any] = FieldRef(
            (plan.attribute,),
            _null_aware(plan.codec),
            element_to_av=elements,
            label=f"{self._plan.name}.{name}",
            absent=_absent_reads(self._plan, plan),
        )
        # A reference is an immutable value: built once per field (about 8 µs: the path
        # checked, the default encoded), then found here without __getattr__.
        self.__dict__[name] = ref
        return ref


def _absent_reads(entity: EntityPlan, plan: FieldPlan) -> AttributeValue | None:
    """What a read returns for the field when its attribute is missing, in stored form.

    ``None`` where that is not known: a required field (the item does not decode), a
    field of the table key (read back from the key), a default factory (its value is
    made when it runs). An index key field reads its default too: the library keeps the
    index key in step with what the item reads.
    """
    if plan.name in entity.primary.fields:
        return None
    info = entity.model.model_fields[plan.name]
    if plan.is_set:
        # DynamoDB stores no empty set: absence reads back None, or the empty set.
        return {"NULL": True} if plan.nullable else {plan.codec.params()["of"]: []}
    if info.is_required():
        return {"NULL": True} if plan.nullable else None
    if info.default_factory is not None:
        return None
    if info.default is None:
        return {"NULL": True}
    return plan.codec.to_av(info.default)


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


#: Each entity class's references, with the plan they were built from.
_REFS: weakref.WeakKeyDictionary[type[BaseModel], FieldRefs[Any]] = weakref.WeakKeyDictionary()


def field_refs(plan: EntityPlan) -> FieldRefs[Any]:
    """The references of ``plan``'s fields (``Entity.f``), built once per plan and shared.

    Keyed by the entity class, so that a class that is gone takes its references with it;
    another plan of the same class (a derived one, a redefinition) replaces them.
    """
    refs = _REFS.get(plan.model)
    if refs is None or refs._plan is not plan:
        refs = _REFS[plan.model] = FieldRefs(plan)
    return refs


class FieldRefsDescriptor:
    """``Entity.f``: field references of the class it is read from."""

    def __get__(self, instance: object, owner: type[_M]) -> FieldRefs[_M]:
        return field_refs(plan_of(owner))
