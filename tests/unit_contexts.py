"""Unit contexts for tests of job units: a lease lost at a chosen save, spending recorded."""

from __future__ import annotations

from collections.abc import Mapping

from singletable.tooling.jobs.local import LocalContext
from singletable.tooling.jobs.units import JsonValue, LeaseLost


class TakenOver(LocalContext):
    """A unit's context whose lease is lost at its ``lost_at``-th save (0-based)."""

    def __init__(
        self, checkpoint: Mapping[str, JsonValue] | None = None, *, lost_at: int | None = None
    ) -> None:
        super().__init__(checkpoint)
        self.lost_at = lost_at
        self.saves = 0
        self.spent: list[tuple[float, float]] = []

    def save(self, checkpoint: Mapping[str, JsonValue] | None, counts: Mapping[str, int]) -> None:
        if self.saves == self.lost_at:
            raise LeaseLost("taken over")
        self.saves += 1
        super().save(checkpoint, counts)

    def spend(self, *, rcu: float = 0.0, wcu: float = 0.0) -> None:
        self.spent.append((rcu, wcu))
