"""``singletable jobs start|work|status|cancel JOB``: jobs shared by any number of workers.

A job lives in the table it works on (`singletable.tooling.jobs`), so every command needs
only the table's name, the job id and a connection: the table's key attributes are read
from DynamoDB (DescribeTable). Any number of ``jobs work`` processes, on any number of
machines (a Kubernetes Job with parallelism, an AWS Batch array job, plain shells), join
one job; ``--workers N`` starts N worker processes here.

The kinds a worker can run are the built-in ones (`builtin_kinds`) and those named by ``--kinds
MODULE:ATTRIBUTE`` (a `JobKind`, or a mapping or list of them), registered by their names.
"""

from __future__ import annotations

import argparse
import importlib
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from singletable.cli.codes import ExitCode
from singletable.cli.common import Subcommands, add_connection_options
from singletable.errors import JobError
from singletable.model.table import Table
from singletable.operations.tables import DescribeTable

if TYPE_CHECKING:
    # The engine is imported by the commands that run (as the other commands import their
    # tooling): `singletable --help` and the commands without jobs do not pay for it.
    from singletable.tooling.jobs.status import JobStatus
    from singletable.tooling.jobs.units import JobKind
    from singletable.tooling.jobs.workers import ConnectionSettings

__all__ = ["add_jobs", "builtin_kinds", "kinds_from"]


def builtin_kinds() -> dict[str, JobKind]:
    """The kinds every worker knows, by name: migrations, loads and exports."""
    from singletable.tooling.bulk.export import EXPORT_KIND
    from singletable.tooling.bulk.load_units import LOAD_KIND
    from singletable.tooling.migrations.work import MIGRATE_KIND

    return {kind.name: kind for kind in (MIGRATE_KIND, LOAD_KIND, EXPORT_KIND)}


def add_jobs(subparsers: Subcommands) -> None:
    """``jobs`` and its subcommands: start, work, status, cancel."""
    jobs = subparsers.add_parser(
        "jobs",
        help="start, work on, follow or cancel a job shared by many workers",
        description="A job (a migration, a load, an export) split into units that any "
        "number of workers, on any number of machines, share through lease items in the "
        "job's own table. Start it once, then run `jobs work` wherever you have capacity.",
    )
    sub = jobs.add_subparsers(dest="jobs_command", required=True, metavar="SUBCOMMAND")

    def common(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, **kwargs)
        p.add_argument("job", help="the job id")
        p.add_argument("--table", required=True, help="the table the job works on")
        p.add_argument(
            "--kinds",
            action="append",
            default=[],
            metavar="MODULE:ATTRIBUTE",
            help="job kinds to register besides the built-in ones (a JobKind, or a mapping "
            "or list of them); repeatable",
        )
        add_connection_options(p)
        return p

    p = common("start", help="write a job's record and units into its table")
    p.add_argument("--kind", required=True, help="the job's kind (a registered name)")
    p.add_argument("--spec", required=True, help="the job's spec: JSON text, or @FILE holding it")
    p.add_argument("--max-rcu", type=float, help="read capacity per second for the whole job")
    p.add_argument("--max-wcu", type=float, help="write capacity per second for the whole job")
    p.add_argument("--expected", type=int, help="how many of --measure to expect (for the ETA)")
    p.add_argument("--measure", default="scanned", help="the count progress is measured in")
    p.set_defaults(jobs_func=_start)

    p = common("work", help="work on a job until no unit is left")
    p.add_argument("--workers", type=int, default=1, help="worker processes here (default 1)")
    p.add_argument(
        "--lease-seconds",
        type=float,
        default=30.0,
        help="how long a unit's lease lasts without renewal (renewed every third)",
    )
    p.add_argument("--worker-id", help="this worker's id (default: host:pid:random)")
    p.set_defaults(jobs_func=_work)

    p = common("status", help="print a job's progress, aggregated over its units")
    p.add_argument(
        "--watch",
        type=float,
        metavar="SECONDS",
        help="print a line every SECONDS, with rate and ETA, until the job ends",
    )
    p.add_argument("--json", action="store_true", help="print the status as JSON")
    p.set_defaults(jobs_func=_status)

    p = common("cancel", help="cancel a job: its workers stop at their next page")
    p.set_defaults(jobs_func=_cancel)
    jobs.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run the parsed ``jobs`` subcommand."""
    func: Callable[[argparse.Namespace, TextIO], int] = args.jobs_func
    return func(args, out)


def kinds_from(refs: list[str]) -> dict[str, JobKind]:
    """The built-in kinds and those ``refs`` name, by name."""
    kinds = builtin_kinds()
    for ref in refs:
        module, _, attribute = ref.partition(":")
        if not attribute:
            raise JobError(f"--kinds {ref!r}: name the kinds as MODULE:ATTRIBUTE")
        try:
            found = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError) as exc:
            raise JobError(f"--kinds {ref!r}: {exc}") from None
        if isinstance(found, Mapping):
            found = list(found.values())
        for kind in found if isinstance(found, (list, tuple)) else [found]:
            kinds[kind.name] = kind
    return kinds


def _settings(args: argparse.Namespace) -> ConnectionSettings:
    from singletable.tooling.jobs.workers import ConnectionSettings

    return ConnectionSettings(args.endpoint_url, args.region, args.max_attempts)


def _table(args: argparse.Namespace, db: Any) -> Table:
    """The job's table, its key attributes as DynamoDB describes them."""
    described = DescribeTable(args.table).run(db)
    keys = {k["KeyType"]: k["AttributeName"] for k in described.get("KeySchema", [])}
    return Table(args.table, pk=keys["HASH"], sk=keys.get("RANGE"))


def _start(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.jobs.engine import start_job

    kinds = kinds_from(args.kinds)
    kind = kinds.get(args.kind)
    if kind is None:
        raise JobError(f"unknown job kind {args.kind!r} (known: {', '.join(sorted(kinds))})")
    text = Path(args.spec[1:]).read_text() if args.spec.startswith("@") else args.spec
    try:
        spec = json.loads(text)
    except ValueError as exc:
        raise JobError(f"--spec is not JSON: {exc}") from None
    db = _settings(args)()
    record = start_job(
        db,
        _table(args, db),
        kind,
        spec,
        job_id=args.job,
        max_rcu=args.max_rcu,
        max_wcu=args.max_wcu,
        expected=args.expected,
        measure=args.measure,
    )
    print(f"job {record.job_id} ({record.kind}): {record.total} unit(s), {record.state}", file=out)
    return ExitCode.OK


def _work(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.jobs.engine import run_job
    from singletable.tooling.jobs.status import job_status
    from singletable.tooling.jobs.workers import WorkerFailed, run_workers

    kinds = kinds_from(args.kinds)
    settings = _settings(args)
    table = _table(args, settings())
    try:
        if args.workers > 1:
            reports = run_workers(
                settings,
                table,
                args.job,
                kinds,
                workers=args.workers,
                lease_seconds=args.lease_seconds,
            )
        else:
            reports = [
                run_job(
                    settings,
                    table,
                    args.job,
                    kinds,
                    worker_id=args.worker_id,
                    lease_seconds=args.lease_seconds,
                )
            ]
    except WorkerFailed as exc:
        print(f"singletable jobs work: error: {exc}", file=out)
        return ExitCode.ITEMS_FAILED
    for report in reports:
        counts = ", ".join(f"{k} {v:,}" for k, v in sorted(report.counts.items()) if v)
        print(
            f"worker {report.worker_id}: {len(report.finished)} unit(s) finished"
            f"{f', {len(report.lost)} lost to another worker' if report.lost else ''}"
            f"{'; the job was cancelled' if report.cancelled else ''}"
            f"{f'; {counts}' if counts else ''}",
            file=out,
        )
    status = job_status(settings(), table, args.job)
    print(status.line(), file=out)
    return ExitCode.OK if status.state == "done" else ExitCode.ITEMS_FAILED


def _as_json(status: JobStatus) -> str:
    return json.dumps(
        {
            "job": status.job_id,
            "kind": status.kind,
            "state": status.state,
            "units": status.total,
            "done": status.done,
            "live": status.live,
            "workers": status.workers,
            "counts": dict(status.counts),
            "refused": dict(status.refused),
            "pages": status.pages,
            "takeovers": status.takeovers,
            "errors": {str(k): v for k, v in status.errors.items()},
        },
        sort_keys=True,
    )


def _status(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.jobs.status import RateWindow, job_status

    db = _settings(args)()
    table = _table(args, db)
    window = RateWindow()
    while True:
        status = job_status(db, table, args.job)
        window.observe(status)
        if args.json:
            print(_as_json(status), file=out, flush=True)
        else:
            print(status.line(window.rate(), window.eta(status.expected)), file=out, flush=True)
        if args.watch is None or status.state != "running":
            return ExitCode.OK
        time.sleep(args.watch)


def _cancel(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.jobs.engine import cancel_job
    from singletable.tooling.jobs.status import job_status

    db = _settings(args)()
    table = _table(args, db)
    if cancel_job(db, table, args.job):
        print(f"job {args.job} cancelled: its workers stop at their next page", file=out)
        return ExitCode.OK
    state = job_status(db, table, args.job).state
    print(f"job {args.job} is {state}, not running: nothing to cancel", file=out)
    return ExitCode.OK
