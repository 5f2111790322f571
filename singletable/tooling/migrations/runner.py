"""The migration runner: applies what a `MigrationPlan` asks of a live table.

The work, in order:

* **Table-level steps** (`singletable.tooling.migrations.indexes`): tables created, GSIs
  created, deleted or rebuilt, each waited for.
* **Item work** (`singletable.tooling.migrations.work`): each table with items to rewrite
  or guards to backfill is read *once*, by a parallel Scan split into units (one per
  segment); every item is routed by its stored identifier to its entity's rewrite
  (`singletable.tooling.migrations.rewrite`): decoded with the new plan (or converted by a
  user transform), written as the new model writes it, conditional on being unchanged
  since it was read, its uniqueness guards moved or claimed in the same transaction. The
  units run on threads in this process (`singletable.tooling.jobs.local.run_units`), each
  saving its last evaluated key after every page to a checkpoint file, so an interrupted
  run resumes; or, with ``job=``, as a job of the job engine
  (`singletable.tooling.migrations.jobrun`): fenced leases in the table, worker
  processes, any machine joining.
* **TTL switches**, once every item carries the new TTL attribute.

Requests go through the executor's ``execute`` as operations, so any executor with the
synchronous interface runs a migration. Every write's capacity is estimated by
`singletable.tooling.cost.capacity` before it is sent (a dry run reports the sum for every
step: rewrites, key moves, guard backfills, index backfills).

A change the planner flags ``needs_transform`` is refused unless a *transform* is
supplied. Table migrations (key schema or LSI changes) are refused: they need a new table.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from singletable.errors import MigrationError
from singletable.io.work_spans import task_span
from singletable.operations.protocol import AsyncExecutor, Executor, Operation
from singletable.operations.scan import check_segment_count
from singletable.tooling.jobs.local import run_units
from singletable.tooling.jobs.progress import Counts, Progress, Wording
from singletable.tooling.jobs.units import JsonValue, UnitContext, WorkUnit
from singletable.tooling.migrations.backfill import UniqueBackfillReport
from singletable.tooling.migrations.checkpoint import Checkpoint, Saving
from singletable.tooling.migrations.indexes import TTL_LIMIT_NOTE, TableSteps
from singletable.tooling.migrations.jobrun import MigrationJob, migration_spec, run_as_job
from singletable.tooling.migrations.planner import Change, ChangeClass, MigrationPlan, plan_changes
from singletable.tooling.migrations.rewrite import Transform, split_id
from singletable.tooling.migrations.snapshot import Model, dumps, snapshot_json, tables_of
from singletable.tooling.migrations.work import (
    MILLI,
    Findings,
    MigrationWork,
    Transforms,
    build_routes,
    created_indexes,
    progress_figures,
    transform_for,
)

__all__ = [
    "TTL_LIMIT_NOTE",
    "MigrationJob",
    "MigrationReport",
    "ScanTotals",
    "RewriteStats",
    "Transform",
    "Transforms",
    "migrate",
    "migrate_async",
]

R = TypeVar("R")


#: Each step of a migration, at INFO, with structured ``extra`` fields (phase, step, task).
logger = logging.getLogger("singletable.migrations")


@dataclass
class RewriteStats:
    """Counts and capacity for the rewrite of one entity.

    ``scanned``, ``skipped`` and the scan's read units are the table's scan, which every
    rewrite of the table shares. ``read_units`` and ``write_units`` are the estimate (from
    the capacity estimator, for the items read and every write); ``reported_*`` what
    DynamoDB reported for the run (zero in a dry run, or where the backend reports none).
    """

    scanned: int = 0
    rewritten: int = 0
    moved: int = 0
    unchanged: int = 0
    skipped: int = 0
    gone: int = 0
    conflicts: int = 0
    failed: int = 0
    #: Guards claimed for values, names or keys the items take; released; already in place.
    guards_claimed: int = 0
    guards_released: int = 0
    guards_present: int = 0
    read_units: float = 0.0
    write_units: float = 0.0
    reported_read_units: float = 0.0
    reported_write_units: float = 0.0
    errors: list[str] = field(default_factory=list)
    #: Values another item already holds: the value, and the key fields of every holder.
    duplicates: list[tuple[dict[str, Any], list[dict[str, Any]]]] = field(default_factory=list)


_TASK_FIGURES = {
    "routed": None,
    "rewritten": "rewritten",
    "moved": "moved",
    "unchanged": "unchanged",
    "gone": "gone",
    "conflicts": "conflicts",
    "failed": "failed",
    "claimed": "guards_claimed",
    "released": "guards_released",
    "present": "guards_present",
}


@dataclass
class ScanTotals:
    """The capacity of every request of a table's item work: its scan, reads and writes.

    ``read_units``/``write_units`` are the estimate, ``reported_*`` what DynamoDB reported
    (a transaction's figure, condition checks included, counts as written).
    """

    scanned: int = 0
    read_units: float = 0.0
    write_units: float = 0.0
    reported_read_units: float = 0.0
    reported_write_units: float = 0.0


@dataclass
class MigrationReport:
    """What a run did (or, for a dry run, would do)."""

    dry_run: bool
    index_steps: list[str] = field(default_factory=list)
    #: Estimated write units of each new GSI's backfill, by ``"table/index NAME"``.
    index_units: dict[str, float] = field(default_factory=dict)
    rewrites: dict[str, RewriteStats] = field(default_factory=dict)
    #: Guard backfills of added uniqueness constraints, by task name.
    backfills: dict[str, UniqueBackfillReport] = field(default_factory=dict)
    #: Each table's item work as a whole (its one scan and every write), by table name.
    scans: dict[str, ScanTotals] = field(default_factory=dict)
    ttl_steps: list[str] = field(default_factory=list)
    #: TTL switches DynamoDB did not take yet (one change per hour): re-run to finish.
    ttl_pending: list[str] = field(default_factory=list)
    #: Rewrites that cannot be done mechanically and got no transform (dry run only;
    #: a real run refuses them), with the planner's reasons.
    needs_transform: dict[str, list[str]] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        """Items that could not be rewritten or guarded (left as they were)."""
        return sum(s.failed for s in self.rewrites.values()) + sum(
            b.failed for b in self.backfills.values()
        )

    def to_text(self) -> str:
        """A readable summary, worded for what was done (or, dry, would be)."""
        dry = self.dry_run
        lines = [f"migration {'dry run' if dry else 'run'}:"]
        if not (self.index_steps or self.rewrites or self.ttl_steps or self.backfills):
            lines.append("  nothing to do")
        for step in self.index_steps:
            lines.append(f"  index: {'would ' if dry else ''}{step}")
        for name, units in self.index_units.items():
            lines.append(f"  {name}: estimate {units:g} WCU to backfill the index entries")
        for task, s in self.rewrites.items():
            lines.extend(_rewrite_lines(task, s, dry, self.needs_transform.get(task, [])))
        for task, reasons in self.needs_transform.items():
            if task not in self.rewrites:
                lines.extend(f"  needs a transform ({task}): {r}" for r in reasons)
        for step in self.ttl_steps:
            lines.append(f"  ttl: {step}")
        for step in self.ttl_pending:
            lines.append(f"  ttl pending: {step}")
        lines.extend(f"  {b.to_text()}" for b in self.backfills.values())
        for name, t in self.scans.items():
            line = (
                f"  table {name}: read once ({t.scanned} items); estimate {t.read_units:g} RCU, "
                f"{t.write_units:g} WCU in all"
            )
            if not dry:
                line += f"; reported {t.reported_read_units:g} RCU, {t.reported_write_units:g} WCU"
            lines.append(line)
        return "\n".join(lines) + "\n"


def _rewrite_lines(task: str, s: RewriteStats, dry: bool, reasons: list[str]) -> list[str]:
    if dry:
        did = f"would rewrite {s.rewritten} ({s.moved} to a new key)"
        guards = f"would claim {s.guards_claimed} guard(s) and release {s.guards_released}"
    else:
        did = f"did rewrite {s.rewritten} ({s.moved} to a new key)"
        guards = f"claimed {s.guards_claimed} guard(s), released {s.guards_released}"
    lines = [
        f"  rewrite {task}: {s.scanned} scanned, {did}, {s.unchanged} already current, "
        f"{s.skipped} other entities', {s.failed} failed",
        f"    guards: {guards}, {s.guards_present} already in place",
        f"    estimate: {s.read_units:g} RCU read (billed for every item the scan reads), "
        f"{s.write_units:g} WCU written (items, index entries and guards)",
    ]
    if not dry:
        lines.append(
            f"    reported by DynamoDB: {s.reported_read_units:g} RCU, "
            f"{s.reported_write_units:g} WCU; {s.conflicts} concurrent change(s) "
            f"re-read and retried, {s.gone} item(s) deleted meanwhile"
        )
    lines.extend(f"    needs a transform: {reason}" for reason in reasons)
    lines.extend(f"    failed: {e}" for e in s.errors)
    lines.extend(f"    duplicate {values}: held by {holders}" for values, holders in s.duplicates)
    return lines


def migrate(
    db: Executor,
    model: Model,
    snapshot_doc: Mapping[str, Any],
    *,
    dry_run: bool = False,
    checkpoint: str | Path | None = None,
    segments: int = 4,
    page_size: int | None = None,
    out: TextIO | None = None,
    poll_interval: float = 2.0,
    timeout: float = 3600.0,
    transform: Transforms = None,
    plan: MigrationPlan | None = None,
    progress_interval: float = 1.0,
    progress_bar: bool | None = None,
    max_attempts: int = 25,
    workers: int | None = None,
    max_rcu: float | None = None,
    max_wcu: float | None = None,
    job: MigrationJob | str | None = None,
) -> MigrationReport:
    """Apply the plan between ``snapshot_doc`` and ``model`` to the live tables.

    Safe to run while the application writes (see "Live migrations" in the docs): every
    rewrite is conditional on the item being unchanged since it was read, and retried
    from a fresh consistent read when it is not.

    Args:
        db: The executor (`singletable.Connection`, or any with its ``execute``).
        model: The current model (a `Table` or tables).
        snapshot_doc: The snapshot the stored data was written with.
        dry_run: Change nothing; count the items to rewrite and the guards to claim (and
            those that would fail) and estimate every step's capacity.
        checkpoint: A JSON file recording each scan segment's progress; a run resumes
            from it, and finished segments are not scanned again. Delete it to rescan.
        segments: Parallel scan segments per table.
        page_size: Scan ``Limit`` (items read per page, i.e. per checkpoint); default
            DynamoDB's 1 MB pages.
        out: Where progress and the report go (default: stderr).
        poll_interval: Seconds between DescribeTable polls while an index changes.
        timeout: Seconds to wait for an index change before giving up.
        transform: Converts stored values to the new model's field values, for rewrites
            the planner flags as not mechanical (`Transform`); one function, or a
            mapping from entity name or identifier to a function.
        plan: The plan to carry out (default: `plan_changes(model, snapshot_doc)`).
        progress_interval: Seconds between plain progress lines (not on a terminal).
        progress_bar: Force (True) or suppress (False) the progress bar; default: a bar
            when ``out`` is a terminal and tqdm is installed.
        max_attempts: Conflicting concurrent writes tolerated per item before it is
            counted as failed.
        workers: Segments scanned at once (threads); default: all of them.
        max_rcu: Read capacity per second for the whole run (default: unlimited).
        max_wcu: Write capacity per second for the whole run (default: unlimited).
        job: Run the item work as a job of the job engine (`MigrationJob`, or a job id
            for one worker in this process): its record and fenced unit leases in the
            table, worker processes, other machines joining with ``singletable jobs
            work``; the job replaces ``checkpoint`` (run it again with the same id to
            resume). Ignored by a dry run, which writes nothing, not even a job record.

    Raises:
        MigrationError: The plan needs a table migration, or a transform that was not
            supplied, or an index change timed out.
        RequestLimitError: ``segments`` is not 1 to 1,000,000 (also a `ValueError`).
    """
    check_segment_count(segments)
    out = out or sys.stderr
    given_plan = plan is not None
    plan = plan if plan is not None else plan_changes(model, snapshot_doc)
    tables = {t.name: t for t in tables_of(model)}
    attributes = {"db.collection.name": ",".join(tables), "singletable.dry_run": dry_run}
    with task_span("migrate", attributes):
        _refuse_table_migrations(plan)
        report = MigrationReport(dry_run=dry_run)
        report.needs_transform = _check_transforms(plan, transform, dry_run=dry_run)
        options = _job_options(job, checkpoint, given_plan=given_plan) if not dry_run else None
        steps = TableSteps(db, out, poll_interval, timeout, dry_run=dry_run)
        index_steps, ttl_switches = steps.apply_plan(plan, tables)
        report.index_steps.extend(index_steps)
        _log_steps("index", index_steps, dry_run)
        findings = Findings()
        work = MigrationWork(
            db,
            tables,
            build_routes(tables, snapshot_doc, plan, transform),
            indexes=created_indexes(plan),
            dry_run=dry_run,
            page_size=page_size,
            max_attempts=max_attempts,
            findings=findings,
        )
        state = _state(checkpoint, model, snapshot_doc, dry_run=dry_run)
        display = _Display(out, progress_interval, progress_bar, dry_run=dry_run)
        if options is not None:
            spec = migration_spec(
                options.model,
                snapshot_doc,
                transform=options.transform,
                segments=segments,
                page_size=page_size,
                max_attempts=max_attempts,
            )
            counts = _run_job(work, spec, options, steps, display, max_rcu=max_rcu, max_wcu=max_wcu)
        else:
            counts = _run(
                work,
                state,
                segments,
                steps,
                display,
                workers=workers,
                max_rcu=max_rcu,
                max_wcu=max_wcu,
            )
        _fill(report, plan, counts, findings)
        failed = {task.partition("/")[0] for task, stats in report.rewrites.items() if stats.failed}
        ttl_steps, ttl_pending = steps.switch_ttls(tables, ttl_switches, failed)
        report.ttl_steps.extend(ttl_steps)
        _log_steps("ttl", ttl_steps, dry_run)
        report.ttl_pending.extend(ttl_pending)
        _log_rewrites(report)
    out.write(report.to_text())
    out.flush()
    return report


def _log_steps(phase: str, steps: Iterable[str], dry_run: bool) -> None:
    for step in steps:
        logger.info(
            "migration step: %s", step, extra={"phase": phase, "step": step, "dry_run": dry_run}
        )


def _log_rewrites(report: MigrationReport) -> None:
    for task, stats in report.rewrites.items():
        logger.info(
            "migration rewrite %s: %d scanned, %d rewritten, %d failed",
            task,
            stats.scanned,
            stats.rewritten,
            stats.failed,
            extra={
                "phase": "rewrite",
                "task": task,
                "scanned": stats.scanned,
                "rewritten": stats.rewritten,
                "failed": stats.failed,
                "dry_run": report.dry_run,
            },
        )


def _check_transforms(
    plan: MigrationPlan, transform: Transforms, *, dry_run: bool
) -> dict[str, list[str]]:
    """The rewrites that need a transform and got none: refused, unless a dry run."""
    rewrites = plan.rewrites()
    transforms = {f"{t}/{old}->{new}": transform_for(transform, new) for t, old, new in rewrites}
    missing = _missing_transforms(plan, transforms, bare=callable(transform))
    if missing and not dry_run:
        detail = "; ".join(f"{task}: {'; '.join(reasons)}" for task, reasons in missing.items())
        raise MigrationError(
            f"cannot rewrite mechanically ({detail}). Supply a transform (API: "
            "migrate(..., transform=fn); CLI: --transform module:function) that turns the "
            "stored values into the new model's, and check it with --dry-run first"
        )
    return missing


def _state(
    checkpoint: str | Path | None, model: Model, snapshot_doc: Mapping[str, Any], *, dry_run: bool
) -> Checkpoint:
    """The run's checkpoint: read from ``checkpoint`` (and saved there), or kept in memory.

    A dry run keeps its progress in memory: the real run must still scan everything. The
    checkpoint belongs to this plan only: the same task name in a later migration (the
    same entity rewritten again) must not read its segments as done.
    """
    if checkpoint is None or dry_run:
        return Checkpoint(None)
    text = dumps(snapshot_doc) + snapshot_json(model)
    return Checkpoint.load(checkpoint, hashlib.sha256(text.encode("utf-8")).hexdigest())


def _job_options(
    job: MigrationJob | str | None, checkpoint: str | Path | None, *, given_plan: bool
) -> MigrationJob | None:
    """How a real run's item work runs as a job (None: threads here)."""
    if job is None:
        return None
    if checkpoint is not None:
        raise MigrationError(
            "a job keeps its progress in the table: give a checkpoint file or a job, not both"
        )
    options = MigrationJob(job_id=job) if isinstance(job, str) else job
    if options.workers > 1 and given_plan:
        raise MigrationError("worker processes rebuild the plan from the model: omit plan=")
    return options


async def migrate_async(
    adb: AsyncExecutor, model: Model, snapshot_doc: Mapping[str, Any], **options: Any
) -> MigrationReport:
    """`migrate` with an asyncio executor (`singletable.AsyncConnection`).

    The run's units are threads, as with `migrate` (its keyword arguments are the same);
    each request they make is awaited on the calling event loop, which stays free
    meanwhile: ``report = await migrate_async(adb, table, snapshot)``.
    """
    bridge = _OnLoop(adb, asyncio.get_running_loop())
    return await asyncio.to_thread(migrate, bridge, model, snapshot_doc, **options)


class _OnLoop:
    """The synchronous ``execute`` of an asyncio executor, for threads off its loop."""

    def __init__(self, adb: AsyncExecutor, loop: asyncio.AbstractEventLoop) -> None:
        self.adb = adb
        self.loop = loop

    def execute(self, operation: Operation[R]) -> R:
        return asyncio.run_coroutine_threadsafe(self.adb.execute(operation), self.loop).result()


# -- running the units ------------------------------------------------------------------


@dataclass(frozen=True)
class _Display:
    out: TextIO
    interval: float
    bar: bool | None
    dry_run: bool


def _run(
    work: MigrationWork,
    state: Checkpoint,
    segments: int,
    steps: TableSteps,
    display: _Display,
    *,
    workers: int | None,
    max_rcu: float | None,
    max_wcu: float | None,
) -> dict[str, dict[str, int]]:
    """Run every unit not done yet; the counts of every segment (done before or now), by table."""
    todo: list[tuple[str, int, int, Any]] = []  # table, segment, segments, start key
    names = [name for name in work.tables if work.routes.get(name)]
    verb = "count" if display.dry_run else "migrate"
    total_items = 0
    for name in names:
        task = state.task(_scan_task(name), segments)
        total = int(task["total_segments"])  # a resumed run keeps the checkpoint's split
        saved = [task["segments"][str(i)] for i in range(total)]  # the file sorts them as text
        left = [(i, s) for i, s in enumerate(saved) if not s["done"]]
        display.out.write(f"{verb} {name}: {len(left)} of {total} segment(s) to scan\n")
        total_items += steps.item_count(work.tables[name]) or 0
        todo.extend((name, i, total, s["start_key"]) for i, s in left)
    units = [
        WorkUnit("migrate", "migrate", index, len(todo), {"table": n, "segment": i, "segments": t})
        for index, (n, i, t, _) in enumerate(todo)
    ]
    starts: dict[int, Mapping[str, JsonValue] | None] = {
        index: None if start is None else {"last_key": start}
        for index, (_, _, _, start) in enumerate(todo)
    }
    before = [c for name in names for c in state.segment_counts(_scan_task(name))]
    progress = Progress(
        f"{verb} {', '.join(names)}",
        total_items or None,
        display.out,
        done=Counts(**progress_figures(_sum(before))),
        interval=display.interval,
        bar=display.bar,
        # A dry run rewrites nothing: its line shows what it read, skipped and would fail.
        wording=Wording(others=("skipped", "failed")) if display.dry_run else None,
    )
    work.on_page = lambda counts: progress.update(**progress_figures(counts))

    def saving(unit: WorkUnit, ctx: UnitContext) -> None:
        name, segment = str(unit.spec["table"]), int(unit.spec["segment"])
        work(unit, Saving(ctx, state, _scan_task(name), segment))

    try:
        if units:
            run_units(
                units,
                saving,
                workers=workers or len(units),
                max_rcu=max_rcu,
                max_wcu=max_wcu,
                checkpoints=starts,
            )
    finally:
        progress.close()
    return {name: _sum(state.segment_counts(_scan_task(name))) for name in names}


def _run_job(
    work: MigrationWork,
    spec: Mapping[str, JsonValue],
    options: MigrationJob,
    steps: TableSteps,
    display: _Display,
    *,
    max_rcu: float | None,
    max_wcu: float | None,
) -> dict[str, dict[str, int]]:
    """The item work as a job kept in the first table it scans; the counts by table."""
    names = [name for name in work.tables if work.routes.get(name)]
    if not names:
        return {}
    expected = sum(steps.item_count(work.tables[name]) or 0 for name in names)

    def progress(done: Counts) -> Progress:
        return Progress(
            f"migrate {', '.join(names)}",
            expected or None,
            display.out,
            done=done,
            interval=display.interval,
            bar=display.bar,
        )

    counts = run_as_job(
        work.db,
        work.tables[names[0]],
        work,
        spec,
        options,
        max_rcu=max_rcu,
        max_wcu=max_wcu,
        expected=expected or None,
        progress=progress,
    )
    return {name: counts.get(name, {}) for name in names}


def _scan_task(table: str) -> str:
    return f"scan {table}"


def _sum(parts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for part in parts:
        for name, n in part.items():
            total[name] = total.get(name, 0) + n
    return total


# -- the report -------------------------------------------------------------------------


def _fill(
    report: MigrationReport,
    plan: MigrationPlan,
    counts: Mapping[str, Mapping[str, int]],
    findings: Findings,
) -> None:
    """The report's figures, from the units' counts and findings."""
    for table_name, old_id, new_id in plan.rewrites():
        task = f"{table_name}/{old_id}->{new_id}"
        c = counts.get(table_name, {})
        stats = RewriteStats(scanned=c.get("scanned", 0))
        for figure, attribute in _TASK_FIGURES.items():
            if attribute is not None:
                setattr(stats, attribute, c.get(f"{task}|{figure}", 0))
        stats.skipped = stats.scanned - c.get(f"{task}|routed", 0)
        stats.read_units = (c.get("scan_read_mu", 0) + c.get(f"{task}|read_mu", 0)) / MILLI
        stats.write_units = c.get(f"{task}|write_mu", 0) / MILLI
        stats.reported_read_units = (
            c.get("scan_reported_read_mu", 0) + c.get(f"{task}|reported_read_mu", 0)
        ) / MILLI
        stats.reported_write_units = c.get(f"{task}|reported_write_mu", 0) / MILLI
        stats.errors = findings.errors.get(task, [])
        stats.duplicates = _duplicates(findings, task)
        report.rewrites[task] = stats
    for change in plan.changes:
        action = change.action or {}
        if action.get("op") != "backfill_unique":
            continue
        fields_ = tuple(action["fields"])
        task = f"{change.table}/{action['entity']}/unique {'+'.join(fields_)}"
        c = counts.get(change.table, {})
        report.backfills[task] = UniqueBackfillReport(
            split_id(action["entity"])[0],
            fields_,
            dry_run=report.dry_run,
            scanned=c.get(f"{task}|scanned", 0),
            claimed=c.get(f"{task}|claimed", 0),
            present=c.get(f"{task}|present", 0),
            unguarded=c.get(f"{task}|unguarded", 0),
            write_units=c.get(f"{task}|write_mu", 0) / MILLI,
            duplicates=_duplicates(findings, task),
            failed=c.get(f"{task}|duplicates", 0),
        )
    for table_name, table_counts in counts.items():
        c = table_counts
        report.scans[table_name] = ScanTotals(
            c.get("scanned", 0),
            (c.get("scan_read_mu", 0) + c.get("read_mu", 0)) / MILLI,
            c.get("write_mu", 0) / MILLI,
            (c.get("scan_reported_read_mu", 0) + c.get("reported_read_mu", 0)) / MILLI,
            c.get("reported_write_mu", 0) / MILLI,
        )
        for name, n in table_counts.items():
            if "/index " in name and name.endswith("|write_mu"):
                report.index_units[name.rpartition("|")[0]] = n / MILLI


def _duplicates(findings: Findings, task: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """A task's duplicate values, each with its holders in key order."""
    result = []
    for duplicate in findings.duplicates.get(task, {}).values():
        holders = sorted(duplicate.holders, key=lambda h: sorted((a, str(v)) for a, v in h.items()))
        result.append((duplicate.values, holders))
    return sorted(result, key=lambda d: sorted((a, str(v)) for a, v in d[0].items()))


def _missing_transforms(
    plan: MigrationPlan, transforms: Mapping[str, Transform | None], *, bare: bool
) -> dict[str, list[str]]:
    """Task -> reasons, for changes flagged ``needs_transform`` that got no transform."""
    missing: dict[str, list[str]] = {}
    for change in plan.changes:
        reason = change.needs_transform
        if not reason:
            continue
        task = _task_of(change)
        given = transforms.get(task) is not None if task in transforms else bare
        if not given:
            missing.setdefault(task, []).append(f"{change.subject}: {reason}")
    return missing


def _task_of(change: Change) -> str:
    action = change.action or {}
    if action.get("op") == "rewrite":
        return f"{change.table}/{action['old']}->{action['new']}"
    # A flagged change with no rewrite of its own: no transform can be attached to it.
    return f"{change.table}/{change.subject}"


def _refuse_table_migrations(plan: MigrationPlan) -> None:
    blocked = plan.of(ChangeClass.TABLE_MIGRATION)
    if blocked:
        first = blocked[0]
        raise MigrationError(
            f"table {first.table}: {first.subject}: {first.reason}. The runner does not "
            "copy tables; create the new table and copy the items yourself"
        )
