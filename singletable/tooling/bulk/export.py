"""Exports: the items of an entity or a table as JSON Lines that `singletable load` reads back.

Each line is one item: the entity's fields as pydantic writes them (``model_dump_json``,
by alias: Decimals as strings, so no digit is lost; datetimes, UUIDs, enums, sets and
nested models as pydantic reads them back) and the table's entity attribute (``_et``)
naming the entity the way `JsonLines` resolves it (qualified as ``TABLE/NAME@VERSION``
only when the exported model makes the bare name ambiguous). JSON escapes every control
character, and the export also escapes U+0085, U+2028 and U+2029 (line ends to
``str.splitlines``), so a text holding line breaks stays on its line for any reader.

Every line is read back before it is written, with the same `JsonLines` parser a load
uses, and compared with the item: a line that would not load back equal (bytes that are
not UTF-8 under pydantic's default ``ser_json_bytes="utf8"``, a custom serializer that
loses information, a number pydantic would read inexactly) is not written. Such items,
and stored items no entity of the model decodes (no or an unknown entity attribute, a
version the model does not declare, a value the model refuses), are *skipped*: counted
by reason in `ExportResult`, and written as they are stored (DynamoDB JSON, bytes in
base64, as DynamoDB's own export writes them) with the reason to ``rejects`` when it is
given. Uniqueness guard items are the table's bookkeeping, not data: a load writes them
again, so they are neither exported nor counted.

The scan is the operations layer's `Scan`, optionally in parallel segments (one thread
each); lines then come in no particular order, which a load does not need.
"""

from __future__ import annotations

import base64
import json
import re
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

from pydantic import BaseModel

from singletable.errors import EntityTypeError, SingleTableError
from singletable.model.plan import EntityPlan, entity_plan, entity_plans, plan_of
from singletable.model.table import Table
from singletable.model.unique import is_guard_item
from singletable.operations.protocol import Executor
from singletable.operations.scan import Scan, check_segment_count
from singletable.operations.stream import StreamExecutor
from singletable.operations.tables import DescribeTable
from singletable.tooling.bulk.load import MAX_ERRORS, JsonLines, LineError
from singletable.tooling.jobs.progress import Progress, Wording
from singletable.types import Item

#: "1,200 of ~5,000 scanned (24%), 1,198 written, 2 skipped": the total is DynamoDB's
#: approximate item count of the scanned tables.
EXPORT_WORDING = Wording(done="scanned", others=("written", "skipped"), approximate=True)

#: What `export` takes: an entity class (its items), a table (every entity it declares).
Target = Table | type[BaseModel]


class ScanExecutor(Executor, StreamExecutor, Protocol):
    """An executor that runs operations and drives scans (`singletable.Connection`)."""


@dataclass
class ExportResult:
    """What an export read and wrote."""

    #: Items read (every item of the scanned tables, guard items included).
    scanned: int = 0
    written: int = 0
    #: Lines written per entity (its stored name).
    by_entity: dict[str, int] = field(default_factory=dict)
    #: Items skipped per reason (``"unknown entity"``, ``"does not decode"``, ...).
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    #: The first skipped items' messages (up to ``MAX_ERRORS``), each naming the item.
    skipped_examples: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def skipped(self) -> int:
        """Items that could not be exported (see ``skipped_by_reason``)."""
        return sum(self.skipped_by_reason.values())

    @property
    def rate(self) -> float:
        """Items scanned per second."""
        return self.scanned / self.seconds if self.seconds > 0 else 0.0


class _StoredItems(Scan[Item]):
    """A scan that hands out the stored items as they are.

    The export decodes them itself, so that an item no entity decodes is counted and set
    aside instead of ending the scan (or vanishing into ``Page.unknown``).
    """

    def _decode(self, item: Item) -> Any:
        return item


@dataclass(frozen=True)
class _Scope:
    """One table to scan, and the entities to keep (``None``: every entity of the table)."""

    table: Table
    plans: tuple[EntityPlan, ...] | None


class _Skip(Exception):
    """An item that is not exported: ``reason`` is the counted kind, the message the detail."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def _scopes(target: Target | Sequence[Target]) -> list[_Scope]:
    """One scope per table: each table is scanned once, whatever the target names in it."""
    targets = list(target) if isinstance(target, Sequence) else [target]
    tables: dict[str, Table] = {}
    kept: dict[str, list[EntityPlan] | None] = {}
    for one in targets:
        if isinstance(one, Table):
            tables[one.name] = one
            kept[one.name] = None
        elif isinstance(one, type) and issubclass(one, BaseModel):
            plan = plan_of(one)
            tables[plan.table.name] = plan.table
            plans = kept.setdefault(plan.table.name, [])
            if plans is not None and plan not in plans:
                plans.append(plan)
        else:
            raise EntityTypeError(f"export takes entity classes and tables, not {one!r}")
    return [
        _Scope(table, None if kept[name] is None else tuple(kept[name] or ()))
        for name, table in tables.items()
    ]


def _stored_name(reader: JsonLines, plan: EntityPlan) -> str:
    """The shortest name `JsonLines` resolves to ``plan`` in the exported model."""
    qualified = (
        plan.name,
        f"{plan.name}@{plan.version}",
        f"{plan.table.name}/{plan.name}",
        f"{plan.table.name}/{plan.name}@{plan.version}",
    )
    return next(name for name in qualified if reader.resolve(name) is plan)


def _dynamodb_json(value: Any) -> Any:
    """A low-level item as JSON can hold it: bytes in base64, as DynamoDB's export writes."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {k: _dynamodb_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_dynamodb_json(v) for v in value]
    return value


# JSON escapes the control characters but not these, which str.splitlines() (and other
# readers) take for line ends; outside strings JSON has none of them, so escaping them is
# always equivalent and keeps one object per line for every reader.
_LINE_BREAKS = re.compile("[\x85\u2028\u2029]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _one_line(json_text: str) -> str:
    """``json_text`` with the line ends JSON leaves raw escaped."""
    return _LINE_BREAKS.sub(_escaped, json_text)


def _differing(a: BaseModel, b: BaseModel) -> list[str]:
    return [name for name in type(a).model_fields if getattr(a, name) != getattr(b, name)]


class _Export:
    """One export's state: the lines' entity names, the counts, the output (thread-safe)."""

    def __init__(
        self,
        scopes: list[_Scope],
        model: Sequence[Table],
        out: TextIO,
        rejects: TextIO | None,
        progress: Progress,
    ) -> None:
        self.out = out
        self.rejects = rejects
        self.progress = progress
        tables = list({t.name: t for t in [*model, *(s.table for s in scopes)]}.values())
        self.reader = JsonLines(tables)
        self.attribute = {t.name: t.entity_attribute for t in tables}
        # The JSON text each line starts with: '{"_et":"Order",' (the fields follow).
        self.prefixes = {
            id(plan): "{"
            + json.dumps(plan.table.entity_attribute)
            + ":"
            + json.dumps(_stored_name(self.reader, plan), ensure_ascii=False)
            + ","
            for table in tables
            for plan in entity_plans(table)
        }
        self.result = ExportResult()
        self.lock = threading.Lock()

    def plan_of(self, scope: _Scope, item: Item) -> EntityPlan | None:
        """The entity ``item`` is exported as; ``None``: not this scope's (another entity's).

        Raises:
            _Skip: The item is the scope's but no entity of the model decodes it.
        """
        table = scope.table
        name = item.get(table.entity_attribute, {}).get("S")
        version = item.get(table.version_attribute, {}).get("N")
        if scope.plans is not None:
            ours = [p for p in scope.plans if p.name == name]
            if not ours:
                return None
            found = next((p for p in ours if version is None or version == str(p.version)), None)
            if found is None:
                exported = ", ".join(sorted(str(p.version) for p in ours))
                raise _Skip(
                    "other version",
                    f"stored by version {version} of entity {name}, not {exported}",
                )
            return found
        if name is None:
            raise _Skip(
                "unknown entity", f"no entity attribute {table.entity_attribute!r} (string)"
            )
        plan = entity_plan(table, name, int(version)) if version and version.isdigit() else None
        if plan is None:
            raise _Skip(
                "unknown entity",
                f"no entity of table {table.name} is {name!r} at version {version or '(none)'}",
            )
        return plan

    def line(self, plan: EntityPlan, item: Item) -> str:
        """The JSON line of ``item``, read back and checked equal.

        Raises:
            _Skip: The item does not decode, or its line would not load back equal.
        """
        try:
            obj = plan.from_item(item)
        except (SingleTableError, ValueError) as exc:
            raise _Skip("does not decode", f"{plan.label}: {exc}") from None
        try:
            body = obj.model_dump_json(by_alias=True)
        except ValueError as exc:  # pydantic_core.PydanticSerializationError
            raise _Skip("not JSON", f"{plan.label}: {exc}") from None
        prefix = self.prefixes[id(plan)]
        line = prefix + body[1:] if body != "{}" else prefix[:-1] + "}"
        line = _one_line(line)
        try:
            again = self.reader.parse(line)
        except LineError as exc:
            raise _Skip("would not load back", str(exc)) from None
        if again != obj:
            fields = ", ".join(_differing(obj, again)) or "(private attributes)"
            raise _Skip(
                "would not load back",
                f"{plan.label}: field(s) {fields} would load back as other values",
            )
        return line

    def take(self, scope: _Scope, item: Item) -> None:
        """Export one stored item, or count it as skipped."""
        written = skipped = 0
        try:
            plan = None if is_guard_item(scope.table, item) else self.plan_of(scope, item)
            text = None if plan is None else self.line(plan, item)
        except _Skip as skip:
            skipped, text = 1, None
            self.skip(scope.table, item, skip)
        with self.lock:
            self.result.scanned += 1
            if text is not None and plan is not None:
                written = 1
                self.out.write(text + "\n")
                self.result.written += 1
                self.result.by_entity[plan.name] = self.result.by_entity.get(plan.name, 0) + 1
        self.progress.update(scanned=1, written=written, skipped=skipped)

    def skip(self, table: Table, item: Item, skip: _Skip) -> None:
        key = {a: item[a] for a in (table.pk, table.sk) if a in item}
        detail = f"item {json.dumps(_dynamodb_json(key), ensure_ascii=False)}: {skip}"
        with self.lock:
            result = self.result
            result.skipped_by_reason[skip.reason] = result.skipped_by_reason.get(skip.reason, 0) + 1
            if len(result.skipped_examples) < MAX_ERRORS:
                result.skipped_examples.append(detail)
            if self.rejects is not None:
                record = {"table": table.name, "reason": str(skip), "item": _dynamodb_json(item)}
                self.rejects.write(_one_line(json.dumps(record, ensure_ascii=False)) + "\n")

    def run(self, db: ScanExecutor, scope: _Scope, scan: Scan[Item]) -> None:
        for item in scan.iter(db):
            self.take(scope, item)


def _segments(scan: Scan[Item], segments: int) -> Iterator[Scan[Item]]:
    if segments == 1:
        yield scan
        return
    for segment in range(segments):
        yield scan.segment(segment, segments)


def export(
    db: ScanExecutor,
    target: Target | Sequence[Target],
    out: TextIO,
    *,
    rejects: TextIO | None = None,
    model: Sequence[Table] = (),
    segments: int = 1,
    progress_out: TextIO | None = None,
    progress_bar: bool | None = None,
    progress_interval: float = 1.0,
    label: str = "export",
) -> ExportResult:
    """Write every item of ``target`` to ``out`` as JSON Lines that `load` reads back.

    Args:
        db: The executor (`singletable.Connection`).
        target: An entity class (its items), a `Table` (the items of every entity it
            declares), or a list of them.
        out: Where the lines go (a text stream; UTF-8 when it is a file).
        rejects: Where skipped items go, one JSON object each: ``table``, ``reason`` and
            the ``item`` as stored (DynamoDB JSON, bytes in base64); default: only counted.
        model: The tables the lines will be loaded with, when more than the target's: an
            entity name that is ambiguous among them is written qualified
            (``TABLE/NAME``, ``NAME@VERSION``), as `load` needs it.
        segments: Parallel scan segments (threads) per table.
        progress_out: Where progress goes (default: stderr).
        progress_bar: Force (True) or suppress (False) the progress bar; default: a bar
            when ``progress_out`` is a terminal and tqdm is installed, plain lines otherwise.
        progress_interval: Seconds between plain progress lines.
        label: What the progress display calls the export.

    Returns:
        The counts: items scanned, lines written per entity, items skipped per reason.

    Raises:
        ServiceError: A table does not exist (before anything is written), or a scan
            request failed (the lines written so far stay written).
        RequestLimitError: ``segments`` is not 1 to 1,000,000.
        EntityTypeError: ``target`` holds something other than entity classes and tables.
    """
    check_segment_count(segments)
    scopes = _scopes(target)
    # Describing each table first also fails on a missing one before anything is written.
    counts: list[int | None] = [DescribeTable(s.table).run(db).get("ItemCount") for s in scopes]
    total = sum(c for c in counts if c is not None) if None not in counts else None
    progress = Progress(
        label,
        total,
        progress_out or sys.stderr,
        interval=progress_interval,
        bar=progress_bar,
        wording=EXPORT_WORDING,
    )
    run = _Export(scopes, model, out, rejects, progress)
    work = [
        (scope, scan) for scope in scopes for scan in _segments(_StoredItems(scope.table), segments)
    ]
    started = time.monotonic()
    try:
        if segments == 1:
            for scope, scan in work:
                run.run(db, scope, scan)
        else:
            with ThreadPoolExecutor(max_workers=segments) as pool:
                # The first failure is raised, once every segment has ended.
                list(pool.map(lambda job: run.run(db, *job), work))
    finally:
        progress.close()
        run.result.seconds = time.monotonic() - started
    return run.result
