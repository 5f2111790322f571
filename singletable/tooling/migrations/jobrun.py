"""A migration's item work as a job of the job engine: worker processes, other machines.

`migrate(..., job=MigrationJob(...))` (the CLI's ``migrate --workers N``) runs the index
steps and the TTL switches as without a job, but hands the item work to the job engine
(`singletable.tooling.jobs`): it starts a ``migrate`` job (`MIGRATE_KIND`'s spec: the
model's import path, the old snapshot's text, the options) whose record and unit leases
live in the migrated table, then works on it with ``workers`` processes (one: this
process, with the runner's executor). Any ``singletable jobs work JOB --table T`` on any
machine joins the same job meanwhile, and a run started again with the same job id
resumes it from the units' fenced checkpoints instead of a local file.

Progress is read from the job (`job_status`: every unit's counts, whoever holds it), so
the bar or the lines show all the workers' work, not this process's alone.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from singletable.errors import MigrationError
from singletable.model.table import Table
from singletable.operations.protocol import Executor
from singletable.tooling.jobs.engine import LEASE_SECONDS, run_job, start_job
from singletable.tooling.jobs.leases import add_counts
from singletable.tooling.jobs.progress import Counts, Progress
from singletable.tooling.jobs.status import JobStatus, job_status
from singletable.tooling.jobs.units import JsonValue, WorkUnit
from singletable.tooling.jobs.workers import ConnectionSettings, run_workers
from singletable.tooling.migrations.snapshot import dumps
from singletable.tooling.migrations.work import MIGRATE_KIND, MigrationWork, progress_figures

__all__ = ["MigrationJob", "migration_spec", "run_as_job"]


@dataclass(frozen=True)
class MigrationJob:
    """How `migrate` runs its item work as a job.

    Attributes:
        job_id: The job's id (None: a new one, printed). Starting the same migration
            again with this id resumes the job (and one that is done is not redone).
        workers: Worker processes here. 1 works in this process with the executor given
            to `migrate` (any executor, moto's in-process mock included); more start
            processes, each with its own connection from ``connection``.
        connection: How worker processes (and workers elsewhere) connect; needed when
            ``workers`` > 1.
        model: The model's import path, ``"pkg.mod:attr"`` or ``"path/to/file.py:attr"``,
            stored in the job's spec so that other processes can rebuild the work;
            needed when ``workers`` > 1 or other machines join.
        transform: The transform's import path, when the migration needs one.
        lease_seconds: How long a unit's lease lasts without renewal.
    """

    job_id: str | None = None
    workers: int = 1
    connection: ConnectionSettings | None = None
    model: str | None = None
    transform: str | None = None
    lease_seconds: float = LEASE_SECONDS


def migration_spec(
    model: str | None,
    snapshot_doc: Mapping[str, Any],
    *,
    transform: str | None = None,
    segments: int = 4,
    page_size: int | None = None,
    max_attempts: int = 25,
) -> dict[str, JsonValue]:
    """The spec of a ``migrate`` job, as ``singletable jobs start --kind migrate`` takes it."""
    spec: dict[str, JsonValue] = {
        "model": model,
        "snapshot": dumps(snapshot_doc),
        "segments": segments,
        "max_attempts": max_attempts,
    }
    if transform is not None:
        spec["transform"] = transform
    if page_size is not None:
        spec["page_size"] = page_size
    return spec


@dataclass(frozen=True)
class _Prebuilt:
    """The ``migrate`` kind over work this process built already (its model loaded)."""

    prebuilt: MigrationWork
    segments: int
    name: str = "migrate"

    def units(self, spec: Mapping[str, JsonValue]) -> list[WorkUnit]:
        return self.prebuilt.units("", self.segments)

    def work(self, spec: Mapping[str, JsonValue], executor: Any) -> MigrationWork:
        return self.prebuilt


def run_as_job(
    db: Executor,
    table: Table,
    work: MigrationWork,
    spec: Mapping[str, JsonValue],
    options: MigrationJob,
    *,
    max_rcu: float | None,
    max_wcu: float | None,
    expected: int | None,
    progress: Callable[[Counts], Progress],
) -> dict[str, dict[str, int]]:
    """Start (or resume) the job, work on it until it is done; every unit's counts by table.

    Raises:
        MigrationError: ``workers`` > 1 without ``connection`` or ``model``, or the job
            ended without being done (cancelled).
        WorkerFailed: A worker process raised or died (the others finished first).
    """
    if options.workers > 1 and (options.connection is None or options.model is None):
        raise MigrationError(
            "worker processes need the model's import path and connection settings: "
            "MigrationJob(model='pkg.mod:table', connection=ConnectionSettings(...))"
        )
    if options.workers < 1:
        raise MigrationError(f"workers must be at least 1, not {options.workers}")
    kind = _Prebuilt(work, int(spec["segments"]))
    job_id = options.job_id or f"migrate-{uuid.uuid4().hex[:10]}"
    record = start_job(
        db, table, kind, spec, job_id=job_id, max_rcu=max_rcu, max_wcu=max_wcu, expected=expected
    )
    follow = _Follow(db, table, job_id, progress)
    follow.progress.out.write(
        f"job {job_id} in table {table.name}: {record.total} unit(s); resume with --job "
        f"{job_id}; add workers anywhere with `singletable jobs work {job_id} --table "
        f"{table.name}`\n"
    )
    with follow:
        if options.workers == 1:
            run_job(
                lambda: db, table, job_id, {kind.name: kind}, lease_seconds=options.lease_seconds
            )
        else:
            assert options.connection is not None
            run_workers(
                options.connection,
                table,
                job_id,
                {MIGRATE_KIND.name: MIGRATE_KIND},
                workers=options.workers,
                lease_seconds=options.lease_seconds,
            )
    status = job_status(db, table, job_id)
    if status.state != "done":
        raise MigrationError(
            f"job {job_id} is {status.state}, not done; the TTL steps were not taken"
        )
    return counts_by_table(status)


def counts_by_table(status: JobStatus) -> dict[str, dict[str, int]]:
    """The units' counts summed per table they scan, refused pages included (`KeepRefused`)."""
    counts: dict[str, dict[str, int]] = {}
    for unit in status.units:
        add_counts(counts.setdefault(str(unit.spec["table"]), {}), unit.totals)
    return counts


class _Follow:
    """Feeds a `Progress` from the job's status while workers run (every worker's counts)."""

    def __init__(
        self, db: Executor, table: Table, job_id: str, progress: Callable[[Counts], Progress]
    ) -> None:
        self.db = db
        self.table = table
        self.job_id = job_id
        self.stop = threading.Event()
        self.seen = progress_figures(job_status(db, table, job_id).counts)
        # Counts of a resumed job were done before this run: in the totals, not the rate.
        self.progress = progress(Counts(**self.seen))
        self.thread = threading.Thread(target=self._run, name="job-progress", daemon=True)

    def __enter__(self) -> _Follow:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self._read()
        self.progress.close()

    def _run(self) -> None:
        while not self.stop.wait(max(self.progress.interval, 0.5)):
            self._read()

    def _read(self) -> None:
        try:
            now = progress_figures(job_status(self.db, self.table, self.job_id).counts)
        except Exception:  # a failed read only skips a line; the workers go on
            return
        self.progress.update(**{k: n - self.seen.get(k, 0) for k, n in now.items()})
        self.seen = now
