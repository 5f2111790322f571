"""The ``migrate`` job kind: each table read once, every item routed to its entity's rewrite.

A migration's item work is split into `WorkUnit` values, one per scan segment of each
table that has items to rewrite or guards to backfill. A unit reads its segment page by
page from its checkpoint (the last evaluated key) and routes each item by its stored
identifier (``_et``/``_ev``) to the `EntityRewrite` of its entity; items of other
entities, and reserved items (uniqueness guards), are counted and left alone. After each
page it saves the checkpoint and the page's counts (`UnitContext.save`); before each
write it spends the write's estimated capacity (`UnitContext.spend`), and after each page
the page's read capacity.

Counts are flat integer deltas, as the job engine aggregates them: ``scanned`` and
``skipped``, the scan's estimated and reported read capacity (``scan_read_mu``,
``scan_reported_read_mu``, in thousandths of a unit) and that of the item work's
requests (``read_mu``, ``write_mu``, ``reported_read_mu``, ``reported_write_mu``) per
unit; ``"<task>|<figure>"`` per rewrite or backfill task. `MIGRATE_KIND` rebuilds the
work from a JSON spec (the model's import path, the old snapshot's text, the transform's
import path, the options), so a worker on another machine needs only the job's spec and
a connection.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from pydantic import BaseModel

from singletable.attributes.size import item_size
from singletable.errors import JobError
from singletable.model.jobs import is_reserved_item
from singletable.model.plan import plan_of
from singletable.model.table import Table
from singletable.model.unique import FIELD_JOIN
from singletable.operations.protocol import Call, Operation, Step
from singletable.operations.scan import Scan
from singletable.tooling.cost.capacity import estimate_capacity
from singletable.tooling.cost.sizes import index_entry, write_units
from singletable.tooling.jobs.units import JsonValue, UnitContext, WorkUnit
from singletable.tooling.migrations.planner import MigrationPlan, plan_changes
from singletable.tooling.migrations.rewrite import EntityRewrite, Transform, split_id
from singletable.tooling.migrations.rewrite_item import (
    DryRunClaims,
    Outcome,
    RewriteItem,
    Spend,
    consumed,
)
from singletable.tooling.migrations.snapshot import load_snapshot, tables_of
from singletable.types import Item

#: What `migrate` accepts as ``transform``: one function for every rewritten entity, or
#: a mapping from entity name (``"Order"``) or identifier (``"Order@2"``) to a function.
Transforms = Transform | Mapping[str, Transform] | None

#: Capacity is counted in thousandths of a unit (counts are integers).
MILLI = 1000


def task_name(table: str, old_id: str, new_id: str) -> str:
    """The name of the rewrite of one entity, in reports and counts."""
    return f"{table}/{old_id}->{new_id}"


def backfill_name(table: str, entity: str, constraint: str) -> str:
    """The name of the guard backfill of one new constraint."""
    return f"{table}/{entity}/unique {constraint}"


@dataclass
class Duplicate:
    """A unique value several items hold: the value and every holder's key seen."""

    values: dict[str, Any]
    holders: list[Item] = field(default_factory=list)


@dataclass
class Findings:
    """What the units of one process found beyond counts: errors and duplicate values.

    Shared by the units (thread-safe). The counts of a job reach whoever reads it, but
    these stay in the worker that found them: a worker of a job (`MIGRATE_KIND`) writes
    each to ``echo`` (its stderr) as it is found.
    """

    errors: dict[str, list[str]] = field(default_factory=dict)
    duplicates: dict[str, dict[str, Duplicate]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    echo: TextIO | None = None

    def error(self, task: str, message: str) -> None:
        """Keep the first five error messages of a task."""
        self._echo(f"{task}: failed: {message}")
        with self.lock:
            errors = self.errors.setdefault(task, [])
            if len(errors) < 5:
                errors.append(message)

    def duplicate(self, task: str, guard: str, values: dict[str, Any], holders: list[Item]) -> None:
        """Record the holders of a value another item holds (merged by guard key)."""
        self._echo(f"{task}: duplicate {values}: held by {holders}")
        with self.lock:
            entry = self.duplicates.setdefault(task, {}).setdefault(guard, Duplicate(values))
            for holder in holders:
                if holder not in entry.holders:
                    entry.holders.append(holder)

    def _echo(self, line: str) -> None:
        if self.echo is not None:
            print(f"singletable migrate: {line}", file=self.echo, flush=True)


@dataclass
class Route:
    """Where the items of one old entity go: its rewrite and the task names it counts to."""

    rewrite: EntityRewrite
    task: str | None
    backfills: dict[str, str]


class ScanPage(Operation[dict[str, Any]]):
    """One page of a segment of a table's scan, the items as stored.

    No filter: a Scan is billed for every item it reads anyway, and reading them all lets
    the estimate count them.
    """

    action = "scan"

    def __init__(
        self, table: Table, segment: int, segments: int, start: Item | None, limit: int | None
    ) -> None:
        self.scan: Scan[Any] = Scan(table).segment(segment, segments).capacity("INDEXES")
        if limit is not None:
            self.scan = self.scan.page_size(limit)
        self.start = start

    def params(self) -> dict[str, Any]:
        """The exact Scan request."""
        request = self.scan.params()
        if self.start is not None:
            request["ExclusiveStartKey"] = self.start
        return request

    def steps(self) -> Step[dict[str, Any]]:
        """One call; the raw response (items as stored, the last evaluated key)."""
        response: dict[str, Any] = yield Call(self.action, self.params())
        return response


class MigrationWork:
    """The `UnitWork` of a migration: runs one scan segment of one table.

    Args:
        db: The executor every request goes through (its ``execute``).
        tables: The new model's tables, by name.
        routes: Per table, the route of each old stored identifier ``(name, version)``.
        indexes: Per table, the GSIs being created (their backfill is estimated).
        dry_run: Count and estimate; write nothing.
        page_size: Scan ``Limit``.
        max_attempts: Conflicting concurrent writes tolerated per item.
        findings: Where errors and duplicates go.
    """

    def __init__(
        self,
        db: Any,
        tables: Mapping[str, Table],
        routes: Mapping[str, Mapping[tuple[str, int], Route]],
        *,
        indexes: Mapping[str, list[str]] | None = None,
        dry_run: bool = False,
        page_size: int | None = None,
        max_attempts: int = 25,
        findings: Findings | None = None,
        on_page: Any = None,
    ) -> None:
        self.db = db
        self.tables = tables
        self.routes = routes
        self.indexes = indexes or {}
        self.dry_run = dry_run
        self.page_size = page_size
        self.max_attempts = max_attempts
        self.findings = findings or Findings()
        self.dry_claims = DryRunClaims()
        #: Called with each page's counts (a progress display).
        self.on_page = on_page

    def units(self, job_id: str, segments: int) -> list[WorkUnit]:
        """One unit per scan segment of every table with items to route."""
        names = [name for name in self.tables if self.routes.get(name)]
        total = len(names) * segments
        return [
            WorkUnit(
                job_id,
                "migrate",
                i * segments + segment,
                total,
                {"table": name, "segment": segment, "segments": segments},
            )
            for i, name in enumerate(names)
            for segment in range(segments)
        ]

    def __call__(self, unit: WorkUnit, ctx: UnitContext) -> None:
        """Run one unit from its checkpoint to the end of its segment."""
        table = self.tables[str(unit.spec["table"])]
        routes = self.routes[table.name]
        segment, segments = int(unit.spec["segment"]), int(unit.spec["segments"])
        start = (ctx.checkpoint or {}).get("last_key")
        while True:
            page = self.db.execute(ScanPage(table, segment, segments, start, self.page_size))
            counts: dict[str, int] = {}
            items: list[Item] = page.get("Items", [])
            read = estimate_capacity(Scan(table), read=items).rcu
            ctx.spend(rcu=read)
            _add(counts, "scan_read_mu", round(read * MILLI))
            _add(counts, "scan_reported_read_mu", round(consumed(page) * MILLI))
            for item in items:
                self.item(table, routes, item, counts, ctx.spend)
            start = page.get("LastEvaluatedKey")
            if self.on_page is not None:
                self.on_page(counts)
            if start is None:
                ctx.finish(counts)
                return
            ctx.save({"last_key": start}, counts)

    def item(
        self,
        table: Table,
        routes: Mapping[tuple[str, int], Route],
        item: Item,
        counts: dict[str, int],
        spend: Spend,
    ) -> None:
        """Route one scanned item and count what its rewrite did."""
        _add(counts, "scanned", 1)
        route = None
        if not is_reserved_item(table, item):
            et = item.get(table.entity_attribute, {}).get("S")
            ev = item.get(table.version_attribute, {}).get("N")
            if et is not None and ev is not None and ev.lstrip("-").isdigit():
                route = routes.get((et, int(ev)))
        if route is None:
            _add(counts, "skipped", 1)
            self._index_costs(table, item, counts)
            return
        op = RewriteItem(
            route.rewrite,
            item,
            dry_run=self.dry_run,
            max_attempts=self.max_attempts,
            spend=spend,
            dry_claims=self.dry_claims,
        )
        outcome: Outcome = self.db.execute(op)
        # The table's totals, whatever task an item counts to (a backfill-only item too).
        _add(counts, "read_mu", round(outcome.read_units * MILLI))
        _add(counts, "write_mu", round(outcome.write_units * MILLI))
        _add(counts, "reported_read_mu", round(outcome.reported_read_units * MILLI))
        _add(counts, "reported_write_mu", round(outcome.reported_write_units * MILLI))
        self._count(route, item, outcome, counts)
        self._index_costs(table, outcome.after or item, counts)

    def _index_costs(self, table: Table, item: Item, counts: dict[str, int]) -> None:
        """A new GSI's backfill writes one entry per item that carries its keys."""
        if is_reserved_item(table, item):
            return
        for name in self.indexes.get(table.name, []):
            entry = index_entry(table, name, item)
            if entry is not None:
                units = write_units(item_size(entry))
                _add(counts, f"{table.name}/index {name}|write_mu", round(units * MILLI))

    def _count(self, route: Route, item: Item, out: Outcome, counts: dict[str, int]) -> None:
        task = route.task
        for name, backfill in route.backfills.items():
            _add(counts, f"{backfill}|scanned", 1)
            _add(counts, f"{backfill}|claimed", out.backfill_claimed.get(name, 0))
            _add(counts, f"{backfill}|present", out.backfill_present.get(name, 0))
            _add(counts, f"{backfill}|unguarded", out.backfill_unguarded.get(name, 0))
            units = out.backfill_write_units.get(name, 0.0)
            _add(counts, f"{backfill}|write_mu", round(units * MILLI))
        if out.duplicate is not None:
            guard, values, holders, constraint = out.duplicate
            owner = route.backfills.get(constraint) if constraint else None
            key_fields = [route.rewrite.holder_fields(h) for h in holders]
            self.findings.duplicate(owner or task or "", guard, values, key_fields)
            if owner is not None:
                _add(counts, f"{owner}|duplicates", 1)
        if task is None:
            return
        _add(counts, f"{task}|routed", 1)
        _add(counts, f"{task}|{out.status}", 1)
        _add(counts, f"{task}|moved", int(out.moved))
        for figure in ("conflicts", "claimed", "released", "present"):
            _add(counts, f"{task}|{figure}", getattr(out, figure))
        write = out.write_units - sum(out.backfill_write_units.values())
        _add(counts, f"{task}|write_mu", round(write * MILLI))
        _add(counts, f"{task}|read_mu", round(out.read_units * MILLI))
        _add(counts, f"{task}|reported_read_mu", round(out.reported_read_units * MILLI))
        _add(counts, f"{task}|reported_write_mu", round(out.reported_write_units * MILLI))
        if out.error is not None:
            self.findings.error(task, out.error)


def _add(counts: dict[str, int], name: str, n: int) -> None:
    if n:
        counts[name] = counts.get(name, 0) + n


def _figure(counts: Mapping[str, int], suffix: str) -> int:
    return sum(n for name, n in counts.items() if name.endswith(suffix))


def progress_figures(counts: Mapping[str, int]) -> dict[str, int]:
    """What a progress display shows of a migration's counts (a page's, a job's)."""
    return {
        "scanned": counts.get("scanned", 0),
        "rewritten": _figure(counts, "|rewritten"),
        "skipped": counts.get("skipped", 0) + _figure(counts, "|unchanged"),
        "failed": _figure(counts, "|failed") + _figure(counts, "|duplicates"),
    }


# -- building the work from a plan ------------------------------------------------------


def transform_for(transform: Transforms, new_id: str) -> Transform | None:
    """The transform of the rewrite to ``new_id`` (by identifier, then by entity name)."""
    if transform is None or callable(transform):
        return transform
    name = new_id.rpartition("@")[0]
    return transform.get(new_id) or transform.get(name)


def build_routes(
    tables: Mapping[str, Table],
    snapshot_doc: Mapping[str, Any],
    plan: MigrationPlan,
    transform: Transforms,
) -> dict[str, dict[tuple[str, int], Route]]:
    """Per table, the route of each old entity the plan rewrites or backfills guards for."""
    keep: dict[str, frozenset[str]] = {}
    for change in plan.changes:
        action = change.action or {}
        if action.get("op") == "switch_ttl" and action["old"] and action["old"] != action["new"]:
            keep[change.table] = frozenset({action["old"]})
    rewrites = plan.rewrites()
    backfills: dict[tuple[str, str], dict[str, str]] = {}
    for change in plan.changes:
        action = change.action or {}
        if action.get("op") == "backfill_unique":
            constraint = FIELD_JOIN.join(action["fields"])
            task = backfill_name(change.table, action["entity"], constraint)
            backfills.setdefault((change.table, action["entity"]), {})[constraint] = task
    pairs = {(t, new): old for t, old, new in rewrites}
    for t, new in backfills:
        pairs.setdefault((t, new), new)
    routes: dict[str, dict[tuple[str, int], Route]] = {}
    for (table_name, new_id), old_id in sorted(pairs.items()):
        rewritten = (table_name, old_id, new_id) in rewrites
        rewrite = EntityRewrite(
            tables[table_name],
            snapshot_doc["tables"][table_name],
            old_id,
            new_id,
            transform=transform_for(transform, new_id) if rewritten else None,
            keep=keep.get(table_name, frozenset()),
            rewrite=rewritten,
        )
        name = task_name(table_name, old_id, new_id) if rewritten else None
        route = Route(rewrite, name, backfills.get((table_name, new_id), {}))
        routes.setdefault(table_name, {})[split_id(old_id)] = route
    return routes


def created_indexes(plan: MigrationPlan) -> dict[str, list[str]]:
    """Per table, the GSIs the plan creates (their backfill is estimated by the scan)."""
    created: dict[str, list[str]] = {}
    for change in plan.changes:
        action = change.action or {}
        if action.get("op") in ("create_gsi", "recreate_gsi"):
            created.setdefault(change.table, []).append(action["index"])
    return created


# -- the job kind -----------------------------------------------------------------------


def load_object(path: str) -> Any:
    """``"pkg.mod:attr"``, ``"pkg.mod"`` or ``"path/to/file.py:attr"`` imported.

    A file is loaded as a module named after it (as the CLI loads a model file), so a
    worker process given the CLI's model reference finds the same classes.
    """
    module_name, _, attribute = path.rpartition(":") if ".py:" in path else path.partition(":")
    if module_name.endswith(".py"):
        file = Path(module_name)
        module = sys.modules.get(file.stem)
        if module is None or getattr(module, "__file__", None) != str(file):
            spec = importlib.util.spec_from_file_location(file.stem, file)
            if spec is None or spec.loader is None:
                raise JobError(f"cannot load {module_name}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[file.stem] = module
            spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    return getattr(module, attribute) if attribute else module


def model_tables(value: Any) -> list[Table]:
    """The tables a model reference resolved to: tables, an entity class, a module's tables."""
    if isinstance(value, ModuleType):
        return list({id(v): v for v in vars(value).values() if isinstance(v, Table)}.values())
    if isinstance(value, type) and issubclass(value, BaseModel):
        return [plan_of(value).table]
    return tables_of(value)


@dataclass(frozen=True)
class MigrateKind:
    """The ``migrate`` `JobKind`: its spec is JSON, enough to rebuild the work anywhere.

    Spec: ``model`` (import path of the `Table` or tables, ``"pkg.mod:attr"``),
    ``snapshot`` (the old snapshot's text), ``transform`` (import path of a function, or
    of a mapping from entity to function; optional), ``segments``, ``dry_run``,
    ``page_size``, ``max_attempts``, ``job_id``.
    """

    name: str = "migrate"

    def units(self, spec: Mapping[str, JsonValue]) -> list[WorkUnit]:
        """One unit per scan segment of each table the migration reads."""
        work = self.work(spec, None)
        return work.units(str(spec.get("job_id", "migrate")), int(spec.get("segments", 4)))

    def work(self, spec: Mapping[str, JsonValue], executor: Any) -> MigrationWork:
        """The work of the job's units, sending its requests through ``executor``."""
        if not spec.get("model"):
            raise JobError(
                "this migrate job was started without the model's import path (spec "
                "'model'): only the process that started it can work on it"
            )
        tables = {t.name: t for t in model_tables(load_object(str(spec["model"])))}
        snapshot_doc = load_snapshot(str(spec["snapshot"]), source="job spec snapshot")
        transform = load_object(str(spec["transform"])) if spec.get("transform") else None
        plan = plan_changes(list(tables.values()), snapshot_doc)
        page_size = spec.get("page_size")
        return MigrationWork(
            executor,
            tables,
            build_routes(tables, snapshot_doc, plan, transform),
            indexes=created_indexes(plan),
            dry_run=bool(spec.get("dry_run", False)),
            page_size=None if page_size is None else int(page_size),
            max_attempts=int(spec.get("max_attempts", 25)),
            # This worker's findings are seen nowhere else: say them as they come.
            findings=Findings(echo=sys.stderr),
        )


#: The ``migrate`` job kind, for the job engine's registry.
MIGRATE_KIND = MigrateKind()
