"""A JSON Lines file loaded as units of a job.

`file_units` cuts the file into chunks of whole lines; `LoadWork` writes one chunk, page
by page, checkpointed after each page, as `singletable.tooling.bulk.load.load` writes (the
same `Loading`). `load_file` runs the units in this process, and `LOAD_KIND` lets the job
engine's workers run them anywhere.
"""

from __future__ import annotations

import importlib
import io
import os
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from pydantic import BaseModel

from singletable.errors import JobError, RequestLimitError
from singletable.model.plan import plan_of
from singletable.model.table import Table
from singletable.operations.batch import MAX_BATCH_WRITE
from singletable.operations.protocol import Executor
from singletable.tooling.bulk.lines import JsonLines, LineError, check
from singletable.tooling.bulk.load import (
    EmptyTables,
    Loading,
    LoadResult,
    check_batch_size,
    load_progress,
)
from singletable.tooling.jobs.local import run_units
from singletable.tooling.jobs.progress import Progress
from singletable.tooling.jobs.units import JsonValue, UnitContext, WorkUnit

#: Bytes of input per unit of a load: a chunk of whole lines that one worker writes.
CHUNK_BYTES = 8 * 1024 * 1024

#: Item lines per page of a unit: written (the batches flushed), then checkpointed.
PAGE_LINES = 100

_BOM = b"\xef\xbb\xbf"


def model_tables(ref: str) -> list[Table]:
    """The tables an import path names, as a job's spec holds it.

    ``"pkg.mod:attr"``: a `Table`, an entity class (its table) or a list of tables;
    ``"pkg.mod"``: every `Table` the module defines.

    Raises:
        JobError: The module does not import, or the path names no model.
    """
    module_name, _, attribute = ref.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
        for part in attribute.split(".") if attribute else ():
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise JobError(f"model {ref!r}: {type(exc).__name__}: {exc}") from None
    if not attribute:
        tables = {id(v): v for v in vars(value).values() if isinstance(v, Table)}
        if not tables:
            raise JobError(f"module {module_name!r} defines no Table; name one as MODULE:ATTR")
        return list(tables.values())
    if isinstance(value, Table):
        return [value]
    if isinstance(value, type) and issubclass(value, BaseModel):
        return [plan_of(value).table]
    if isinstance(value, list | tuple) and value and all(isinstance(v, Table) for v in value):
        return list(value)
    raise JobError(f"{ref} is a {type(value).__name__}, not a Table, entity class or tables")


def local_path(ref: str) -> str:
    """The file a job's spec names: a path, or a ``file://`` URL (every worker reads it).

    Raises:
        JobError: Another kind of URL (the file must be readable by every worker as a
            file: a shared volume).
    """
    parsed = urllib.parse.urlparse(ref)
    if parsed.scheme == "file":
        return urllib.parse.unquote(parsed.path)
    if parsed.scheme and len(parsed.scheme) > 1:  # "C:\\..." is a path
        raise JobError(
            f"cannot read {ref!r}: a load job reads a path or a file:// URL that every "
            "worker can open (copy the file to a shared volume first)"
        )
    return ref


def file_units(
    path: str, *, chunk_bytes: int = CHUNK_BYTES, job_id: str = "load"
) -> list[WorkUnit]:
    """The units of a load of ``path``: chunks of about ``chunk_bytes`` of whole lines.

    Each chunk ends where a line ends (the line that crosses a boundary belongs to the
    chunk it starts in), so a unit reads from its ``start`` to its ``end`` byte and no
    line is split or read twice. ``line`` is the number of its first line (1-based), for
    messages. Reads the file once, ``chunk_bytes`` at a time.
    """
    if chunk_bytes < 1:
        raise RequestLimitError(f"chunk_bytes must be at least 1, got {chunk_bytes}")
    size = os.path.getsize(path)
    spans: list[dict[str, JsonValue]] = []
    with open(path, "rb") as stream:
        start, line = 0, 1
        while start < size:
            chunk = stream.read(chunk_bytes)
            if not chunk.endswith(b"\n"):
                chunk += stream.readline()  # the rest of the line that crosses the boundary
            spans.append({"start": start, "end": start + len(chunk), "line": line})
            start += len(chunk)
            line += chunk.count(b"\n")
    return [WorkUnit(job_id, "load", index, len(spans), span) for index, span in enumerate(spans)]


class LoadWork:
    """The work of a load's units (`UnitWork`): the lines of one chunk, page by page.

    A unit starts at its checkpoint (``{"offset": byte, "line": number}``, where the
    last page it saved ended) or at its chunk's start; it reads up to ``page_lines`` item
    lines, writes them as `load` does (batches, single guarded puts, versions kept),
    and saves the checkpoint with the page's count (``written``). Every write is
    conditional or idempotent, so a page repeated after a takeover changes nothing: a
    batch puts the same items again, a versioned put finds its own version stored.
    Before each write it calls ``ctx.spend`` with the estimator's figure.

    Args:
        db: The executor.
        path: The JSON Lines file (every worker of a job reads the same file).
        reader: The parser of its lines (the model, the entity).
        first_import: As `load`'s; with ``empty`` the tables are checked when their first
            item comes (``None``: not checked, as for a job's units, whose tables are
            checked by whoever starts the job).
        batch_size: Items per `BatchWrite`.
        page_lines: Item lines per page (between two checkpoints).
        progress: The display the units share (``None``: a silent one).
        parallel: Units run beside each other: a unit that stops names its own lines
            as written, not every line before it.
    """

    def __init__(
        self,
        db: Executor,
        path: str,
        reader: JsonLines,
        *,
        first_import: bool = False,
        empty: EmptyTables | None = None,
        batch_size: int = MAX_BATCH_WRITE,
        page_lines: int = PAGE_LINES,
        progress: Progress | None = None,
        parallel: bool = False,
    ) -> None:
        self.db = db
        self.path = path
        self.reader = reader
        self.first_import = first_import
        self.empty = empty
        self.batch_size = batch_size
        self.page_lines = page_lines
        self.progress = progress or Progress("load", None, _Discard(), bar=False)
        self.parallel = parallel
        #: The counts of every unit run so far (summed as each ends or stops).
        self.result = LoadResult()
        self._lock = threading.Lock()

    def __call__(self, unit: WorkUnit, ctx: UnitContext) -> None:
        """Run ``unit`` from its checkpoint to its end."""
        spec, checkpoint = unit.spec, ctx.checkpoint or {}
        offset = int(checkpoint.get("offset", spec["start"]))
        line = int(checkpoint.get("line", spec["line"]))
        end = int(spec["end"])
        run = Loading(
            self.db,
            self.progress,
            _line_named,
            self.batch_size,
            first_import=self.first_import,
            empty=self.empty,
            spend=ctx.spend,
            since=line if self.parallel else None,
        )
        # Messages count what earlier units wrote too (exact when units run in order).
        run.before = self.result.written
        written = 0
        started = time.monotonic()
        try:
            with open(self.path, "rb") as stream:
                stream.seek(offset)
                while offset < end:
                    taken = 0
                    while offset < end and taken < self.page_lines:
                        raw = stream.readline()
                        offset += len(raw)
                        number, line = line, line + 1
                        if number == 1 and raw.startswith(_BOM):
                            raw = raw[len(_BOM) :]
                        if not raw.strip():
                            continue
                        try:
                            obj = self.reader.parse(raw)
                        except LineError as exc:
                            exc.line = number
                            run.stop(number, exc, [])
                        run.take(number, obj)
                        taken += 1
                    run.flush()
                    page, written = run.result.written - written, run.result.written
                    if offset < end:
                        ctx.save({"offset": offset, "line": line}, {"written": page})
                    else:
                        ctx.finish({"written": page})
        finally:
            self._add(run.result, time.monotonic() - started)

    def _add(self, result: LoadResult, seconds: float) -> None:
        with self._lock:
            total = self.result
            total.written += result.written
            total.calls += result.calls
            total.retries += result.retries
            total.seconds += seconds
            for entity, n in result.by_entity.items():
                total.by_entity[entity] = total.by_entity.get(entity, 0) + n


def load_file(
    db: Executor,
    path: str,
    reader: JsonLines,
    *,
    total: int | None = None,
    first_import: bool = False,
    workers: int = 1,
    chunk_bytes: int = CHUNK_BYTES,
    page_lines: int = PAGE_LINES,
    batch_size: int = MAX_BATCH_WRITE,
    max_wcu: float | None = None,
    out: TextIO | None = None,
    progress_bar: bool | None = None,
    progress_interval: float = 1.0,
    label: str | None = None,
) -> LoadResult:
    """Load a JSON Lines file as units (`file_units`) run in this process.

    The same units and work (`LoadWork`) a load job's workers run, here on ``workers``
    threads with in-memory checkpoints (`singletable.tooling.jobs.local.run_units`).
    With one worker the units run in file order, and a load that stops has written every
    item before the line it names, as `load` says. Lines are read as `JsonLines` reads
    them; run `check` over the file first to list every invalid line and find keys
    given twice across chunks (each unit refuses keys given twice within its chunk).

    Args:
        db: The executor.
        path: The JSON Lines file.
        reader: The parser of its lines (the model, the entity).
        total: Item lines in the file, for the percentage and ETA.
        first_import: As `load`'s: versioned entities in batch writes, each table
            checked empty when its first item comes (before any unit writes to it).
        workers: Units run at once (threads).
        chunk_bytes: Bytes of input per unit.
        page_lines: Item lines per page, between two checkpoints.
        batch_size: Items per `BatchWrite` (1 to 25).
        max_wcu: Write capacity per second for the whole load (``None``: unlimited).
        out: Where progress goes (default: stderr).
        progress_bar: As `load`'s.
        progress_interval: Seconds between plain progress lines.
        label: What the progress display calls the load (default ``load PATH``).

    Raises:
        LoadError: A unit stopped (see `load`); lines are named ``line N``, and with
            more than one worker the message says which lines of its unit were written.
    """
    check_batch_size(batch_size)
    units = file_units(path, chunk_bytes=chunk_bytes)
    progress = load_progress(label or f"load {path}", total, out, progress_bar, progress_interval)
    work = LoadWork(
        db,
        path,
        reader,
        first_import=first_import,
        empty=EmptyTables() if first_import else None,
        batch_size=batch_size,
        page_lines=page_lines,
        progress=progress,
        parallel=workers > 1,
    )
    started = time.monotonic()
    try:
        run_units(units, work, workers=workers, max_wcu=max_wcu)
    finally:
        progress.close()
        work.result.seconds = time.monotonic() - started
    return work.result


@dataclass(frozen=True)
class LoadKind:
    """The ``load`` `JobKind`: a JSON Lines file in chunks, rebuilt anywhere from its spec.

    Spec (JSON): ``model`` (import path of the tables, ``"pkg.mod:attr"`` or
    ``"pkg.mod"``, see `model_tables`), ``file`` (a path or ``file://`` URL every worker
    can read), and optionally ``entity``, ``first_import``, ``chunk_bytes``,
    ``page_lines``, ``batch_size``, ``job_id``.

    Planning (`units`) reads the whole file once: every line is validated and keys
    given twice are found (`check`), so a job never starts on a file a load would refuse
    half-way. A first import's emptiness check needs a connection, which planning does
    not have: whoever starts the job checks the tables (`require_empty`) first.
    """

    name: str = "load"

    def units(self, spec: Mapping[str, JsonValue]) -> list[WorkUnit]:
        """The file's chunks, once every line is known to be valid."""
        path = local_path(str(spec["file"]))
        with open(path, "rb") as stream:
            report = check(_spec_reader(spec), stream)
        if report.error_count:
            first = report.errors[0]
            raise LineError(
                f"{report.error_count:,} invalid line(s) in {path}, nothing planned; the "
                f"first: line {first.line}: {first}",
                line=first.line,
            )
        chunk_bytes = int(spec.get("chunk_bytes", CHUNK_BYTES))
        return file_units(path, chunk_bytes=chunk_bytes, job_id=str(spec.get("job_id", "load")))

    def work(self, spec: Mapping[str, JsonValue], executor: Any) -> LoadWork:
        """The work of the job's units, writing through ``executor``."""
        return LoadWork(
            executor,
            local_path(str(spec["file"])),
            _spec_reader(spec),
            first_import=bool(spec.get("first_import", False)),
            batch_size=int(spec.get("batch_size", MAX_BATCH_WRITE)),
            page_lines=int(spec.get("page_lines", PAGE_LINES)),
            parallel=True,
        )


def _spec_reader(spec: Mapping[str, JsonValue]) -> JsonLines:
    entity = spec.get("entity")
    return JsonLines(
        model_tables(str(spec["model"])), entity=None if entity is None else str(entity)
    )


#: The ``load`` job kind, for the job engine's registry.
LOAD_KIND = LoadKind()


def _line_named(number: int) -> str:
    return f"line {number}"


class _Discard(io.StringIO):
    """A stream that keeps nothing (the progress of units no one watches)."""

    def write(self, text: str) -> int:
        return len(text)
