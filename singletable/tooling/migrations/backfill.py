"""Backfilling uniqueness guards: for a constraint added to an entity with stored items.

A scan reads the entity's items and groups them by the guard key of their values. A
value held by one item gets its guard (claimed on condition that it is free or already
held by that item, so a re-run, or a concurrent write through singletable, is harmless).
A value several items share is *reported*, never resolved by picking one: decide which
item keeps it, change the others, and run the backfill again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from singletable.errors import ServiceError
from singletable.expressions.conditions import and_, or_, render_condition
from singletable.expressions.paths import Placeholders
from singletable.io.connection import Connection
from singletable.model.plan import EntityPlan
from singletable.operations.common import key_ref
from singletable.operations.scan import Scan
from singletable.types import Item


@dataclass
class UniqueBackfillReport:
    """What a guard backfill found and did for one constraint."""

    entity: str
    fields: tuple[str, ...]
    scanned: int = 0
    claimed: int = 0
    unguarded: int = 0
    #: Values held by more than one item: the value, and the key fields of every holder.
    duplicates: list[tuple[dict[str, Any], list[dict[str, Any]]]] = field(default_factory=list)

    def to_text(self) -> str:
        """One line, plus one per duplicate value."""
        lines = [
            f"backfill unique {'+'.join(self.fields)} of {self.entity}: {self.scanned} scanned, "
            f"{self.claimed} guards written, {self.unguarded} without a value (None), "
            f"{len(self.duplicates)} duplicate value(s)"
        ]
        for values, holders in self.duplicates:
            lines.append(f"    duplicate {values}: held by {holders}")
        return "\n".join(lines)


def backfill_unique(
    db: Connection, plan: EntityPlan, fields: tuple[str, ...], *, dry_run: bool = False
) -> UniqueBackfillReport:
    """Write the guards of one constraint for the stored items of ``plan``'s entity."""
    constraint = next(c for c in plan.unique if c.fields == tuple(fields))
    report = UniqueBackfillReport(plan.name, constraint.fields)
    holders: dict[str, list[tuple[dict[str, Any], Item]]] = {}
    scan: Scan[Any] = Scan(plan.table, plan).consistent()
    for obj in db.stream(scan.stream_items()):
        report.scanned += 1
        values = constraint.values(obj.__dict__)
        if values is None:
            report.unguarded += 1
            continue
        guard_pk = constraint.guard_key(values)[plan.table.pk]["S"]
        holders.setdefault(guard_pk, []).append((values, plan.key(obj)))
    for group in holders.values():
        values, holder = group[0]
        if len(group) > 1:
            # In key order, whatever order the scan met them in.
            ordered = sorted(group, key=lambda g: sorted((a, str(v)) for a, v in g[1].items()))
            keys = [plan.fields_from_keys(k) for _, k in ordered]
            report.duplicates.append((values, keys))
            continue
        if dry_run:
            report.claimed += 1
            continue
        held = and_(*(key_ref(a) == av for a, av in constraint.holder_attributes(holder).items()))
        ph = Placeholders()
        request: dict[str, Any] = {
            "TableName": plan.table.name,
            "Item": constraint.guard_item(values, holder),
            "ConditionExpression": render_condition(
                or_(key_ref(plan.table.pk).not_exists(), held), ph
            ),
        }
        ph.apply(request)
        try:
            db.call("put_item", request)
        except ServiceError as exc:
            if exc.code != "ConditionalCheckFailedException":
                raise
            # Claimed meanwhile by another item (a write racing the backfill).
            report.duplicates.append((values, [plan.fields_from_keys(holder)]))
            continue
        report.claimed += 1
    return report
