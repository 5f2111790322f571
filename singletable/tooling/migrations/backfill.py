"""Backfilling uniqueness guards: for a constraint added to an entity with stored items.

The migration's scan (`singletable.tooling.migrations.work`) routes each stored item of
the entity to its rewrite, which claims the item's guard in a transaction with a check
that the item is unchanged (`singletable.tooling.migrations.rewrite_item`). A guard the item
already holds (a re-run) is counted as in place, not written again. A value another item
already holds is a *duplicate*: the first holder keeps the guard (so no further item can
take the value), the others are listed, and the run fails (a non-zero exit) until a person
decides which item keeps the value, changes the others, and runs the migration again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class UniqueBackfillReport:
    """What a guard backfill found and did (or, in a dry run, would do) for one constraint.

    ``write_units`` is the estimate of the guard claims (transactional puts, 2 WCU per
    1 KB), from the capacity estimator.
    """

    entity: str
    fields: tuple[str, ...]
    dry_run: bool = False
    scanned: int = 0
    claimed: int = 0
    present: int = 0
    unguarded: int = 0
    write_units: float = 0.0
    #: Values held by more than one item: the value, and the key fields of every holder.
    duplicates: list[tuple[dict[str, Any], list[dict[str, Any]]]] = field(default_factory=list)
    #: Items left unguarded because another item holds their value.
    failed: int = 0

    def to_text(self) -> str:
        """One line, one for the estimate, plus one per duplicate value."""
        claimed = (
            f"would claim {self.claimed} guard(s)"
            if self.dry_run
            else f"claimed {self.claimed} guard(s)"
        )
        lines = [
            f"backfill unique {'+'.join(self.fields)} of {self.entity}: {self.scanned} scanned, "
            f"{claimed}, {self.present} already in place, {self.unguarded} without a value "
            f"(None), {len(self.duplicates)} duplicate value(s)",
            f"    estimate: {self.write_units:g} WCU for the guard claims (transactional puts)",
        ]
        for values, holders in self.duplicates:
            lines.append(f"    duplicate {values}: held by {holders}")
        return "\n".join(lines)
