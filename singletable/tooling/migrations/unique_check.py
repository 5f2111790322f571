"""Uniqueness guards checked against the items they guard, and repaired: `check_unique`.

The rule (``docs/uniqueness.md``): every stored item of an entity with ``unique=`` has,
for each constraint whose values it sets, one guard item naming it as the holder; and
every guard names a holder that holds its value. singletable's writes keep it, each in
one transaction. Writes that bypass them (a raw ``DeleteItem``, a ``PutItem`` of a
changed value, a restore of part of a table) break it: the value stays blocked by an
*orphaned* guard, or an item's value is *missing* its guard and another item may take it.

The check scans every table of the model by segments (units of `run_units`, in threads,
with progress), and reads what each stored item implies, consistently, at the time it
looks: a guard's holder (does it still hold the value?), an item's guards (are they there,
held by it?). So its memory is flat, and it scales with the segments like an export.
What it finds:

* ``orphaned``: a guard whose holder is gone or no longer holds the value. Repair deletes
  it, in a transaction that checks the holder still does not hold the value.
* ``missing``: an item whose value has no guard, or a guard naming another item that does
  not hold the value. Repair claims the guard for the item, in a transaction that checks
  the item still holds the value (and that the other item still does not).
* ``duplicate``: two items hold the value, the guard names the other one. Not repaired:
  a person decides which item keeps the value.
* ``undeclared``: a guard of a constraint no entity of the model declares (removed from
  the model, or a model given in part). Not repaired.

A repair whose checks fail (a write came in between) is left undone and reported; run
the check again.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal, TextIO

from singletable.errors import ServiceError, SingleTableError
from singletable.expressions.conditions import Condition, and_, not_, or_, render_condition
from singletable.expressions.paths import Placeholders
from singletable.model.guards import read_guard
from singletable.model.plan import EntityPlan, entity_plans, item_plan
from singletable.model.table import Table
from singletable.model.unique import GUARD_HOLDER_PK, UniqueConstraint, is_guard_item
from singletable.operations.common import describe_key, key_ref
from singletable.operations.guarded import (
    GuardWrite,
    TransactEntry,
    guard_entry,
    stored_values,
    transact_request,
    values_unchanged,
)
from singletable.operations.protocol import Call, Executor, Operation, Step
from singletable.operations.scan import Scan, check_segment_count
from singletable.operations.tables import DescribeTable
from singletable.tooling.cost.capacity import estimate_capacity
from singletable.tooling.jobs.local import run_units
from singletable.tooling.jobs.progress import Progress, Wording
from singletable.tooling.jobs.units import UnitContext, WorkUnit
from singletable.tooling.migrations.work import ScanPage
from singletable.types import Item

FindingKind = Literal["orphaned", "missing", "duplicate", "undeclared"]

#: Findings listed in a report; the rest are counted.
MAX_LISTED = 1000

CHECK_WORDING = Wording(done="scanned", others=("failed", "rewritten"), approximate=True)


@dataclass(frozen=True)
class GuardFinding:
    """One break of the rule, and what the repair did about it.

    Attributes:
        kind: ``orphaned``, ``missing``, ``duplicate`` or ``undeclared``.
        table: The table.
        entity: The entity the constraint belongs to.
        fields: The constrained fields.
        values: The values.
        item: The key of the item concerned (the holder a guard names, the item whose
            guard is missing), as key fields where its entity decodes them.
        detail: What is wrong, in words.
        repaired: The repair was made.
    """

    kind: FindingKind
    table: str
    entity: str
    fields: tuple[str, ...]
    values: dict[str, Any]
    item: dict[str, Any] | None
    detail: str
    repaired: bool = False

    def to_text(self) -> str:
        """One line."""
        done = "; repaired" if self.repaired else ""
        return (
            f"{self.kind}: {self.entity} unique {'+'.join(self.fields)} {self.values} "
            f"({self.table}): {self.detail}{done}"
        )


@dataclass
class UniqueCheckReport:
    """What `check_unique` found (and repaired).

    Attributes:
        scanned: Items scanned (guards included).
        guards: Guard items checked.
        values: Unique values of items checked.
        counts: Findings by kind.
        repaired: Findings repaired.
        findings: The first `MAX_LISTED` findings.
        seconds: How long the check took.
    """

    repair: bool = False
    scanned: int = 0
    guards: int = 0
    values: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    repaired: int = 0
    findings: list[GuardFinding] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def unresolved(self) -> int:
        """Findings not repaired."""
        return sum(self.counts.values()) - self.repaired

    @property
    def ok(self) -> bool:
        """Whether the guards are in step with the items (after the repairs)."""
        return self.unresolved == 0

    def to_text(self) -> str:
        """A line per listed finding, then the summary."""
        lines = [f.to_text() for f in self.findings]
        found = ", ".join(f"{n:,} {kind}" for kind, n in sorted(self.counts.items())) or "none"
        lines.append(
            f"checked {self.guards:,} guards and {self.values:,} unique values of "
            f"{self.scanned:,} items in {self.seconds:.1f}s: {found} found"
            + (f", {self.repaired:,} repaired" if self.repair else "")
        )
        listed = len(self.findings)
        if listed < sum(self.counts.values()):
            lines.append(f"(the first {listed:,} findings are listed)")
        return "\n".join(lines)


class _Get(Operation["Item | None"]):
    """A consistent read of one item, as stored."""

    action = "get_item"

    def __init__(self, table: Table, key: Item) -> None:
        self.table = table
        self.key = key

    def params(self) -> dict[str, Any]:
        """The GetItem request."""
        return {"TableName": self.table.name, "Key": self.key, "ConsistentRead": True}

    def steps(self) -> Step[Item | None]:
        """One call."""
        response: dict[str, Any] = yield Call(self.action, self.params())
        item: Item | None = response.get("Item")
        return item


class _Transact(Operation[bool]):
    """A repair's transaction; ``False`` when a check failed (an item changed meanwhile)."""

    action = "transact_write_items"

    def __init__(self, entries: Sequence[TransactEntry]) -> None:
        self.entries = entries

    def params(self) -> dict[str, Any]:
        """The TransactWriteItems request."""
        return transact_request(self.entries, None)

    def steps(self) -> Step[bool]:
        """One call."""
        try:
            yield Call(self.action, self.params())
        except ServiceError as exc:
            if exc.code in ("TransactionCanceledException", "TransactionConflictException"):
                return False
            raise
        return True


def _constraint(plan: EntityPlan, fields: tuple[str, ...]) -> UniqueConstraint | None:
    return next((c for c in plan.unique if c.fields == fields), None)


def _held_values(
    table: Table, item: Item | None, entity: str, fields: tuple[str, ...]
) -> str | None:
    """The guard key text of the values ``item`` holds for the constraint (None: none)."""
    plan = None if item is None else item_plan(table, item)
    if item is None or plan is None or plan.name != entity:
        return None
    constraint = _constraint(plan, fields)
    if constraint is None:
        return None
    try:
        values = constraint.values(stored_values(plan, item, fields))
        return None if values is None else str(constraint.guard_key(values)[table.pk]["S"])
    except SingleTableError:  # a value the model no longer reads is no value it holds
        return None


def _entry(
    plan: EntityPlan, key: Item, condition: Condition, kind: str = "ConditionCheck"
) -> TransactEntry:
    """A transaction's ``ConditionCheck`` (or conditional ``Delete``) of the item ``key``."""
    ph = Placeholders()
    request: dict[str, Any] = {"TableName": plan.table.name, "Key": key}
    request["ConditionExpression"] = render_condition(condition, ph)
    ph.apply(request)
    return TransactEntry(plan.label, plan.table.name, key, {kind: request})


def _not_holding(plan: EntityPlan, values: Mapping[str, Any]) -> Condition:
    """On an item: it does not hold ``values`` (gone, another entity, other values)."""
    table = plan.table
    return or_(
        key_ref(table.pk).not_exists(),
        key_ref(table.entity_attribute) != {"S": plan.name},
        not_(values_unchanged(plan, values, values)),
    )


class GuardCheckWork:
    """The `UnitWork` of a check: one scan segment of one table, page by page.

    Args:
        db: The executor.
        tables: The model's tables, by name.
        report: Where findings and counts go (shared by the units, under a lock).
        progress: The display.
        repair: Repair what can be repaired.
        page_size: Scan ``Limit``.
    """

    def __init__(
        self,
        db: Executor,
        tables: Mapping[str, Table],
        report: UniqueCheckReport,
        progress: Progress,
        *,
        repair: bool = False,
        page_size: int | None = None,
    ) -> None:
        self.db = db
        self.tables = tables
        self.report = report
        self.progress = progress
        self.repair = repair
        self.page_size = page_size
        self._lock = threading.Lock()

    def __call__(self, unit: WorkUnit, ctx: UnitContext) -> None:
        """Run ``unit`` from its checkpoint to the end of its segment."""
        table = self.tables[str(unit.spec["table"])]
        segment, segments = int(unit.spec["segment"]), int(unit.spec["segments"])
        start = (ctx.checkpoint or {}).get("last_key")
        while True:
            page = self.db.execute(ScanPage(table, segment, segments, start, self.page_size))
            items: list[Item] = page.get("Items", [])
            ctx.spend(rcu=estimate_capacity(Scan(table), read=items).rcu)
            before = (sum(self.report.counts.values()), self.report.repaired)
            for item in items:
                if is_guard_item(table, item):
                    self._guard(table, item, ctx)
                else:
                    self._item(table, item, ctx)
            with self._lock:
                self.report.scanned += len(items)
                found = sum(self.report.counts.values()) - before[0]
                repaired = self.report.repaired - before[1]
            self.progress.update(scanned=len(items), failed=found, rewritten=repaired)
            start = page.get("LastEvaluatedKey")
            counts = {"scanned": len(items), "failed": found}
            if start is None:
                ctx.finish(counts)
                return
            ctx.save({"last_key": start}, counts)

    def _read(self, table: Table, key: Item, ctx: UnitContext) -> Item | None:
        ctx.spend(rcu=1.0)  # a consistent read of a small item
        return self.db.execute(_Get(table, key))

    def _found(
        self,
        finding: GuardFinding,
        repair: list[TransactEntry] | None,
        settled: Callable[[], bool] | None = None,
    ) -> None:
        """Count ``finding``; with `repair`, send its repair.

        A repair whose checks fail was overtaken by a write, possibly the repair of the
        same break seen from its other side (an orphaned guard that a missing value's
        repair took over): ``settled`` says whether the guard is right by now.
        """
        repaired = False
        if self.repair and repair is not None:
            repaired = self.db.execute(_Transact(repair))
            if not repaired and settled is not None and settled():
                repaired = True
                finding = replace(finding, detail=f"{finding.detail}; resolved meanwhile")
            elif not repaired:
                detail = f"{finding.detail}; not repaired: it changed meanwhile, check again"
                finding = replace(finding, detail=detail)
        finding = replace(finding, repaired=repaired)
        with self._lock:
            self.report.counts[finding.kind] += 1
            self.report.repaired += repaired
            if len(self.report.findings) < MAX_LISTED:
                self.report.findings.append(finding)

    def _settled(
        self,
        table: Table,
        key: Item,
        entity: str,
        fields: tuple[str, ...],
        ctx: UnitContext,
        *,
        absent: bool,
    ) -> bool:
        """Whether the guard ``key`` is held by an item holding its value (``absent``: or gone)."""
        guard = self._read(table, key, ctx)
        if guard is None:
            return absent
        holder = _holder_key(table, guard)
        if holder is None:
            return False
        held = _held_values(table, self._read(table, holder, ctx), entity, fields)
        return held is not None and held == str(key[table.pk]["S"])

    def _guard(self, table: Table, guard: Item, ctx: UnitContext) -> None:
        """A guard: its holder must hold its value."""
        with self._lock:
            self.report.guards += 1
        info = read_guard(table, guard)
        plans = [p for p in entity_plans(table) if p.name == info.entity]
        plan = next((p for p in plans if _constraint(p, info.fields) is not None), None)
        holder_fields = None
        if plan is not None and info.holder is not None:
            holder_fields = plan.fields_from_keys(info.holder) or dict(info.holder)
        common = (table.name, info.entity, info.fields, info.values, holder_fields)
        if plan is None:
            detail = "no entity of the model declares this constraint"
            self._found(GuardFinding("undeclared", *common, detail), None)
            return
        key = {a: guard[a] for a in table.key_attributes() if a in guard}
        pk = guard[table.pk]["S"]
        if info.holder is None:
            delete = _entry(plan, key, key_ref(GUARD_HOLDER_PK).not_exists(), "Delete")
            detail = "the guard names no holder"
            self._found(GuardFinding("orphaned", *common, detail), [delete])
            return
        holder = self._read(table, info.holder, ctx)
        if _held_values(table, holder, info.entity, info.fields) == pk:
            return
        detail = "its holder is gone" if holder is None else "its holder no longer holds the value"
        constraint = _constraint(plan, info.fields)
        assert constraint is not None  # plan was chosen for it
        attributes = constraint.holder_attributes(info.holder)
        held = and_(*(key_ref(a) == v for a, v in attributes.items()))
        repair = [
            _entry(plan, key, held, "Delete"),
            _entry(plan, info.holder, _not_holding(plan, info.values)),
        ]
        settled = partial(self._settled, table, key, info.entity, info.fields, ctx, absent=True)
        self._found(GuardFinding("orphaned", *common, detail), repair, settled)

    def _item(self, table: Table, item: Item, ctx: UnitContext) -> None:
        """An item of an entity with unique fields: each value must have its guard."""
        plan = item_plan(table, item)
        if plan is None or not plan.unique:
            return
        key = plan.key_of_item(item)
        try:
            stored = stored_values(plan, item, plan.unique_fields())
        except SingleTableError:
            return  # an item the model does not read: no values it could be said to hold
        for constraint in plan.unique:
            values = constraint.values(stored)
            if values is None:
                continue
            with self._lock:
                self.report.values += 1
            guard_key = constraint.guard_key(values)
            guard = self._read(table, guard_key, ctx)
            holder = None if guard is None else _holder_key(table, guard)
            if holder == key:
                continue
            common = (table.name, plan.name, constraint.fields, values, plan.fields_from_keys(key))
            pk = guard_key[table.pk]["S"]
            other = None if holder is None else self._read(table, holder, ctx)
            if (
                holder is not None
                and _held_values(table, other, plan.name, constraint.fields) == pk
            ):
                shown = plan.fields_from_keys(holder) or describe_key(holder)
                detail = (
                    f"the item with key {shown}, which its guard names, holds the value too: "
                    "two items share it"
                )
                self._found(GuardFinding("duplicate", *common, detail), None)
                continue
            claim = GuardWrite(constraint, True, values, moved_from=holder)
            repair = [
                guard_entry(plan, claim, key),
                _entry(plan, key, values_unchanged(plan, values, constraint.fields)),
            ]
            if holder is not None:
                repair.append(_entry(plan, holder, _not_holding(plan, values)))
                detail = (
                    f"its guard names the item with key {describe_key(holder)}, which does "
                    "not hold the value"
                )
            else:
                detail = "the value has no guard: another item could take it"
            settled = partial(
                self._settled, table, guard_key, plan.name, constraint.fields, ctx, absent=False
            )
            self._found(GuardFinding("missing", *common, detail), repair, settled)


def _holder_key(table: Table, guard: Item) -> Item | None:
    return read_guard(table, guard).holder


def check_unique(
    db: Executor,
    tables: Sequence[Table],
    *,
    repair: bool = False,
    segments: int = 1,
    page_size: int | None = None,
    progress_out: TextIO | None = None,
    progress_bar: bool | None = None,
    progress_interval: float = 1.0,
    label: str = "unique check",
) -> UniqueCheckReport:
    """Check (and with ``repair``, repair) the uniqueness guards of ``tables``' entities.

    Args:
        db: The executor (`singletable.Connection`).
        tables: The model's tables; the entities registered on them declare the
            constraints.
        repair: Delete orphaned guards and claim missing ones (see the module docs).
        segments: Parallel scan segments (threads) per table.
        page_size: Items per scan request (``None``: DynamoDB's 1 MB pages).
        progress_out: Where progress goes (default: stderr).
        progress_bar: Force (True) or suppress (False) the progress bar.
        progress_interval: Seconds between plain progress lines.
        label: What the progress display calls the check.

    Raises:
        ServiceError: A table does not exist, or a request failed.
        RequestLimitError: ``segments`` is not 1 to 1,000,000.
    """
    check_segment_count(segments)
    counts = [DescribeTable(t).run(db).get("ItemCount") for t in tables]
    total = sum(c for c in counts if c is not None) if None not in counts else None
    wording = CHECK_WORDING if repair else Wording("scanned", ("failed",), approximate=True)
    progress = Progress(
        label,
        total,
        progress_out or sys.stderr,
        interval=progress_interval,
        bar=progress_bar,
        wording=wording,
    )
    report = UniqueCheckReport(repair=repair)
    by_name = {t.name: t for t in tables}
    work = GuardCheckWork(db, by_name, report, progress, repair=repair, page_size=page_size)
    units = [
        WorkUnit("unique-check", "unique-check", i * segments + s, len(tables) * segments, spec)
        for i, table in enumerate(tables)
        for s in range(segments)
        for spec in [{"table": table.name, "segment": s, "segments": segments}]
    ]
    started = time.monotonic()
    try:
        run_units(units, work, workers=segments)
    finally:
        progress.close()
        report.seconds = time.monotonic() - started
    return report
