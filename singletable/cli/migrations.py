"""``singletable migrate``: carry a plan out on a live table."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from singletable.cli.codes import EXIT_CODES_HELP, ExitCode
from singletable.cli.common import (
    MODEL_HELP,
    CLIError,
    Subcommands,
    add_connection_options,
    connect,
    import_ref,
    load_model,
    positive_float,
    positive_int,
    read_snapshot_file,
)

if TYPE_CHECKING:
    from singletable.tooling.migrations.jobrun import MigrationJob


def add_migrate(sub: Subcommands) -> None:
    """``migrate``: index changes, item rewrites and TTL switches on a live table."""
    p = sub.add_parser(
        "migrate",
        help="apply index changes and rewrite items to a live table",
        description="Apply what `plan` finds: create/delete GSIs one at a time (waiting "
        "for ACTIVE), rewrite the items of entities whose stored form changed, and move the "
        "TTL setting. Each rewrite is conditional on the item being unchanged since it was "
        "read and retried from a fresh read, so it can run while the application writes. "
        "Table migrations are refused. Progress: a bar on a terminal, plain lines otherwise.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("snapshot", help="the snapshot file the stored data was written with")
    add_connection_options(p)
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="change nothing: count the items to rewrite and estimate read/write capacity",
    )
    p.add_argument(
        "--checkpoint",
        metavar="FILE",
        help="save scan progress to FILE after every page; a re-run resumes from it "
        "(delete it to rescan everything)",
    )
    p.add_argument(
        "--segments",
        type=positive_int,
        default=4,
        help="parallel scan segments per table (default 4); each table is read once",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        help="run the item work as a job (record and unit leases in the table) with N "
        "worker processes (1: this process); other machines join with `singletable jobs "
        "work JOB --table T`. Without it, this process scans every segment at once on "
        "threads (with --dry-run: N threads, and no job)",
    )
    p.add_argument(
        "--job",
        metavar="ID",
        help="the job's id (default: a new one, printed): the same command with the same "
        "--job resumes it; implies --workers 1 when --workers is not given",
    )
    for kind in ("rcu", "wcu"):
        p.add_argument(
            f"--max-{kind}",
            type=positive_float,
            metavar="UNITS",
            help=f"at most UNITS {kind.upper()} per second for the whole run (default: no limit)",
        )
    p.add_argument(
        "--transform",
        action="append",
        metavar="[ENTITY=]MODULE:FUNCTION",
        help="a function from a stored item's values (a dict keyed by attribute name) to the "
        "new model's field values, for rewrites the plan flags as not mechanical (narrowed "
        "precision, a key field's type changed); ENTITY= limits it to one entity; repeatable",
    )
    p.set_defaults(func=_cmd_migrate)


def _cmd_migrate(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.jobs.workers import WorkerFailed
    from singletable.tooling.migrations.runner import migrate

    tables = load_model(args.model)
    doc = read_snapshot_file(args.snapshot)
    transform = _transforms(args.transform or [])
    db = connect(args)
    try:
        report = migrate(
            db,
            tables,
            doc,
            dry_run=args.dry_run,
            checkpoint=args.checkpoint,
            segments=args.segments,
            out=out,
            transform=transform,
            workers=args.workers if args.dry_run else None,
            max_rcu=args.max_rcu,
            max_wcu=args.max_wcu,
            job=_job(args),
        )
    except WorkerFailed as exc:
        print(f"singletable migrate: error: {exc}", file=out)
        return ExitCode.ITEMS_FAILED
    if report.failed:  # items not rewritten, or values held by several items
        return ExitCode.ITEMS_FAILED
    return ExitCode.TTL_PENDING if report.ttl_pending else ExitCode.OK


def _job(args: argparse.Namespace) -> MigrationJob | None:
    """The job the item work runs as (``--workers``/``--job``), None for threads here."""
    from singletable.tooling.jobs.workers import ConnectionSettings
    from singletable.tooling.migrations.jobrun import MigrationJob

    if args.workers is None and args.job is None:
        return None
    if args.checkpoint is not None:
        raise CLIError(
            "--checkpoint is for a run without --workers/--job (a job keeps its progress in "
            "the table: run it again with the same --job to resume)"
        )
    refs = args.transform or []
    if len(refs) > 1 or any("=" in r.partition(":")[0] for r in refs):
        raise CLIError("a job takes one --transform MODULE:FUNCTION for every entity")
    return MigrationJob(
        job_id=args.job,
        workers=args.workers or 1,
        connection=ConnectionSettings(args.endpoint_url, args.region, args.max_attempts),
        model=_portable(args.model),
        transform=_portable(refs[0]) if refs else None,
    )


def _portable(ref: str) -> str:
    """A model or function reference other processes resolve alike: files by absolute path."""
    module, sep, attribute = ref.rpartition(":") if ".py:" in ref else (ref, "", "")
    # A bare module file names every Table it defines, as a file does for the CLI.
    if module.endswith(".py"):
        return f"{Path(module).resolve()}{sep}{attribute}"
    return ref


def _function(ref: str) -> Any:
    module_ref, sep, name = ref.rpartition(":")
    if not sep or not module_ref or not name:
        raise CLIError(f"--transform {ref!r}: expected module:function or path.py:function")
    value: Any = import_ref(module_ref)
    for part in name.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise CLIError(f"--transform {ref!r}: {module_ref!r} has no {name!r}") from None
    if not callable(value):
        raise CLIError(f"--transform {ref!r} is a {type(value).__name__}, not a function")
    return value


def _transforms(refs: Sequence[str]) -> Any:
    """``--transform [ENTITY=]module:function`` options as `migrate`'s ``transform``."""
    bare = [r for r in refs if "=" not in r.partition(":")[0]]
    named = {r.partition("=")[0]: _function(r.partition("=")[2]) for r in refs if r not in bare}
    if len(bare) > 1 or (bare and named):
        raise CLIError(
            "--transform: give one MODULE:FUNCTION for every entity, or ENTITY=MODULE:FUNCTION "
            "once per entity, not both"
        )
    return _function(bare[0]) if bare else (named or None)


def add_check_deployed(sub: Subcommands) -> None:
    """``check-deployed``: the live tables against the model (a CI gate)."""
    p = sub.add_parser(
        "check-deployed",
        help="compare the deployed tables with the model and name every difference",
        description="Describe each table of the model at the endpoint (DescribeTable, "
        "DescribeTimeToLive, DescribeContinuousBackups) and list every difference from the "
        "model with the class `plan` gives it: a missing GSI is an online index change, "
        "another key schema a table migration, a billing mode, stream, TTL or PITR setting "
        "safe but drift all the same. Exit code 0 only when nothing differs.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", help=MODEL_HELP)
    add_connection_options(p)
    p.add_argument("--json", action="store_true", help="print the differences as JSON")
    p.set_defaults(func=_cmd_check_deployed)


def _cmd_check_deployed(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.migrations.drift import check_deployed
    from singletable.tooling.migrations.planner import ChangeClass

    tables = load_model(args.model)
    report = check_deployed(connect(args), tables)
    out.write(report.to_json() if args.json else report.to_text())
    if report.worst is None:
        return ExitCode.OK
    # Safe differences still fail the gate (the deployment is not the model's), with a code
    # of their own; costlier ones keep the plan's code so a gate can tell them apart.
    return ExitCode.DRIFT if report.worst is ChangeClass.SAFE else report.worst.exit_code
