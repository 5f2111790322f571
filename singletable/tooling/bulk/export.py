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

The scan is the operations layer's `Scan`, optionally in parallel segments; lines then
come in no particular order, which a load does not need. Each segment of each table is a
unit of a job (`scan_units`, `ExportWork`): `export` runs them in this process, writing
to one stream, and `EXPORT_KIND` lets the job engine's workers run them anywhere, each
writing its own part file.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TextIO

from pydantic import BaseModel

from singletable.errors import EntityTypeError, JobError, SingleTableError, with_context
from singletable.model.jobs import is_reserved_item
from singletable.model.plan import EntityPlan, entity_plan, entity_plans, plan_of
from singletable.model.table import Table
from singletable.operations.protocol import Executor
from singletable.operations.scan import Scan, check_segment_count
from singletable.operations.stream import StreamExecutor
from singletable.operations.tables import DescribeTable
from singletable.tooling.bulk.lines import MAX_ERRORS, JsonLines, LineError
from singletable.tooling.bulk.load import StoredItems
from singletable.tooling.bulk.load_units import model_tables
from singletable.tooling.cost.capacity import estimate_capacity
from singletable.tooling.jobs.local import run_units
from singletable.tooling.jobs.progress import Progress, Wording
from singletable.tooling.jobs.units import JsonValue, UnitContext, WorkUnit
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

    def __init__(self, scopes: list[_Scope], model: Sequence[Table], progress: Progress) -> None:
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
            raise _Skip("does not decode", with_context(plan.label, exc)) from None
        try:
            body = obj.model_dump_json(by_alias=True)
        except ValueError as exc:  # pydantic_core.PydanticSerializationError
            raise _Skip("not JSON", with_context(plan.label, exc)) from None
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

    def take(self, scope: _Scope, item: Item, sink: _Sink) -> tuple[int, int]:
        """Export one stored item to ``sink``, or count it as skipped: (written, skipped)."""
        written = skipped = 0
        try:
            plan = None if is_reserved_item(scope.table, item) else self.plan_of(scope, item)
            text = None if plan is None else self.line(plan, item)
        except _Skip as skip:
            skipped, text = 1, None
            self.skip(scope.table, item, skip, sink)
        with self.lock:
            self.result.scanned += 1
            if text is not None and plan is not None:
                written = 1
                sink.lines.write(text + "\n")
                self.result.written += 1
                self.result.by_entity[plan.name] = self.result.by_entity.get(plan.name, 0) + 1
        self.progress.update(scanned=1, written=written, skipped=skipped)
        return written, skipped

    def skip(self, table: Table, item: Item, skip: _Skip, sink: _Sink) -> None:
        key = {a: item[a] for a in (table.pk, table.sk) if a in item}
        detail = f"item {json.dumps(_dynamodb_json(key), ensure_ascii=False)}: {skip}"
        with self.lock:
            result = self.result
            result.skipped_by_reason[skip.reason] = result.skipped_by_reason.get(skip.reason, 0) + 1
            if len(result.skipped_examples) < MAX_ERRORS:
                result.skipped_examples.append(detail)
            if sink.rejects is not None:
                record = {"table": table.name, "reason": str(skip), "item": _dynamodb_json(item)}
                sink.rejects.write(_one_line(json.dumps(record, ensure_ascii=False)) + "\n")


class _Sink:
    """Where a unit's lines and rejected items go."""

    def __init__(self, lines: TextIO, rejects: TextIO | None = None) -> None:
        self.lines = lines
        self.rejects = rejects

    def complete(self) -> None:
        """The unit reached its end (before it is reported done)."""
        self.close()

    def close(self) -> None:
        """The unit is over: flush what it wrote (a shared stream stays open)."""
        self.lines.flush()
        if self.rejects is not None:
            self.rejects.flush()


def scan_units(tables: Sequence[Table], segments: int, *, job_id: str = "export") -> list[WorkUnit]:
    """The units of an export: one per scan segment of each table.

    Spec: ``{"table": name, "segment": i, "segments": n}``.
    """
    check_segment_count(segments)
    spans = [
        {"table": table.name, "segment": segment, "segments": segments}
        for table in tables
        for segment in range(segments)
    ]
    return [WorkUnit(job_id, "export", index, len(spans), span) for index, span in enumerate(spans)]


class ExportWork:
    """The work of an export's units (`UnitWork`): one scan segment, page by page.

    A unit resumes the segment's scan from its checkpoint (``{"cursor": ...}``, the
    library's own scan cursor, plus what ``sink`` needs to resume its output) and, for
    each page, writes the page's lines, calls ``ctx.spend`` with the page's read
    capacity (the estimator's figure, known once the page is read: the budget's debt
    holds the next page back) and saves the checkpoint with the page's counts
    (``scanned``, ``written``, ``skipped``).

    Args:
        db: The executor.
        export: The export's state (entities, the read-back parser, the counts).
        scopes: The scope of each table, by name.
        sink: The output of a unit, from the unit and its checkpoint (``None``: a fresh
            start); returns the sink and a function that gives the checkpoint's part for
            the output written so far.
        page_size: Items per scan request (``None``: DynamoDB's 1 MB pages).
    """

    def __init__(
        self,
        db: ScanExecutor,
        export: _Export,
        scopes: Mapping[str, _Scope],
        sink: Callable[[WorkUnit, Mapping[str, JsonValue] | None], tuple[_Sink, _Mark]],
        *,
        page_size: int | None = None,
    ) -> None:
        self.db = db
        self.export = export
        self.scopes = scopes
        self.sink = sink
        self.page_size = page_size

    def __call__(self, unit: WorkUnit, ctx: UnitContext) -> None:
        """Run ``unit`` from its checkpoint to the end of its segment."""
        scope = self.scopes[str(unit.spec["table"])]
        scan: Scan[Item] = StoredItems(scope.table)
        segments = int(unit.spec["segments"])
        if segments > 1:
            scan = scan.segment(int(unit.spec["segment"]), segments)
        if self.page_size is not None:
            scan = scan.page_size(self.page_size)
        checkpoint = ctx.checkpoint
        cursor = None if checkpoint is None else checkpoint.get("cursor")
        sink, mark = self.sink(unit, checkpoint)
        try:
            for page in scan.pages(self.db, None if cursor is None else str(cursor)):
                counts = {"scanned": len(page.items), "written": 0, "skipped": 0}
                for item in page.items:
                    written, skipped = self.export.take(scope, item, sink)
                    counts["written"] += written
                    counts["skipped"] += skipped
                ctx.spend(rcu=estimate_capacity(scan, read=page.items).rcu)
                if page.cursor is None:
                    sink.complete()
                    ctx.finish(counts)
                    return
                ctx.save({"cursor": page.cursor, **mark()}, counts)
        finally:
            sink.close()


#: What a sink adds to a unit's checkpoint for the output written so far.
_Mark = Callable[[], dict[str, JsonValue]]


def _no_mark() -> dict[str, JsonValue]:
    return {}


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
    run = _Export(scopes, model, progress)
    shared = _Sink(out, rejects)  # every unit writes here, a line at a time (under a lock)
    work = ExportWork(
        db, run, {s.table.name: s for s in scopes}, lambda unit, _: (shared, _no_mark)
    )
    started = time.monotonic()
    try:
        # One unit per segment of each table, `segments` at a time; the first failure is
        # raised once the others have stopped at their next page.
        run_units(scan_units([s.table for s in scopes], segments), work, workers=segments)
    finally:
        progress.close()
        run.result.seconds = time.monotonic() - started
    return run.result


# -- exports as jobs ----------------------------------------------------------------------


def part_name(index: int) -> str:
    """The file an export job's unit ``index`` writes its lines to: ``part-00003.jsonl``."""
    return f"part-{index:05d}.jsonl"


def rejects_name(index: int) -> str:
    """The file an export job's unit writes its skipped items to: ``rejects-00003.jsonl``."""
    return f"rejects-{index:05d}.jsonl"


class _PartFiles(_Sink):
    """A unit's output files, written by one holder of the unit under names of its own.

    Each holder writes ``part-0000i.<holder>.partial`` (and the same for rejects). A
    holder that takes the unit over starts its files with the bytes the last checkpoint
    recorded of the previous holder's files, then goes on from the checkpoint's cursor:
    so its files hold each item of the segment once, whatever the previous holder wrote
    after its checkpoint, and a holder that lost the unit without knowing (a paused
    worker that wakes up) writes only to files no one reads. A holder that reaches the
    end of the segment renames its files to ``part-0000i.jsonl`` / ``rejects-0000i.jsonl``
    before it reports the unit done; any file so renamed is a whole segment.
    """

    def __init__(
        self, directory: Path, index: int, checkpoint: Mapping[str, JsonValue] | None
    ) -> None:
        self.directory = directory
        self.index = index
        holder = uuid.uuid4().hex[:12]
        given = checkpoint or {}
        self._names = [
            f"{part_name(index)}.{holder}.partial",
            f"{rejects_name(index)}.{holder}.partial",
        ]
        self._files: list[BinaryIO] = []
        for own, final, earlier, size in (
            (self._names[0], part_name(index), given.get("file"), given.get("bytes", 0)),
            (
                self._names[1],
                rejects_name(index),
                given.get("rejects_file"),
                given.get("rejects_bytes", 0),
            ),
        ):
            stream = open(directory / own, "w+b")  # noqa: SIM115 - closed by close()
            if earlier is not None:
                self._copy_prefix(directory, str(earlier), final, int(size), stream)
            self._files.append(stream)
        lines, rejects = (
            io.TextIOWrapper(f, encoding="utf-8", newline="\n", write_through=True)
            for f in self._files
        )
        super().__init__(lines, rejects)

    @staticmethod
    def _copy_prefix(directory: Path, earlier: str, final: str, size: int, into: BinaryIO) -> None:
        """The first ``size`` bytes of the previous holder's file into this holder's."""
        source = directory / earlier
        if not source.exists():
            # The previous holder reached the end and renamed its file after all (and then
            # lost the unit): the whole segment begins with the same bytes.
            source = directory / final
        with open(source, "rb") as previous:
            into.write(previous.read(size))
        if into.tell() != size:
            raise JobError(
                f"export unit {final}: {source.name} holds {into.tell():,} bytes, fewer than "
                f"the {size:,} its checkpoint recorded"
            )

    def mark(self) -> dict[str, JsonValue]:
        """The output's part of the checkpoint: this holder's files and their sizes."""
        self.lines.flush()
        assert self.rejects is not None
        self.rejects.flush()
        lines, rejects = self._files
        return {
            "file": self._names[0],
            "bytes": lines.tell(),
            "rejects_file": self._names[1],
            "rejects_bytes": rejects.tell(),
        }

    def complete(self) -> None:
        """The segment is whole: the files take their final names."""
        self.close()
        for own, final in zip(
            self._names, (part_name(self.index), rejects_name(self.index)), strict=True
        ):
            os.replace(self.directory / own, self.directory / final)

    def close(self) -> None:
        """Flush and close both files."""
        self.lines.close()
        assert self.rejects is not None
        self.rejects.close()


@dataclass(frozen=True)
class ExportKind:
    """The ``export`` `JobKind`: scan segments, each writing its own part file.

    Spec (JSON): ``model`` (import path of the tables, as `model_tables` reads it),
    ``out`` (a directory every worker can write: a shared volume), and optionally
    ``entity`` (export this entity only, named as `JsonLines` resolves it), ``segments``
    (per table, default 4), ``page_size``, ``job_id``.

    Unit ``i`` writes ``part-0000i.jsonl`` (and ``rejects-0000i.jsonl``, the items it
    skipped) in ``out``, under a name of its holder's until the segment is whole (see
    `_PartFiles`). Each part is valid JSON Lines, and so is their concatenation in any
    order (``cat part-*.jsonl``): a load reads the parts one by one or joined. The export
    is complete when the job is done.
    """

    name: str = "export"

    def units(self, spec: Mapping[str, JsonValue]) -> list[WorkUnit]:
        """One unit per scan segment of each table exported."""
        scopes = _spec_scopes(spec)
        job_id = str(spec.get("job_id", "export"))
        return scan_units([s.table for s in scopes], int(spec.get("segments", 4)), job_id=job_id)

    def work(self, spec: Mapping[str, JsonValue], executor: Any) -> ExportWork:
        """The work of the job's units, scanning through ``executor``."""
        scopes = _spec_scopes(spec)
        directory = Path(str(spec["out"]))
        directory.mkdir(parents=True, exist_ok=True)
        progress = Progress("export", None, io.StringIO(), bar=False)
        run = _Export(scopes, model_tables(str(spec["model"])), progress)

        def sink(unit: WorkUnit, checkpoint: Mapping[str, JsonValue] | None) -> tuple[_Sink, _Mark]:
            files = _PartFiles(directory, unit.index, checkpoint)
            return files, files.mark

        page_size = spec.get("page_size")
        return ExportWork(
            executor,
            run,
            {s.table.name: s for s in scopes},
            sink,
            page_size=None if page_size is None else int(page_size),
        )


def _spec_scopes(spec: Mapping[str, JsonValue]) -> list[_Scope]:
    tables = model_tables(str(spec["model"]))
    entity = spec.get("entity")
    if entity is None:
        return _scopes(tables)
    found = JsonLines(tables).resolve(str(entity))
    if isinstance(found, str):
        raise EntityTypeError(found)
    return _scopes(found.model)


#: The ``export`` job kind, for the job engine's registry.
EXPORT_KIND = ExportKind()
