"""``singletable unique check MODEL [--repair]``: uniqueness guards against their items.

Writes that bypass singletable (a raw ``DeleteItem``, a restore) leave guards out of step
with the items: a deleted item's value stays blocked, a value written raw has no guard.
The check scans the model's tables by segments and lists what it finds
(`singletable.tooling.migrations.unique_check`); ``--repair`` deletes the orphaned guards
and claims the missing ones, each in a transaction that checks the items it relies on.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from singletable.cli.codes import EXIT_CODES_HELP, ExitCode
from singletable.cli.common import (
    MODEL_HELP,
    Subcommands,
    add_connection_options,
    connect,
    load_model,
    positive_int,
)

__all__ = ["add_unique"]


def add_unique(subparsers: Subcommands) -> None:
    """``unique`` and its subcommand ``check``."""
    unique = subparsers.add_parser(
        "unique",
        help="check (and repair) the uniqueness guards of a model's entities",
        description="Uniqueness constraints (unique=) keep one guard item per value.",
    )
    sub = unique.add_subparsers(dest="unique_command", required=True, metavar="SUBCOMMAND")
    p = sub.add_parser(
        "check",
        help="report orphaned and missing guards (--repair: fix them)",
        description="Scan the model's tables and check every uniqueness guard against "
        "the item it names (orphaned: the holder is gone or no longer holds the value) and "
        "every unique value of every item against its guard (missing: no guard, or one "
        "naming an item without the value; duplicate: two items hold the value). Each "
        "finding is one line on stdout; progress goes to stderr. --repair deletes orphaned "
        "guards and claims missing ones, each in a transaction that checks the items it "
        "relies on; duplicates are left for a person to decide (exit code 1).",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("--repair", action="store_true", help="delete orphaned, claim missing guards")
    add_connection_options(p)
    p.add_argument(
        "--segments",
        type=positive_int,
        default=1,
        help="parallel scan segments per table (default 1)",
    )
    p.set_defaults(func=_cmd_check)


def _cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.migrations.unique_check import check_unique

    tables = load_model(args.model)
    report = check_unique(
        connect(args),
        tables,
        repair=args.repair,
        segments=args.segments,
        label=f"unique check {args.model}",
    )
    print(report.to_text(), file=out)
    if report.ok:
        return ExitCode.OK
    print(
        f"singletable unique: error: {report.unresolved:,} finding(s) left"
        + ("" if args.repair else "; --repair fixes orphaned and missing guards"),
        file=sys.stderr,
    )
    return ExitCode.ITEMS_FAILED
