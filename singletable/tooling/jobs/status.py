"""A job's progress, aggregated over its units: counts, units done, live workers, rate, ETA.

`job_status` reads a job once (one query) and sums what every unit saved. A rate needs two
readings apart in time: `RateWindow` keeps the readings of the last ``window`` seconds and
gives the rate over them, so it follows the job's current speed rather than its average
since the start, and it gives no ETA until the readings span ``settle`` seconds and the
job has saved ``min_pages`` pages: the first pages of a job (a table's first segments
warming up, one worker started before the others) say little about the rest.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from singletable.model.table import Table
from singletable.operations.protocol import Executor
from singletable.tooling.jobs.engine import read_job
from singletable.tooling.jobs.leases import JobState, UnitState, add_counts
from singletable.tooling.jobs.progress import _duration

__all__ = ["JobStatus", "RateWindow", "job_status"]


@dataclass(frozen=True)
class JobStatus:
    """A job's progress as one read of its record and units saw it.

    Attributes:
        job_id: The job.
        kind: Its kind's name.
        state: ``running``, ``cancelled`` or ``done``.
        total: Its units.
        done: Units finished.
        live: Units held under an unexpired lease.
        workers: Distinct workers holding those leases.
        counts: Everything the units' holders did, summed: each unit's saved pages and the
            pages refused after a lease was lost (`UnitState.totals`).
        pages: Saves taken over all units (pages recorded).
        takeovers: Claims that took a unit from a worker whose lease had expired.
        measure: The count progress is measured in.
        expected: How many of ``measure`` the job expects (None: unknown).
        created: When the job was started (seconds since the epoch).
        read_at: When this status was read (the reader's clock).
        errors: The last error noted on each unit that has one, by index.
        units: The units as read.
        refused: The counts of the refused pages alone, summed (in ``counts`` too):
            ``counts`` minus these is one pass over every unit.
    """

    job_id: str
    kind: str
    state: JobState
    total: int
    done: int
    live: int
    workers: int
    counts: Mapping[str, int]
    pages: int
    takeovers: int
    measure: str
    expected: int | None
    created: float
    read_at: float
    errors: Mapping[int, str] = field(default_factory=dict)
    units: tuple[UnitState, ...] = ()
    refused: Mapping[str, int] = field(default_factory=dict)

    @property
    def measured(self) -> int:
        """The main count so far."""
        return self.counts.get(self.measure, 0)

    def line(self, rate: float | None = None, eta: float | None = None) -> str:
        """One line: state, units, workers, counts, and the rate and ETA when given."""
        counts = ", ".join(f"{name} {n:,}" for name, n in sorted(self.counts.items()))
        parts = [
            f"job {self.job_id} ({self.kind}) {self.state}",
            f"units {self.done}/{self.total} done, {self.live} leased by {self.workers} worker(s)",
            counts or "nothing counted yet",
        ]
        if self.expected:
            parts.append(
                f"{min(100.0, 100 * self.measured / self.expected):.0f}% of ~{self.expected:,}"
            )
        if rate is not None:
            parts.append(f"{rate:,.0f} {self.measure}/s")
        if eta is not None:
            parts.append(f"ETA {_duration(eta)}")
        if self.takeovers:
            parts.append(f"{self.takeovers} takeover(s)")
        return "; ".join(parts)


def job_status(
    db: Executor, table: Table, job_id: str, *, clock: Callable[[], float] = time.time
) -> JobStatus:
    """Read a job's progress (one strongly consistent query of its partition).

    Raises:
        JobError: There is no such job.
    """
    items = read_job(db, table, job_id)
    record = items.record
    assert record is not None
    now = clock()
    counts: dict[str, int] = {}
    refused: dict[str, int] = {}
    for unit in items.units:
        add_counts(counts, unit.totals)
        add_counts(refused, unit.refused)
    live = [unit for unit in items.units if unit.live(now)]
    return JobStatus(
        job_id=job_id,
        kind=record.kind,
        state=record.state,
        total=record.total,
        done=sum(unit.done for unit in items.units),
        live=len(live),
        workers=len({unit.owner for unit in live}),
        counts=counts,
        pages=sum(unit.saves for unit in items.units),
        takeovers=sum(unit.takeovers for unit in items.units),
        measure=record.measure,
        expected=record.expected,
        created=record.created,
        read_at=now,
        errors={unit.index: unit.error for unit in items.units if unit.error},
        units=tuple(items.units),
        refused=refused,
    )


class RateWindow:
    """The rate of a job over its last readings, and an ETA once it has settled.

    Args:
        window: Seconds of readings the rate is taken over.
        settle: Seconds the readings must span before an ETA is given.
        min_pages: Pages the job must have saved before an ETA is given.
    """

    def __init__(self, window: float = 30.0, *, settle: float = 5.0, min_pages: int = 2) -> None:
        self.window = window
        self.settle = settle
        self.min_pages = min_pages
        self._readings: deque[tuple[float, int]] = deque()
        self._pages = 0

    def observe(self, status: JobStatus) -> None:
        """Add a reading (its time is the status's ``read_at``)."""
        self.add(status.read_at, status.measured, status.pages)

    def add(self, at: float, measured: int, pages: int) -> None:
        """Add a reading: at time ``at``, ``measured`` done over ``pages`` saved pages."""
        self._readings.append((at, measured))
        self._pages = pages
        # Keep one reading older than the window, so the rate always spans it.
        while len(self._readings) > 2 and self._readings[1][0] <= at - self.window:
            self._readings.popleft()

    def rate(self) -> float | None:
        """Units of the measure per second over the window; None before two readings."""
        if len(self._readings) < 2:
            return None
        (t0, n0), (t1, n1) = self._readings[0], self._readings[-1]
        if t1 <= t0:
            return None
        return (n1 - n0) / (t1 - t0)

    def eta(self, expected: int | None) -> float | None:
        """Seconds left to reach ``expected``; None until settled, or without a rate."""
        rate = self.rate()
        if expected is None or rate is None or rate <= 0 or self._pages < self.min_pages:
            return None
        if self._readings[-1][0] - self._readings[0][0] < self.settle:
            return None
        return max(0.0, (expected - self._readings[-1][1]) / rate)
