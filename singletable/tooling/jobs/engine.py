"""Jobs shared by any number of workers: start, work, cancel, through the job's own table.

`start_job` writes a job's units and then its record (see `leases` for the items); from
then on any process that can reach the table and knows the job id joins it with `run_job`:
it claims a free or expired unit, rebuilds the unit's work from the job's spec through the
kind registry it is given, runs it with a lease-backed `UnitContext` (`LeaseContext`)
while a heartbeat thread renews the lease, and goes on until no unit is left. A worker
that dies leaves its lease to expire, and another takes the unit over from its last
checkpoint; a worker that wakes up after losing its lease finds its writes refused
(`LeaseLost`), and keeps the counts of the page it could not save apart (`KeepRefused`).

The job's rate limit (``max_rcu``/``max_wcu`` in the record) is split evenly across the
live workers (those holding an unexpired lease), re-read at every heartbeat; each worker
paces its own requests with a `TokenBucket` at its share.
"""

from __future__ import annotations

import json
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from singletable.errors import JobError, SingleTableError
from singletable.io.work_spans import unit_span
from singletable.model.table import Table
from singletable.operations.protocol import Executor
from singletable.tooling.jobs.leases import (
    ClaimUnit,
    JobItems,
    JobRecord,
    KeepRefused,
    Lease,
    PutJob,
    PutUnit,
    ReadJob,
    ReleaseUnit,
    RenewLease,
    SaveUnit,
    SetJobState,
    UnitState,
    add_counts,
)
from singletable.tooling.jobs.local import TokenBucket
from singletable.tooling.jobs.units import (
    JobCancelled,
    JobKind,
    JsonValue,
    LeaseLost,
    UnitWork,
    WorkUnit,
)

__all__ = [
    "JobError",
    "LeaseContext",
    "WorkerReport",
    "cancel_job",
    "new_worker_id",
    "read_job",
    "run_job",
    "start_job",
]

#: The default lease: long enough to ride out a slow request or a GC pause, short enough
#: that a dead worker's unit is taken over within half a minute.
LEASE_SECONDS = 30.0


def new_worker_id() -> str:
    """A worker id unique across machines: host, process and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def read_job(db: Executor, table: Table, job_id: str) -> JobItems:
    """A job's record and units; `JobError` when there is no such job."""
    items = ReadJob(table, job_id).run(db)
    if items.record is None:
        raise JobError(f"no job {job_id!r} in table {table.name!r}")
    return items


def start_job(
    db: Executor,
    table: Table,
    kind: JobKind,
    spec: Mapping[str, JsonValue],
    *,
    job_id: str | None = None,
    max_rcu: float | None = None,
    max_wcu: float | None = None,
    expected: int | None = None,
    measure: str = "scanned",
    clock: Callable[[], float] = time.time,
) -> JobRecord:
    """Write a job's units and record into ``table``; idempotent for a given ``job_id``.

    The units go first and the record last, so a record always has all its units: a
    start that dies half-way is finished by starting again. Starting a job that exists
    with the same kind and spec returns its record (units already there keep their
    progress).

    Args:
        db: The executor.
        table: The table the job works on and keeps its items in.
        kind: What plans the units (and later runs them, in the workers).
        spec: The job's JSON; workers rebuild the work from it.
        job_id: The job's id (default: a new random one).
        max_rcu: Read capacity per second for the whole job (None: unlimited).
        max_wcu: Write capacity per second for the whole job (None: unlimited).
        expected: How many of ``measure`` the job expects (for the ETA; None: unknown).
        measure: The count progress is measured in.
        clock: The wall clock (seconds since the epoch).

    Raises:
        JobError: A job with this id exists with another kind or spec, or the kind
            planned no unit.
    """
    job_id = job_id or uuid.uuid4().hex[:12]
    existing = ReadJob(table, job_id).run(db).record
    if existing is None:
        units = kind.units(spec)
        if not units:
            raise JobError(f"job {job_id!r}: kind {kind.name!r} planned no unit for this spec")
        for index, unit in enumerate(units):
            PutUnit(table, replace(unit, job_id=job_id, index=index, total=len(units))).run(db)
        record = JobRecord(
            job_id,
            kind.name,
            dict(spec),
            total=len(units),
            created=clock(),
            max_rcu=max_rcu,
            max_wcu=max_wcu,
            expected=expected,
            measure=measure,
        )
        if PutJob(table, record).run(db):
            return record
        existing = read_job(db, table, job_id).record
        assert existing is not None
    if existing.kind != kind.name or dict(existing.spec) != _json_round_trip(spec):
        raise JobError(
            f"job {job_id!r} exists in table {table.name!r} as a {existing.kind!r} job with "
            "another spec; choose another job id"
        )
    return existing


def _json_round_trip(spec: Mapping[str, JsonValue]) -> Any:
    # The stored spec is JSON: compare like with like (tuples are lists there, ...).
    return json.loads(json.dumps(spec))


def cancel_job(db: Executor, table: Table, job_id: str) -> bool:
    """Cancel a running job: workers stop at their next page. False if it was not running."""
    read_job(db, table, job_id)
    return SetJobState(table, job_id, "cancelled", expect="running").run(db)


class LeaseContext:
    """The `UnitContext` of a unit held under a lease.

    Every `save` and `finish` is conditional on the lease (see `SaveUnit`). A refused one
    (or one made once the heartbeat found the lease lost, which is not sent) keeps the
    page's counts as refused (`KeepRefused`: the page's writes landed) and raises
    `LeaseLost`; after that `spend` raises `LeaseLost` too. A lease the heartbeat found
    lost does not stop the page in progress: it runs to its save, so that what it wrote is
    counted (stopping it at its next `spend` dropped the counts of the items it had
    written; its writes are conditional, so finishing the page changes nothing the new
    holder does not, and costs at most one page of requests). The heartbeat of `run_job`
    calls `renew` and `cancel`.
    """

    def __init__(
        self,
        db: Executor,
        table: Table,
        lease: Lease,
        *,
        lease_seconds: float,
        rcu: TokenBucket | None = None,
        wcu: TokenBucket | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self._table = table
        self._lease = lease
        self._lease_seconds = lease_seconds
        self._rcu = rcu
        self._wcu = wcu
        self._clock = clock
        self._lock = threading.Lock()
        self._lost = threading.Event()
        self._cancelled = threading.Event()
        #: What this holder did: the counts of its saved pages and of its refused ones.
        self.counts: dict[str, int] = {}
        #: The counts of its pages refused after it lost the lease (in `counts` too).
        self.refused: dict[str, int] = {}
        #: Whether this holder finished the unit.
        self.done = False
        #: Whether a `save` or `finish` was refused (the work must stop).
        self.stopped = False

    @property
    def lease(self) -> Lease:
        """The lease as of the last save."""
        return self._lease

    @property
    def lost(self) -> bool:
        """Whether the lease is known to be lost."""
        return self._lost.is_set()

    @property
    def checkpoint(self) -> Mapping[str, JsonValue] | None:
        """Where the unit stands: the claim's checkpoint, then each save's."""
        return self._lease.checkpoint

    def save(self, checkpoint: Mapping[str, JsonValue] | None, counts: Mapping[str, int]) -> None:
        """Record a page under the lease; `LeaseLost` or `JobCancelled` to stop."""
        self._write(checkpoint, counts, done=False)
        if self._cancelled.is_set():
            raise JobCancelled(f"job {self._lease.job_id!r} was cancelled")

    def finish(self, counts: Mapping[str, int]) -> None:
        """Record the unit's end under the lease; `LeaseLost` if it was taken over."""
        self._write(None, counts, done=True)
        self.done = True

    def spend(self, *, rcu: float = 0.0, wcu: float = 0.0) -> None:
        """Wait for this worker's share of the job's capacity; `LeaseLost` once refused."""
        if self.stopped:
            raise self._lost_error()
        if self._rcu is not None:
            self._rcu.take(rcu)
        if self._wcu is not None:
            self._wcu.take(wcu)

    def renew(self) -> bool:
        """Extend the lease (the heartbeat); False, and the context lost, when it was lost."""
        if self.lost or self.done:
            return not self.lost
        op = RenewLease(
            self._table, self._lease, now=self._clock(), lease_seconds=self._lease_seconds
        )
        if not op.run(self._db):
            self._lost.set()
            return False
        return True

    def cancel(self) -> None:
        """The job was cancelled: the next `save` raises `JobCancelled`."""
        self._cancelled.set()

    def release(self, error: str) -> bool:
        """Give the unit back at once (its work failed), noting ``error`` on it."""
        return ReleaseUnit(self._table, self._lease, error).run(self._db)

    def _lost_error(self) -> LeaseLost:
        return LeaseLost(
            f"job {self._lease.job_id!r}: unit {self._lease.index} was taken over by another worker"
        )

    def _write(
        self, checkpoint: Mapping[str, JsonValue] | None, counts: Mapping[str, int], *, done: bool
    ) -> None:
        with self._lock:
            try:
                if self.lost:
                    raise self._lost_error()
                self._lease = SaveUnit(
                    self._table,
                    self._lease,
                    checkpoint,
                    counts,
                    now=self._clock(),
                    lease_seconds=self._lease_seconds,
                    done=done,
                ).run(self._db)
            except LeaseLost:
                self._lost.set()
                self.stopped = True
                add_counts(self.refused, counts)
                if self.refused:
                    KeepRefused(self._table, self._lease, self.refused).run(self._db)
                add_counts(self.counts, counts)
                raise
        add_counts(self.counts, counts)


@dataclass
class WorkerReport:
    """What one worker did in a job.

    Attributes:
        worker_id: The worker.
        finished: The units it finished.
        lost: The units it lost to another worker (their leases expired under it).
        counts: What it did, summed: its saved pages and those refused once it had lost
            a lease (kept on the unit as refused, see `KeepRefused`).
        cancelled: Whether it stopped because the job was cancelled.
    """

    worker_id: str
    finished: list[int] = field(default_factory=list)
    lost: list[int] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    cancelled: bool = False


class _Heartbeat:
    """Renews the held lease, follows the job's state and splits its rate limit.

    Every third of a lease it renews the current context's lease and reads the job once
    (one query): a cancelled job cancels the context; the number of workers holding live
    leases sets this worker's share of the job's budget.
    """

    def __init__(
        self,
        db: Executor,
        table: Table,
        record: JobRecord,
        *,
        worker_id: str,
        interval: float,
        clock: Callable[[], float],
    ) -> None:
        self._db = db
        self._worker_id = worker_id
        self._table = table
        self._job_id = record.job_id
        self._budget = (record.max_rcu, record.max_wcu)
        self.rcu = TokenBucket(record.max_rcu, full=False) if record.max_rcu else None
        self.wcu = TokenBucket(record.max_wcu, full=False) if record.max_wcu else None
        self._interval = interval
        self._clock = clock
        self._context: LeaseContext | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lease-heartbeat", daemon=True)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def hold(self, context: LeaseContext | None) -> None:
        with self._lock:
            self._context = context

    def share(self, items: JobItems) -> None:
        """Set this worker's share of the budget from the live workers in ``items``.

        This worker counts itself in, whether or not it holds a lease yet.
        """
        now = self._clock()
        live = len({u.owner for u in items.units if u.live(now)} | {self._worker_id})
        for bucket, budget in zip((self.rcu, self.wcu), self._budget, strict=True):
            if bucket is not None and budget:
                bucket.set_rate(budget / live)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            with self._lock:
                context = self._context
            try:
                if context is not None:
                    context.renew()
                items = ReadJob(self._table, self._job_id).run(self._db)
            except SingleTableError:
                # A failed renew is retried at the next beat; the lease has two more
                # beats before it expires, and the saves are fenced in any case.
                continue
            if items.record is not None and items.record.state == "cancelled" and context:
                context.cancel()
            self.share(items)


def run_job(
    executor_factory: Callable[[], Executor],
    table: Table,
    job_id: str,
    kinds: Mapping[str, JobKind],
    *,
    worker_id: str | None = None,
    lease_seconds: float = LEASE_SECONDS,
    wait: bool = True,
    only: Collection[int] | None = None,
    poll_seconds: float | None = None,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> WorkerReport:
    """Work on a job until no unit is left (or it is cancelled).

    Claims a free or expired unit, runs it, and claims the next. When every remaining unit
    is held by another worker it waits (``wait``) and takes over any whose lease expires,
    so a job always finishes while one worker is left; the last worker marks it done.

    Args:
        executor_factory: Makes an executor (called twice: the work's, the heartbeat's).
        table: The job's table.
        job_id: The job.
        kinds: The job kinds this worker can run, by name.
        worker_id: This worker's id (default: host, process and a random part).
        lease_seconds: How long a lease lasts without renewal; renewed every third.
        wait: Stay while other workers hold the last units (to take over a dead one's).
        only: Work on these units only (a Spark task runs one unit); default: all.
        poll_seconds: How often to look again while waiting for others' units to end or
            expire (default: a second, or a third of a lease if shorter).
        clock: The wall clock that lease expiries are written in.
        sleep: How to wait.

    Raises:
        JobError: No such job, or a kind this worker does not know.
        Exception: What the unit's work raised (its unit is released at once, with the
            error noted, for another worker to retry).
    """
    worker_id = worker_id or new_worker_id()
    db = executor_factory()
    items = read_job(db, table, job_id)
    record = items.record
    assert record is not None
    work = _kind_of(kinds, record).work(record.spec, db)
    report = WorkerReport(worker_id)
    beat = lease_seconds / 3
    heartbeat = _Heartbeat(
        executor_factory(), table, record, worker_id=worker_id, interval=beat, clock=clock
    )
    worker = _Worker(db, table, record, work, heartbeat, report, lease_seconds, clock)
    with heartbeat:
        while True:
            if items.record is None or items.record.state == "cancelled":
                report.cancelled = True
                break
            now = clock()
            mine = [u for u in items.units if only is None or u.index in only]
            free = [unit for unit in mine if unit.claimable(now)]
            if not free:
                if _finished(db, table, job_id, items, mine) or not wait:
                    break
                sleep(_until_next_expiry(mine, now, poll_seconds or min(beat, 1.0)))
                items = ReadJob(table, job_id).run(db)
                continue
            heartbeat.share(items)
            # A random pick spreads workers that start together over different units.
            if worker.claim_and_run(random.choice(free), now):
                report.cancelled = True
                break
            items = ReadJob(table, job_id).run(db)
    return report


@dataclass
class _Worker:
    """What claiming and running one unit of a job takes, for one worker."""

    db: Executor
    table: Table
    record: JobRecord
    work: UnitWork
    heartbeat: _Heartbeat
    report: WorkerReport
    lease_seconds: float
    clock: Callable[[], float]

    def claim_and_run(self, seen: UnitState, now: float) -> bool:
        """Claim the unit ``seen`` and run it if the claim holds (another worker may win it).

        Returns:
            Whether the job was cancelled while the unit ran.
        """
        record = self.record
        lease = ClaimUnit(
            self.table,
            record.job_id,
            seen,
            owner=self.report.worker_id,
            now=now,
            lease_seconds=self.lease_seconds,
        ).run(self.db)
        if lease is None:
            return False
        unit = WorkUnit(record.job_id, record.kind, seen.index, record.total, seen.spec)
        context = LeaseContext(
            self.db,
            self.table,
            lease,
            lease_seconds=self.lease_seconds,
            rcu=self.heartbeat.rcu,
            wcu=self.heartbeat.wcu,
            clock=self.clock,
        )
        # The heartbeat renews the lease while the unit runs; the unit's counts go to the
        # report however it ends.
        self.heartbeat.hold(context)
        try:
            _run_unit(self.work, unit, context, self.report)
        except JobCancelled:
            return True
        finally:
            self.heartbeat.hold(None)
            add_counts(self.report.counts, context.counts)
        return False


def _kind_of(kinds: Mapping[str, JobKind], record: JobRecord) -> JobKind:
    """The job kind of ``record`` among those this worker can run."""
    kind = kinds.get(record.kind)
    if kind is None:
        raise JobError(
            f"job {record.job_id!r} is a {record.kind!r} job, which this worker cannot run "
            f"(it knows {', '.join(sorted(kinds)) or 'no kind'})"
        )
    return kind


def _finished(
    db: Executor, table: Table, job_id: str, items: JobItems, mine: Sequence[UnitState]
) -> bool:
    """Whether nothing is left for this worker; the job is marked done when every unit is."""
    if all(unit.done for unit in items.units):
        SetJobState(table, job_id, "done", expect="running").run(db)
        return True
    return all(unit.done for unit in mine)


def _run_unit(
    work: UnitWork,
    unit: WorkUnit,
    context: LeaseContext,
    report: WorkerReport,
) -> None:
    try:
        with unit_span(unit.kind, unit.job_id, unit.index, unit.total, unit.spec):
            work(unit, context)
        if not context.done:
            # The work returned without finishing (nothing left after its last save).
            context.finish({})
    except LeaseLost:
        report.lost.append(unit.index)
        return
    except JobCancelled:
        raise
    except BaseException as exc:
        context.release(f"{type(exc).__name__}: {exc}")
        raise
    report.finished.append(unit.index)


def _until_next_expiry(units: list[UnitState], now: float, poll: float) -> float:
    """How long to wait before looking again: until the next lease expires, at most ``poll``."""
    expiries = [unit.expires - now for unit in units if unit.live(now)]
    soonest = min(expiries, default=poll) + 0.05
    return max(0.05, min(poll, soonest))
