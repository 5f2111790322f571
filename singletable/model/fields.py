"""``Entity.f``: typed references to an entity's attributes, built from its plan."""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

from singletable.attributes.codecs import AttributeCodec
from singletable.attributes.convert import to_attribute_value
from singletable.errors import ExpressionError
from singletable.expressions.tree import FieldRef
from singletable.model.plan import EntityPlan, plan_of
from singletable.types import AttributeValue

if typing.TYPE_CHECKING:
    pass


_SCALAR_TYPES = frozenset({"S", "N", "B", "BOOL", "NULL"})


class FieldRefs:
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


class FieldRefsDescriptor:
    """``Entity.f``: field references of the class it is read from."""

    def __get__(self, instance: object, owner: Any) -> FieldRefs:
        return FieldRefs(plan_of(owner))
