"""The ``singletable`` command: synth, plan, migrate, check-deployed, load, export, unique...

A thin layer over the library: every subcommand loads the model named by a reference
and calls the same functions a program would.

A model reference is ``module:attribute`` (``singletable.examples:demo``), a module
(``singletable.examples``: every `Table` in it) or a file path (``app/models.py`` or
``app/models.py:table``). The attribute may be a `Table`, an `Entity` class (its table)
or a list/tuple of tables.

Exit codes (`singletable.cli.codes.ExitCode`): 0 success (``plan``: nothing unsafe), 1 a
migration left items it could not rewrite (or a load stopped with items not written, an
export skipped items, a unique check left guards out of step), 2 a usage error; ``plan``
returns 3 (online index change), 4 (item rewrite), 5 (breaking for reads) or 6 (table
migration) for the worst change it finds; 7 a bad snapshot, 8 no AWS region or credentials,
9 an unreachable endpoint, 10 a migration refused, 11 an error from DynamoDB, 12 a TTL
switch pending, 13 invalid lines in a load's input file, 14 drift that deploying the
definition fixes (``check-deployed``, which returns 3 to 6 like ``plan`` for costlier
differences). Every failure is one line on stderr (a load's invalid lines, an export's
skipped items: one line each, then the failure).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from singletable.cli import bulk, jobs, migrations, models, unique
from singletable.cli.codes import ExitCode, code_for
from singletable.cli.common import MODEL_HELP, BadInput, CLIError, Subcommands, fail, load_model
from singletable.errors import SingleTableError

__all__ = ["CLIError", "build_parser", "load_model", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``singletable`` command."""
    parser = argparse.ArgumentParser(
        prog="singletable",
        description="DynamoDB single-table design: table definitions, model snapshots, "
        "migration plans, the migration runner and bulk loads.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    models.add_synth(sub)
    models.add_snapshot(sub)
    models.add_plan(sub)
    migrations.add_migrate(sub)
    migrations.add_check_deployed(sub)
    bulk.add_load(sub)
    bulk.add_export(sub)
    models.add_lint(sub)
    models.add_workbench(sub)
    _add_demo(sub)
    _add_browse(sub)
    jobs.add_jobs(sub)
    unique.add_unique(sub)
    return parser


def _add_demo(sub: Subcommands) -> None:
    """``demo``: the worked examples on the embedded backend."""
    p = sub.add_parser(
        "demo",
        help="run the three worked examples on the embedded backend (needs moto)",
        description="Run the worked examples (audit log, sensor readings, file tree) on an "
        "in-memory DynamoDB and print each request and its cost.",
    )
    p.set_defaults(func=_cmd_demo)


def _cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    # Imported lazily: the demo needs moto, which the other subcommands do not.
    from singletable.cli.demo import run_demo

    run_demo(out)
    return 0


def _add_browse(sub: Subcommands) -> None:
    """``browse``: the local collection browser."""
    p = sub.add_parser(
        "browse",
        help="browse a table in a local web page, entity by entity (needs the browse extra)",
        description="Serve a local web page (127.0.0.1 only, unless --host says otherwise) "
        "that shows the model, reads partitions and collections ascending and descending "
        "side by side, decodes every item into its entity, and shows each request with its "
        "estimated and reported capacity. Read-only unless --allow-writes.",
    )
    p.add_argument("model", nargs="?", help=MODEL_HELP + " (default with --demo: the examples)")
    p.add_argument("--endpoint", help="DynamoDB endpoint URL (DynamoDB Local, LocalStack)")
    p.add_argument("--region", help="AWS region (default: from the environment)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1); anything else prints a warning",
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help="browse the worked examples on the embedded backend (needs moto)",
    )
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="offer edit and delete forms (conditional writes, CSRF-protected)",
    )
    p.add_argument("--snapshot", help="snapshot file for the migration plan page")
    p.set_defaults(func=_cmd_browse)


def _cmd_browse(args: argparse.Namespace, out: TextIO) -> int:
    # Imported lazily: the browser needs the `browse` extra (and --demo needs moto).
    from singletable.cli.browse import run_browse

    if args.model is None and not args.demo:
        raise CLIError("name a model (MODULE:ATTR), or give --demo for the worked examples")
    tables = load_model(args.model or "singletable.examples:demo")
    run_browse(args, tables)
    return 0


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None) -> int:
    """Run the command line; returns the exit code (``sys.exit(main())`` in scripts).

    Args:
        argv: Arguments without the program name (default ``sys.argv[1:]``).
        out: Where results go (default stdout); errors always go to stderr.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args, out or sys.stdout)
    except CLIError as exc:
        fail(args.command, exc)
        return ExitCode.USAGE
    except BadInput as exc:
        fail(args.command, exc)
        return ExitCode.BAD_INPUT
    except SingleTableError as exc:
        fail(args.command, exc)
        return code_for(exc)
    except BrokenPipeError:
        # The reader went away (`singletable demo | head`): stop quietly like other
        # command-line tools, and keep the interpreter from complaining at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code
