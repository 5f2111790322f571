"""What the ``singletable`` subcommands share: model references, connection options, errors."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias

from singletable.entity import Entity
from singletable.errors import ServiceError, SingleTableError
from singletable.model.table import Table

if TYPE_CHECKING:
    from singletable.io.connection import Connection

#: The subparsers of the ``singletable`` parser, to which each command module adds its own
#: (argparse names no public type for it).
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

MODEL_HELP = (
    "the model: module:attribute (a Table, an Entity class or a list of tables), a module "
    "(every Table in it), or a .py file path (optionally path.py:attribute)"
)


class CLIError(SingleTableError):
    """A usage error: printed on stderr, exit code 2."""


class BadInput(SingleTableError):
    """Invalid lines in a load's input: exit code 13."""


def import_ref(ref: str) -> ModuleType:
    """The module a reference names: a dotted module or a ``.py`` file path.

    Dotted modules are found from the working directory too, like ``python -m``.
    """
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
    module = import_ref(module_ref)
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


def read_snapshot_file(path: str) -> dict[str, Any]:
    """The snapshot document at ``path`` (`SnapshotError`, exit code 7, when it is not one)."""
    from singletable.tooling.migrations.snapshot import read_snapshot

    return read_snapshot(path)


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


def connect(args: argparse.Namespace) -> Connection:
    """The connection `add_connection_options` describes."""
    from singletable.io.connection import Connection

    return Connection(
        endpoint_url=args.endpoint_url, region_name=args.region, max_attempts=args.max_attempts
    )


def add_connection_options(p: argparse.ArgumentParser) -> None:
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
        type=positive_int,
        default=10,
        help="attempts per request (throttling, network errors) before giving up (default 10)",
    )


def require_table(db: Connection, table: str) -> None:
    """Fail with `ServiceError` (exit code 11) unless ``table`` exists at ``db``'s endpoint."""
    # Before the first write: a wrong endpoint, region or table name fails here, with
    # nothing written, rather than at the first batch.
    if not db.table_exists(table):
        raise ServiceError(
            "ResourceNotFoundException",
            f"table {table} does not exist at this endpoint/region; check --endpoint-url/"
            "--region, or create it (singletable synth)",
        )


def fail(command: str, exc: Exception) -> None:
    """Print a failure as one line on stderr (``singletable COMMAND: error: ...``)."""
    # One line: a message that spans lines (a botocore reason, a pydantic error) is joined.
    text = " ".join(str(exc).split())
    print(f"singletable {command}: error: {text}", file=sys.stderr)
