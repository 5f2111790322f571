"""``singletable load`` and ``export``: JSON Lines in and out of a table."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TextIO

from singletable.cli.codes import EXIT_CODES_HELP, ExitCode
from singletable.cli.common import (
    MODEL_HELP,
    BadInput,
    CLIError,
    Subcommands,
    add_connection_options,
    connect,
    fail,
    load_model,
    positive_int,
    require_table,
)


def add_load(sub: Subcommands) -> None:
    """``load``: a JSON Lines file into its tables."""
    p = sub.add_parser(
        "load",
        help="write the entities of a JSON Lines file to their tables",
        description="Load a JSON Lines file: one JSON object per line holding an entity's "
        "fields, the entity named by --entity or by the table's entity attribute (_et) in the "
        "line. First every line is parsed, validated and encoded (keys, sizes, text) and "
        "keys given twice are found; if any line is invalid, each is listed with its line "
        "number and nothing is written. Then the items are written in batches of 25 "
        "(entities with unique fields or a version field one by one, with their guards; a "
        "versioned item at its own version, where none or the same version is stored). "
        "Blank lines, CR LF line ends and a UTF-8 byte order mark are accepted. Progress: "
        "a bar on a terminal, plain lines otherwise.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("file", help="the JSON Lines file (- for stdin)")
    p.add_argument(
        "--entity",
        metavar="NAME",
        help="the entity of every line (its stored name; TABLE/NAME@VERSION when ambiguous); "
        "default: the entity each line names in its entity attribute (_et)",
    )
    add_connection_options(p)
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="only the validation pass: check every line and count what would be written",
    )
    p.add_argument(
        "--first-import",
        action="store_true",
        help="into tables that must be empty (checked first): batch-write versioned "
        "entities too, without their version check; an item a concurrent writer puts "
        "meanwhile under the same key is overwritten (unique fields keep their guards)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="write N chunks of the file at once (threads); default 1, in file order",
    )
    p.set_defaults(func=_cmd_load)


@contextlib.contextmanager
def _input(path: str) -> Iterator[IO[bytes]]:
    """The input file, opened to be read twice (stdin, ``-``, is copied to a temporary file)."""
    if path != "-":
        try:
            stream = open(path, "rb")  # noqa: SIM115 - closed by the with below
        except OSError as exc:
            raise CLIError(f"cannot read {path}: {exc.strerror}") from None
        with stream:
            yield stream
        return
    # Named: a load reads its units from the file by path.
    with tempfile.NamedTemporaryFile(prefix="singletable-load-", suffix=".jsonl") as spool:
        shutil.copyfileobj(sys.stdin.buffer, spool)
        spool.seek(0)
        yield spool


def _cmd_load(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.bulk.lines import JsonLines, LineError, check
    from singletable.tooling.bulk.load import require_empty
    from singletable.tooling.bulk.load_units import load_file

    if args.workers < 1:
        raise CLIError(f"--workers must be at least 1, got {args.workers}")
    tables = load_model(args.model)
    try:
        reader = JsonLines(tables, entity=args.entity)
    except LineError as exc:
        raise CLIError(f"--entity: {exc}") from None
    name = "stdin" if args.file == "-" else args.file
    with _input(args.file) as stream:
        report = check(reader, stream)
        if report.error_count:
            for error in report.errors:
                print(f"singletable load: line {error.line}: {error}", file=sys.stderr)
            more = report.error_count - len(report.errors)
            raise BadInput(
                f"{report.error_count:,} of {report.lines - len(report.blank):,} item lines "
                f"in {name} are invalid"
                + (f" ({more:,} more not shown)" if more else "")
                + "; nothing was written"
            )
        counts = ", ".join(f"{n:,} {entity}" for entity, n in report.by_entity.items())
        if args.dry_run or not report.items:
            verb = "would write" if report.items else "nothing to write:"
            out.write(f"{name}: {report.lines:,} lines, {len(report.blank):,} blank; ")
            out.write(
                f"{verb} {report.items:,} items ({counts})\n" if counts else f"{verb} no items\n"
            )
            return ExitCode.OK
        db = connect(args)
        for table in report.tables.values():
            require_table(db, table.name)
        if args.first_import:
            # Every table before the first write (the load checks each again when its first
            # item comes, which a file of several tables alone would find too late).
            for table in report.tables.values():
                require_empty(db, table)
        stream.flush()
        result = load_file(
            db,
            stream.name,
            reader,
            total=report.items,
            out=out,
            label=f"load {name}",
            first_import=args.first_import,
            workers=args.workers,
        )
    out.write(
        f"loaded {result.written:,} items ({counts}) in {result.seconds:.1f}s, "
        f"{result.rate:,.0f} items/s, {result.calls:,} calls, {result.retries:,} retries\n"
    )
    return ExitCode.OK


def add_export(sub: Subcommands) -> None:
    """``export``: a model's items (or one entity's) as JSON Lines."""
    p = sub.add_parser(
        "export",
        help="write the items of a model's tables (or of one entity) as JSON Lines",
        description="Scan the model's tables and write each item as one JSON object per "
        "line: the entity's fields as pydantic writes them (Decimals as strings) and the "
        "entity attribute (_et) naming the entity, which `singletable load` reads back. "
        "Each line is read back and compared before it is written; items that would not "
        "load back equal, and items no entity of the model decodes, are skipped, counted "
        "and listed (exit code 1), and kept with --rejects. Progress goes to stderr.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument(
        "--entity",
        metavar="NAME",
        help="export only this entity (its stored name; TABLE/NAME@VERSION when ambiguous)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE (replaced only once the export is complete); default: stdout",
    )
    p.add_argument(
        "--rejects",
        metavar="FILE",
        help="write the skipped items to FILE as stored (DynamoDB JSON) with the reason",
    )
    add_connection_options(p)
    p.add_argument(
        "--segments",
        type=positive_int,
        default=1,
        help="parallel scan segments per table (default 1); the lines come in no order",
    )
    p.set_defaults(func=_cmd_export)


@contextlib.contextmanager
def _output(path: str | None, out: TextIO) -> Iterator[TextIO]:
    """Where an export's lines go: FILE (in place only once complete), else ``out``, as UTF-8."""
    if path is None:
        buffer = getattr(out, "buffer", None)
        if buffer is None:  # a text stream without bytes beneath (tests, a StringIO)
            yield out
            return
        # The locale's encoding may not hold every character: the lines are UTF-8.
        stream = io.TextIOWrapper(buffer, encoding="utf-8", newline="\n")
        try:
            yield stream
        finally:
            stream.flush()
            stream.detach()
        return
    target = Path(path)
    try:
        fd, partial = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".partial")
    except OSError as exc:
        raise CLIError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with open(fd, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
        # A file that stopped half-way must not look like a complete export.
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


def _cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.bulk.export import Target, export
    from singletable.tooling.bulk.lines import JsonLines

    tables = load_model(args.model)
    target: list[Target] = list(tables)
    if args.entity is not None:
        found = JsonLines(tables).resolve(args.entity)
        if isinstance(found, str):
            raise CLIError(f"--entity: {found}")
        target = [found.model]
    db = connect(args)
    rejects = _output(args.rejects, out) if args.rejects else contextlib.nullcontext(None)
    with _output(args.output, out) as lines, rejects as rejected:
        result = export(
            db,
            target,
            lines,
            rejects=rejected,
            model=tables,
            segments=args.segments,
            label=f"export {args.entity or args.model}",
        )
    counts = ", ".join(f"{n:,} {entity}" for entity, n in result.by_entity.items()) or "none"
    print(
        f"exported {result.written:,} items ({counts}) of {result.scanned:,} scanned in "
        f"{result.seconds:.1f}s, {result.rate:,.0f} items/s",
        file=sys.stderr,
    )
    if not result.skipped:
        return ExitCode.OK
    for example in result.skipped_examples:
        # One line each, like every failure (a pydantic message spans lines).
        print(f"singletable export: skipped {' '.join(example.split())}", file=sys.stderr)
    reasons = ", ".join(f"{n:,} {why}" for why, n in result.skipped_by_reason.items())
    where = f"written to {args.rejects}" if args.rejects else "give --rejects FILE to keep them"
    fail("export", CLIError(f"{result.skipped:,} items not exported ({reasons}); {where}"))
    return ExitCode.ITEMS_FAILED
