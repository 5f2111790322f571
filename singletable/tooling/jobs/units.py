"""The contract between the job engine and the kinds of job it runs.

A job (a migration, a backfill, a load, an export) is split into `WorkUnit` values (scan
segments of a table, chunks of an input file). A `JobKind` plans the units from the job's
spec and builds the `UnitWork` that runs one of them. The work reports to a `UnitContext`:
it reads where the unit's last holder stopped (`checkpoint`), records each page (`save`),
the end (`finish`), and the capacity it is about to use (`spend`). The engine supplies the
context: `singletable.tooling.jobs.local.LocalContext` in one process, a lease-backed one
(`singletable.tooling.jobs.engine`) when workers on many machines share a job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from singletable.errors import SingleTableError

JsonValue = Any
"""A JSON-able value: str, int, float, bool, None, and lists and dicts of those."""


@dataclass(frozen=True)
class WorkUnit:
    """One unit of a job: a scan segment of a table, or a chunk of an input file.

    Attributes:
        job_id: The job the unit belongs to.
        kind: The job kind that knows how to run it: ``"migrate"``, ``"load"``, ...
        index: The unit's position, ``0 .. total - 1``.
        total: How many units the job has.
        spec: What the unit covers, e.g. ``{"table": "app", "segment": 3, "segments": 8}``.
    """

    job_id: str
    kind: str
    index: int
    total: int
    spec: Mapping[str, JsonValue] = field(default_factory=dict)


class LeaseLost(SingleTableError):
    """The unit's lease was taken over (its fencing counter moved): stop, write nothing more."""


class JobCancelled(SingleTableError):
    """The job was cancelled: stop at the next page."""


class UnitContext(Protocol):
    """What a unit's work reports to: its checkpoint, its progress, the capacity it uses."""

    @property
    def checkpoint(self) -> Mapping[str, JsonValue] | None:
        """What the unit's last holder saved (e.g. ``{"last_key": {...}}``); None at the start."""
        ...

    def save(self, checkpoint: Mapping[str, JsonValue] | None, counts: Mapping[str, int]) -> None:
        """Record progress after a page: the new checkpoint and the counts of that page.

        The counts are deltas, e.g. ``{"scanned": 100, "written": 37, "skipped": 63}``.
        Conditional on still holding the lease (fencing counter): raises `LeaseLost`
        otherwise (the page's counts are then kept apart as refused: its writes landed),
        and `JobCancelled` when the job was cancelled.
        """
        ...

    def finish(self, counts: Mapping[str, int]) -> None:
        """The unit is done (its last page's counts); conditional on the lease like `save`."""
        ...

    def spend(self, *, rcu: float = 0.0, wcu: float = 0.0) -> None:
        """Account for capacity about to be used.

        Blocks as long as needed to keep the whole job under its ``--max-rcu``/``--max-wcu``
        (the budget is split across the live workers).
        """
        ...


UnitWork = Callable[[WorkUnit, UnitContext], None]
"""Runs one unit from ``ctx.checkpoint`` to its end.

It reads a page, writes (every data write conditional, so a page repeated after a takeover
changes nothing), calls ``ctx.spend`` before sending, ``ctx.save`` after each page and
``ctx.finish`` at the end.
"""


class JobKind(Protocol):
    """How a kind of job is planned and run; registered by name.

    The spec is the job's own JSON (a model import path ``"pkg.mod"`` or ``"pkg.mod:attr"``,
    snapshot text, options...), stored in the job record, so that a worker on another
    machine, given only the job id and a connection, can rebuild the work.
    """

    @property
    def name(self) -> str:
        """The kind's registered name (``"load"``, ``"export"``, ``"migrate"``, ...)."""
        ...

    def units(self, spec: Mapping[str, JsonValue]) -> list[WorkUnit]:
        """The units of a job with this spec (their ``job_id`` is filled in by the engine)."""
        ...

    def work(self, spec: Mapping[str, JsonValue], executor: Any) -> UnitWork:
        """The work that runs one unit of a job with this spec through ``executor``."""
        ...
