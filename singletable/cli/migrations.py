"""``singletable migrate``: carry a plan out on a live table."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, TextIO

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
        help="segments scanned at once (threads; default: all of them)",
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
    from singletable.tooling.migrations.runner import migrate

    tables = load_model(args.model)
    doc = read_snapshot_file(args.snapshot)
    transform = _transforms(args.transform or [])
    db = connect(args)
    report = migrate(
        db,
        tables,
        doc,
        dry_run=args.dry_run,
        checkpoint=args.checkpoint,
        segments=args.segments,
        out=out,
        transform=transform,
        workers=args.workers,
        max_rcu=args.max_rcu,
        max_wcu=args.max_wcu,
    )
    if report.failed:  # items not rewritten, or values held by several items
        return ExitCode.ITEMS_FAILED
    return ExitCode.TTL_PENDING if report.ttl_pending else ExitCode.OK


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
