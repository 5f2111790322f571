"""Worker processes on this machine joined to one job (``--workers N``).

Each worker is a process started with ``spawn`` (no state copied from the parent, the
same on every platform) that builds its own connection from `ConnectionSettings` and its
own bare `Table` from `TableKeys`, and runs `run_job`. The kinds mapping is pickled to
each process, so its kinds must be importable objects (module-level instances). A worker
that dies (killed, out of memory) leaves its unit's lease to expire; the others take it
over, so the job still finishes while one worker lives.
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from singletable.errors import JobError
from singletable.io.connection import Connection
from singletable.model.table import Table
from singletable.tooling.jobs.engine import LEASE_SECONDS, WorkerReport, run_job
from singletable.tooling.jobs.units import JobKind

__all__ = ["ConnectionSettings", "TableKeys", "WorkerFailed", "run_workers"]


@dataclass(frozen=True)
class ConnectionSettings:
    """How a worker connects: picklable, so a worker process can build its own connection.

    Credentials and the region come from the environment, which worker processes inherit.
    Called, it makes a `Connection` (it is an executor factory for `run_job`).
    """

    endpoint_url: str | None = None
    region_name: str | None = None
    max_attempts: int = 10

    def __call__(self) -> Connection:
        """A new connection with these settings."""
        return Connection(
            endpoint_url=self.endpoint_url,
            region_name=self.region_name,
            max_attempts=self.max_attempts,
        )


@dataclass(frozen=True)
class TableKeys:
    """What the job engine needs of a table (its name and key shape), picklable."""

    name: str
    pk: str = "PK"
    sk: str | None = "SK"
    delimiter: str = "#"
    escape: str = "%"

    @classmethod
    def of(cls, table: Table) -> TableKeys:
        """The key shape of ``table``."""
        return cls(table.name, table.pk, table.sk, table.delimiter, table.escape)

    def table(self) -> Table:
        """A bare `Table` (no entities) with this key shape."""
        return Table(
            self.name, pk=self.pk, sk=self.sk, delimiter=self.delimiter, escape=self.escape
        )


class WorkerFailed(JobError):
    """A worker process ended without a report (killed, or its work raised)."""


def _work(
    settings: ConnectionSettings,
    keys: TableKeys,
    job_id: str,
    kinds: Mapping[str, JobKind],
    options: dict[str, Any],
    results: Any,
) -> None:
    try:
        report: WorkerReport | str = run_job(settings, keys.table(), job_id, kinds, **options)
    except BaseException:
        report = traceback.format_exc()
    results.put(report)


def run_workers(
    settings: ConnectionSettings,
    table: Table,
    job_id: str,
    kinds: Mapping[str, JobKind],
    *,
    workers: int,
    lease_seconds: float = LEASE_SECONDS,
) -> list[WorkerReport]:
    """Run ``workers`` worker processes on a job and wait for them all.

    Returns:
        The report of every worker that ended normally.

    Raises:
        WorkerFailed: Some worker raised (its traceback is in the message) or died; the
            others ran to the end first, so the job is finished unless all failed.
    """
    if workers < 1:
        raise JobError(f"workers must be at least 1, not {workers}")
    context = multiprocessing.get_context("spawn")
    results = context.SimpleQueue()
    keys = TableKeys.of(table)
    options = {"lease_seconds": lease_seconds}
    processes = [
        context.Process(
            target=_work,
            args=(settings, keys, job_id, dict(kinds), options, results),
            name=f"job-worker-{n}",
        )
        for n in range(workers)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    reports: list[WorkerReport] = []
    failures: list[str] = []
    while not results.empty():
        got = results.get()
        if isinstance(got, WorkerReport):
            reports.append(got)
        else:
            failures.append(str(got))
    died = [p.name for p in processes if p.exitcode != 0]
    if failures or died:
        detail = "\n".join(failures) or f"{', '.join(died)} died (exit codes)"
        raise WorkerFailed(f"{len(failures) + len(died)} worker(s) failed:\n{detail}")
    return reports
