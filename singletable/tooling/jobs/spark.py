"""A job's units as Spark tasks, so a job runs unchanged on AWS Glue, EMR or any cluster.

`run_on_spark` makes one Spark task per unit. Each task runs the same claim, lease and
work loop as any worker (`run_job` limited to its unit), with a connection of its own
built from `ConnectionSettings`: a task that Spark retries or runs twice (speculation, a
lost executor) is fenced like a worker that lost its lease: the second attempt waits for
the first one's lease to expire and takes the unit over from its last checkpoint, and the
first one's saves are refused from then on. The job's rate limit holds across the tasks
as across any workers.

Nothing here imports pyspark: it is given a SparkSession (or a SparkContext) and calls
``parallelize``, ``map`` and ``collect``; the optional ``spark`` extra installs pyspark
for local runs and tests (Glue and EMR bring their own). The kinds are pickled to the
executors (cloudpickle), so they must be importable there: ship your package with the job
(``--py-files``, Glue's ``--additional-python-modules``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from singletable.model.table import Table
from singletable.tooling.jobs.engine import LEASE_SECONDS, WorkerReport, new_worker_id, read_job
from singletable.tooling.jobs.engine import run_job as _run_job
from singletable.tooling.jobs.units import JobKind
from singletable.tooling.jobs.workers import ConnectionSettings, TableKeys

__all__ = ["run_on_spark"]


def _task(
    index: int,
    settings: ConnectionSettings,
    keys: TableKeys,
    job_id: str,
    kinds: Mapping[str, JobKind],
    lease_seconds: float,
) -> WorkerReport:
    """One Spark task: claim unit ``index`` (waiting out another holder's lease) and run it."""
    return _run_job(
        settings,
        keys.table(),
        job_id,
        kinds,
        worker_id=f"spark:{new_worker_id()}",
        lease_seconds=lease_seconds,
        only={index},
    )


def run_on_spark(
    spark: Any,
    settings: ConnectionSettings,
    table: Table,
    job_id: str,
    kinds: Mapping[str, JobKind],
    *,
    lease_seconds: float = LEASE_SECONDS,
) -> list[WorkerReport]:
    """Run every unit of a started job as one Spark task each; wait for them all.

    Args:
        spark: A SparkSession or SparkContext.
        settings: How each task connects (credentials and region come from the executors'
            environment, e.g. the Glue job's role).
        table: The job's table.
        job_id: The job (started with `start_job`).
        kinds: The kinds the tasks may run, by name (pickled to the executors).
        lease_seconds: The units' lease time.

    Returns:
        One report per task, in unit order.
    """
    record = read_job(settings(), table, job_id).record
    assert record is not None
    context = getattr(spark, "sparkContext", spark)
    keys = TableKeys.of(table)
    kinds = dict(kinds)
    tasks = context.parallelize(range(record.total), record.total)
    reports: list[WorkerReport] = tasks.map(
        lambda index: _task(index, settings, keys, job_id, kinds, lease_seconds)
    ).collect()
    return reports
