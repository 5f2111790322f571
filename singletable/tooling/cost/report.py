"""What a capacity estimate reports: one `CapacityLine` per item, index entry or page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["CapacityEstimate", "CapacityLine", "Kind"]

Kind = Literal["read", "write"]


@dataclass(frozen=True)
class CapacityLine:
    """One item's (or one index entry's) share of an operation's capacity.

    Attributes:
        kind: ``"read"`` (RCU) or ``"write"`` (WCU).
        units: The capacity units.
        table: The table name.
        index: The index name, or ``None`` for the table itself.
        item: The item's position in a batch or transaction (0 for single-item ops, the
            page number for queries and scans).
        what: A short description, e.g. ``"put (1,025 B)"`` or ``"index GSI1: move"``.
        size: The bytes billed (after taking the larger of before and after).
    """

    kind: Kind
    units: float
    table: str
    index: str | None
    item: int
    what: str
    size: int


@dataclass(frozen=True)
class CapacityEstimate:
    """The capacity an operation consumes, line by line."""

    lines: tuple[CapacityLine, ...] = ()

    @property
    def rcu(self) -> float:
        """Read capacity units in all."""
        return sum(line.units for line in self.lines if line.kind == "read")

    @property
    def wcu(self) -> float:
        """Write capacity units in all."""
        return sum(line.units for line in self.lines if line.kind == "write")

    @property
    def total(self) -> float:
        """Every unit, as DynamoDB's ``ConsumedCapacity.CapacityUnits`` sums them."""
        return sum(line.units for line in self.lines)

    @property
    def table_units(self) -> float:
        """Units consumed on the table itself (``ConsumedCapacity.Table``)."""
        return sum(line.units for line in self.lines if line.index is None)

    @property
    def index_units(self) -> dict[str, float]:
        """Units per index (``ConsumedCapacity.GlobalSecondaryIndexes`` / ``Local...``)."""
        result: dict[str, float] = {}
        for line in self.lines:
            if line.index is not None:
                result[line.index] = result.get(line.index, 0.0) + line.units
        return result

    def __add__(self, other: CapacityEstimate) -> CapacityEstimate:
        return CapacityEstimate(self.lines + other.lines)

    def explain(self) -> dict[str, Any]:
        """The estimate as plain data: totals, per index, and one entry per line."""
        return {
            "rcu": self.rcu,
            "wcu": self.wcu,
            "table": self.table_units,
            "indexes": self.index_units,
            "breakdown": [
                {
                    "kind": line.kind,
                    "units": line.units,
                    "table": line.table,
                    "index": line.index,
                    "item": line.item,
                    "what": line.what,
                    "bytes": line.size,
                }
                for line in self.lines
            ],
        }
