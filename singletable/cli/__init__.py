"""The ``singletable`` command: synth, snapshot, plan, migrate, load, export, lint, demo, browse.

A thin layer over the library: every subcommand loads the model named by a reference
and calls the same functions a program would.

A model reference is ``module:attribute`` (``singletable.examples:demo``), a module
(``singletable.examples``: every `Table` in it) or a file path (``app/models.py`` or
``app/models.py:table``). The attribute may be a `Table`, an `Entity` class (its table)
or a list/tuple of tables.

Exit codes (`singletable.cli.codes.ExitCode`): 0 success (``plan``: nothing unsafe), 1 a
migration left items it could not rewrite (or a load stopped with items not written, or an
export skipped items), 2 a usage error; ``plan`` returns 3 (online index change), 4 (item
rewrite), 5 (breaking for reads) or 6 (table migration) for the worst change it finds; 7 a
bad snapshot, 8 no AWS region or credentials, 9 an unreachable endpoint, 10 a migration
refused, 11 an error from DynamoDB, 12 a TTL switch pending, 13 invalid lines in a load's
input file. Every failure is one line on stderr (a load's invalid lines, an export's
skipped items: one line each, then the failure).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any, TextIO

from singletable.cli.codes import EXIT_CODES_HELP, ExitCode, code_for
from singletable.entity import Entity
from singletable.errors import ServiceError, SingleTableError
from singletable.model.table import Table

if TYPE_CHECKING:
    from singletable.io.connection import Connection

_MODEL_HELP = (
    "the model: module:attribute (a Table, an Entity class or a list of tables), a module "
    "(every Table in it), or a .py file path (optionally path.py:attribute)"
)


class CLIError(SingleTableError):
    """A usage error: printed on stderr, exit code 2."""


def _import(ref: str) -> ModuleType:
    path = Path(ref)
    if ref.endswith(".py"):
        if not path.is_file():
            raise CLIError(f"no such file: {ref}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:  # pragma: no cover - .py files always load
            raise CLIError(f"cannot load {ref}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise CLIError(f"cannot import {ref}: {type(exc).__name__}: {exc}") from None
        return module
    # Like `python -m`, resolve modules relative to the working directory too.
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(ref)
    except Exception as exc:
        raise CLIError(f"cannot import module {ref!r}: {type(exc).__name__}: {exc}") from None


def _as_tables(value: Any, where: str) -> list[Table]:
    if isinstance(value, Table):
        return [value]
    if isinstance(value, type) and issubclass(value, Entity):
        try:
            return [value.plan().table]
        except SingleTableError as exc:
            raise CLIError(f"{where}: {exc}") from None
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, Table) for v in value):
        return list(value)
    raise CLIError(
        f"{where} is a {type(value).__name__}, not a model: name a Table, an Entity class, "
        "a list of tables, or a module that defines tables"
    )


def load_model(ref: str) -> list[Table]:
    """The tables a model reference names (see the module docstring).

    Raises:
        CLIError: The module does not import, the attribute is missing or not a model.
    """
    module_ref, sep, attr = ref.rpartition(":") if ref.count(":") else ("", "", "")
    if not sep or (len(module_ref) == 1 and module_ref.isalpha()):  # Windows "C:\..."
        module_ref, attr = ref, ""
    module = _import(module_ref)
    if attr:
        value: Any = module
        for part in attr.split("."):
            try:
                value = getattr(value, part)
            except AttributeError:
                raise CLIError(f"module {module_ref!r} has no attribute {attr!r}") from None
        return _as_tables(value, f"{module_ref}:{attr}")
    tables: dict[int, Table] = {}
    for value in vars(module).values():
        if isinstance(value, Table):
            tables.setdefault(id(value), value)
    if not tables:
        raise CLIError(f"module {module_ref!r} defines no Table; name one as {module_ref}:ATTR")
    return list(tables.values())


def _snapshot(path: str) -> dict[str, Any]:
    from singletable.tooling.migrations.snapshot import read_snapshot

    return read_snapshot(path)


# -- subcommands ------------------------------------------------------------------------


def _cmd_synth(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.model.definition import create_table_request
    from singletable.tooling.definitions.schema import cloudformation_template, to_json, to_yaml

    tables = load_model(args.model)
    if args.format == "create-table":
        requests = [create_table_request(t) for t in tables]
        out.write(to_json(requests[0] if len(requests) == 1 else requests))
    elif args.format == "yaml":
        out.write(to_yaml(cloudformation_template(tables)))
    else:
        out.write(to_json(cloudformation_template(tables)))
    return 0


def _cmd_snapshot(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.migrations.snapshot import snapshot_json

    text = snapshot_json(load_model(args.model))
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        out.write(text)
    return 0


def _cmd_plan(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.migrations.planner import plan_changes

    tables = load_model(args.model)
    plan = plan_changes(tables, _snapshot(args.snapshot))
    out.write(plan.to_json() if args.json else plan.to_text())
    return plan.exit_code


def _cmd_migrate(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.migrations.runner import migrate

    tables = load_model(args.model)
    doc = _snapshot(args.snapshot)
    transform = _transforms(args.transform or [])
    db = _connect(args)
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
    with tempfile.TemporaryFile() as spool:
        shutil.copyfileobj(sys.stdin.buffer, spool)
        spool.seek(0)
        yield spool


def _cmd_load(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.bulk.load import JsonLines, LineError, check, load

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
            raise _BadInput(
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
        db = _connect(args)
        for table in report.tables.values():
            _require_table(db, table.name)
        stream.seek(0)
        result = load(
            db,
            reader.objects(stream),
            total=report.items,
            out=out,
            where=lambda position: f"line {report.line_of(position)}",
            label=f"load {name}",
        )
    out.write(
        f"loaded {result.written:,} items ({counts}) in {result.seconds:.1f}s, "
        f"{result.rate:,.0f} items/s, {result.calls:,} calls, {result.retries:,} retries\n"
    )
    return ExitCode.OK


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
    from singletable.tooling.bulk.load import JsonLines

    tables = load_model(args.model)
    target: list[Target] = list(tables)
    if args.entity is not None:
        found = JsonLines(tables).resolve(args.entity)
        if isinstance(found, str):
            raise CLIError(f"--entity: {found}")
        target = [found.model]
    db = _connect(args)
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
    _fail("export", CLIError(f"{result.skipped:,} items not exported ({reasons}); {where}"))
    return ExitCode.ITEMS_FAILED


class _BadInput(SingleTableError):
    """Invalid lines in a load's input: exit code 13."""


def _require_table(db: Connection, table: str) -> None:
    # Before the first write: a wrong endpoint, region or table name fails here, with
    # nothing written, rather than at the first batch.
    if not db.table_exists(table):
        raise ServiceError(
            "ResourceNotFoundException",
            f"table {table} does not exist at this endpoint/region; check --endpoint-url/"
            "--region, or create it (singletable synth)",
        )


def _function(ref: str) -> Any:
    module_ref, sep, name = ref.rpartition(":")
    if not sep or not module_ref or not name:
        raise CLIError(f"--transform {ref!r}: expected module:function or path.py:function")
    value: Any = _import(module_ref)
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


def _cmd_lint(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.cost.lint import lint_report

    text, code = lint_report(
        load_model(args.model),
        writes_per_second=args.writes_per_second,
        reads_per_second=args.reads_per_second,
    )
    out.write(text if text.endswith("\n") else text + "\n")
    return code


def _cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    # Imported lazily: the demo needs moto, which the other subcommands do not.
    from singletable.cli.demo import run_demo

    run_demo(out)
    return 0


def _cmd_browse(args: argparse.Namespace, out: TextIO) -> int:
    # Imported lazily: the browser needs the `browse` extra (and --demo needs moto).
    from singletable.cli.browse import run_browse

    if args.model is None and not args.demo:
        raise CLIError("name a model (MODULE:ATTR), or give --demo for the worked examples")
    tables = load_model(args.model or "singletable.examples:demo")
    run_browse(args, tables)
    return 0


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


def _connect(args: argparse.Namespace) -> Connection:
    """The connection `_add_connection_options` describes."""
    from singletable.io.connection import Connection

    return Connection(
        endpoint_url=args.endpoint_url, region_name=args.region, max_attempts=args.max_attempts
    )


def _add_connection_options(p: argparse.ArgumentParser) -> None:
    """The options of the commands that talk to DynamoDB: where, and how persistently."""
    p.add_argument(
        "--endpoint-url",
        "--endpoint",
        dest="endpoint_url",
        help="DynamoDB endpoint (DynamoDB Local, LocalStack); default: AWS from the environment",
    )
    p.add_argument("--region", help="AWS region (default: from the environment)")
    p.add_argument(
        "--max-attempts",
        type=_positive_int,
        default=10,
        help="attempts per request (throttling, network errors) before giving up (default 10)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``singletable`` command."""
    parser = argparse.ArgumentParser(
        prog="singletable",
        description="DynamoDB single-table design: table definitions, model snapshots, "
        "migration plans, the migration runner and bulk loads.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "synth",
        help="print the table definition (CloudFormation JSON/YAML or a create_table request)",
        description="Print the table definition generated from the model.",
    )
    p.add_argument("model", help=_MODEL_HELP)
    p.add_argument(
        "--format",
        choices=["json", "yaml", "create-table"],
        default="json",
        help="json/yaml: a CloudFormation template with one AWS::DynamoDB::Table per table; "
        "create-table: the boto3 create_table request(s) as JSON (default: json)",
    )
    p.set_defaults(func=_cmd_synth)

    p = sub.add_parser(
        "snapshot",
        help="write the model snapshot (commit it next to the code)",
        description="Describe everything the model writes into stored items (key templates, "
        "codec parameters, entity identifiers, indexes) as deterministic JSON.",
    )
    p.add_argument("model", help=_MODEL_HELP)
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=_cmd_snapshot)

    p = sub.add_parser(
        "plan",
        help="compare the model with a snapshot and classify every change",
        description="Compare the current model with a committed snapshot and list every "
        "change with its class and reason. The exit code is that of the worst change, so CI "
        "can gate on it.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", help=_MODEL_HELP)
    p.add_argument("snapshot", help="the snapshot file the stored data was written with")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(func=_cmd_plan)

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
    p.add_argument("model", help=_MODEL_HELP)
    p.add_argument("snapshot", help="the snapshot file the stored data was written with")
    _add_connection_options(p)
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
        type=_positive_int,
        default=4,
        help="parallel scan segments per table (default 4); each table is read once",
    )
    p.add_argument(
        "--workers",
        type=_positive_int,
        help="segments scanned at once (threads; default: all of them)",
    )
    for kind in ("rcu", "wcu"):
        p.add_argument(
            f"--max-{kind}",
            type=_positive_float,
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

    p = sub.add_parser(
        "load",
        help="write the entities of a JSON Lines file to their tables",
        description="Load a JSON Lines file: one JSON object per line holding an entity's "
        "fields, the entity named by --entity or by the table's entity attribute (_et) in the "
        "line. First every line is parsed, validated and encoded (keys, sizes, text) and "
        "keys given twice are found; if any line is invalid, each is listed with its line "
        "number and nothing is written. Then the items are written in batches of 25 "
        "(entities with unique fields or a version field one by one, with their guards). "
        "Blank lines, CR LF line ends and a UTF-8 byte order mark are accepted. Progress: "
        "a bar on a terminal, plain lines otherwise.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", help=_MODEL_HELP)
    p.add_argument("file", help="the JSON Lines file (- for stdin)")
    p.add_argument(
        "--entity",
        metavar="NAME",
        help="the entity of every line (its stored name; TABLE/NAME@VERSION when ambiguous); "
        "default: the entity each line names in its entity attribute (_et)",
    )
    _add_connection_options(p)
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="only the validation pass: check every line and count what would be written",
    )
    p.set_defaults(func=_cmd_load)

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
    p.add_argument("model", help=_MODEL_HELP)
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
    _add_connection_options(p)
    p.add_argument(
        "--segments",
        type=_positive_int,
        default=1,
        help="parallel scan segments per table (default 1); the lines come in no order",
    )
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser(
        "lint",
        help="warn about partition keys that can take only a few values (hot partitions)",
        description="Check every partition key template (table and GSIs) for a low number of "
        "possible values (built only from bools, enums, Literals, dates or constants), and "
        "estimate the load per key for a request rate against DynamoDB's per-partition "
        "limits (3,000 RCU and 1,000 WCU per second). Exit code: 0 clean, 1 warnings, 2 the "
        "given rate exceeds a partition's limit.",
    )
    p.add_argument("model", help=_MODEL_HELP)
    p.add_argument(
        "--writes-per-second", type=float, help="expected writes per second (whole table)"
    )
    p.add_argument("--reads-per-second", type=float, help="expected reads per second (whole table)")
    p.set_defaults(func=_cmd_lint)

    p = sub.add_parser(
        "demo",
        help="run the three worked examples on the embedded backend (needs moto)",
        description="Run the worked examples (audit log, sensor readings, file tree) on an "
        "in-memory DynamoDB and print each request and its cost.",
    )
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser(
        "browse",
        help="browse a table in a local web page, entity by entity (needs the browse extra)",
        description="Serve a local web page (127.0.0.1 only, unless --host says otherwise) "
        "that shows the model, reads partitions and collections ascending and descending "
        "side by side, decodes every item into its entity, and shows each request with its "
        "estimated and reported capacity. Read-only unless --allow-writes.",
    )
    p.add_argument("model", nargs="?", help=_MODEL_HELP + " (default with --demo: the examples)")
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
    return parser


def _fail(command: str, exc: Exception) -> None:
    # One line: a message that spans lines (a botocore reason, a pydantic error) is joined.
    text = " ".join(str(exc).split())
    print(f"singletable {command}: error: {text}", file=sys.stderr)


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
        _fail(args.command, exc)
        return ExitCode.USAGE
    except _BadInput as exc:
        _fail(args.command, exc)
        return ExitCode.BAD_INPUT
    except SingleTableError as exc:
        _fail(args.command, exc)
        return code_for(exc)
    except BrokenPipeError:
        # The reader went away (`singletable demo | head`): stop quietly like other
        # command-line tools, and keep the interpreter from complaining at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code
