"""Long-running work split into units that any number of workers share.

`units` (the contract a job kind is written against), `local` (units run in one process),
`leases` (the job record and unit leases in the job's own table, as operations), `engine`
(`start_job`, `run_job`, `cancel_job`), `status` (`job_status`), `workers` (worker
processes on one machine), `spark` (units as Spark tasks: it is handed a SparkSession and
imports no pyspark itself), `progress` (a bar on a terminal, flushed lines otherwise).
"""

from __future__ import annotations

from singletable.tooling.jobs.engine import WorkerReport, cancel_job, run_job, start_job
from singletable.tooling.jobs.local import LocalContext, TokenBucket, run_units
from singletable.tooling.jobs.progress import Counts, Progress, Wording
from singletable.tooling.jobs.spark import run_on_spark
from singletable.tooling.jobs.status import JobStatus, RateWindow, job_status
from singletable.tooling.jobs.units import (
    JobCancelled,
    JobKind,
    JsonValue,
    LeaseLost,
    UnitContext,
    UnitWork,
    WorkUnit,
)
from singletable.tooling.jobs.workers import (
    ConnectionSettings,
    TableKeys,
    WorkerFailed,
    run_workers,
)

__all__ = [
    "ConnectionSettings",
    "Counts",
    "JobCancelled",
    "JobKind",
    "JobStatus",
    "JsonValue",
    "LeaseLost",
    "LocalContext",
    "Progress",
    "RateWindow",
    "TableKeys",
    "TokenBucket",
    "UnitContext",
    "UnitWork",
    "Wording",
    "WorkUnit",
    "WorkerFailed",
    "WorkerReport",
    "cancel_job",
    "job_status",
    "run_job",
    "run_on_spark",
    "run_units",
    "run_workers",
    "start_job",
]
