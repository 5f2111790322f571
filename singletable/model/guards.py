"""Reading a guard item back: the entity, fields, values and holder it names.

Apart from `singletable.model.unique` (the guard key shape, which the entity plans hold):
decoding the values takes the constraints of the entities registered on the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from singletable.errors import KeyDecodeError
from singletable.model.plan import entity_plans
from singletable.model.table import Table
from singletable.model.unique import GUARD_HOLDER_PK, GUARD_HOLDER_SK, guard_prefix, is_guard_item
from singletable.types import AttributeValue, Item


@dataclass(frozen=True)
class GuardInfo:
    """What a guard item (or just its key) says about the value it guards.

    Attributes:
        entity: The stored name of the entity the constraint belongs to.
        fields: The constrained fields.
        values: The guarded values, decoded; raw segment texts when no registered entity
            declares the constraint any more.
        holder: The primary key of the item holding the value (``None`` for a bare key).
    """

    entity: str
    fields: tuple[str, ...]
    values: dict[str, Any]
    holder: Item | None


def read_guard(table: Table, item: Mapping[str, AttributeValue]) -> GuardInfo:
    """Decode a guard item (or a guard key) of ``table``.

    Raises:
        KeyDecodeError: ``item`` is not a guard of this table, or its key is malformed.
    """
    if not is_guard_item(table, item):
        raise KeyDecodeError(f"item {dict(item)!r} is not a uniqueness guard of {table.name!r}")
    pk = item[table.pk]["S"]
    parts = pk[len(guard_prefix(table)) :].split(table.delimiter)
    if len(parts) < 3 or len(parts) % 2 == 0:
        raise KeyDecodeError(f"malformed uniqueness guard key {pk!r}")
    entity = table.escaper.unescape(parts[0])
    fields = tuple(parts[1::2])
    holder: Item | None = None
    if GUARD_HOLDER_PK in item:
        holder = {table.pk: dict(item[GUARD_HOLDER_PK])}
        if table.sk is not None and GUARD_HOLDER_SK in item:
            holder[table.sk] = dict(item[GUARD_HOLDER_SK])
    for plan in entity_plans(table):
        if plan.name != entity:
            continue
        for constraint in plan.unique:
            if constraint.fields == fields:
                return GuardInfo(entity, fields, constraint.parse_values(pk), holder)
    raw = [table.escaper.unescape(p) for p in parts[2::2]]
    return GuardInfo(entity, fields, dict(zip(fields, raw, strict=False)), holder)
