"""Expressions: conditions, filters, update actions and projections as immutable trees.

Build them from typed field references (``Order.f.status == "paid"``,
``Order.f.stock.increment(1)``); they render into DynamoDB expression strings with every
name and value behind a placeholder. Pure: no I/O, no knowledge of entities.
"""

from singletable.expressions.conditions import (
    Condition,
    and_,
    condition_paths,
    not_,
    or_,
    render_condition,
)
from singletable.expressions.fields import AttributeTypeName, FieldRef, SizeOperand
from singletable.expressions.paths import Path, Placeholders, ValueConverter
from singletable.expressions.projections import render_projection
from singletable.expressions.updates import (
    SetValue,
    UpdateAction,
    plain_set_value,
    render_update,
    update_paths,
)

__all__ = [
    "AttributeTypeName",
    "Condition",
    "FieldRef",
    "Path",
    "Placeholders",
    "SetValue",
    "SizeOperand",
    "UpdateAction",
    "ValueConverter",
    "and_",
    "condition_paths",
    "not_",
    "or_",
    "render_condition",
    "render_projection",
    "render_update",
    "plain_set_value",
    "update_paths",
]
