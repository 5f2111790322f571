"""The migration runner: applies what a `MigrationPlan` asks of a live table.

Three kinds of work:

* **Index changes** (``create_gsi``, ``delete_gsi``, ``recreate_gsi`` actions): one
  UpdateTable per GSI, as DynamoDB requires, each followed by waiting until the table and
  every index are ACTIVE again. Every step first looks at the live table, so a re-run
  skips what is already done.
* **Item rewrites** (``rewrite`` actions): a parallel Scan (one thread per segment) reads
  the table; the items stored under the old identifier (``_et``/``_ev`` from the
  snapshot) are decoded with the *new* entity plan (or converted by a user transform)
  and written as the new model would write them. The Scan carries no filter: DynamoDB
  bills a filtered Scan for every item it reads anyway, and reading them all lets the
  dry run estimate the read cost from the bytes actually scanned.

  Every write is conditional on the item being unchanged since it was read: the
  entity's version attribute where it has one, otherwise every attribute read, by value
  (and the absence of every attribute either model writes that the item lacked). A
  conflicting write (a concurrent ``update().add(...)``, a put) makes the runner read the
  item again, consistently, and start over, so no concurrent write is lost. When the
  primary key is unchanged the item is replaced with a conditional put; when it moves,
  the put of the new item (on condition that the new key is free) and the conditional
  delete of the old one go in one transaction, so a crash never loses or duplicates an
  item. An item the new model already writes identically is skipped, which makes a
  re-run do nothing. The last evaluated key of every segment is saved to a checkpoint
  file after every page, so an interrupted run resumes.
* **TTL switches** (``switch_ttl`` actions): while the items of the table are rewritten
  they keep the old TTL attribute next to the new one, so they go on expiring under the
  current setting; then the table's TTL setting is moved to the new attribute
  (UpdateTimeToLive). DynamoDB takes one TTL change per table per hour: when it refuses
  the second step the run reports the switch as pending; run ``migrate`` again after the
  hour to finish it.

A change the planner flags ``needs_transform`` (a rewrite that fails for some values:
narrowed precision, a key field's type changed) is refused unless a *transform* is
supplied: a function from the stored item's values to the new model's field values.

Table migrations (key schema or LSI changes) are refused: they need a new table.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, TextIO

from singletable.attributes.convert import from_attribute_value
from singletable.attributes.size import item_size
from singletable.errors import MigrationError, ServiceError, SingleTableError
from singletable.io.connection import Connection
from singletable.model.definition import create_table_request, index_projection
from singletable.model.plan import EntityPlan, entity_plan
from singletable.model.table import Table
from singletable.operations.scan import check_segment_count
from singletable.tooling.jobs.progress import Counts, Progress
from singletable.tooling.migrations.backfill import UniqueBackfillReport, backfill_unique
from singletable.tooling.migrations.planner import Change, ChangeClass, MigrationPlan, plan_changes
from singletable.tooling.migrations.snapshot import Model, dumps, snapshot_json, tables_of
from singletable.types import Item

CHECKPOINT_VERSION = 2

#: A user transform: the stored item's values (plain Python, keyed by attribute name:
#: fields are stored under their names) to the new model's field values.
Transform = Callable[[Mapping[str, Any]], Mapping[str, Any]]

#: What `migrate` accepts as ``transform``: one function for every rewritten entity, or
#: a mapping from entity name (``"Order"``) or identifier (``"Order@2"``) to a function.
Transforms = Transform | Mapping[str, Transform] | None

#: DynamoDB's limit on the length of one expression (a condition, here).
_MAX_EXPRESSION = 4096

#: One TTL change per table per hour (UpdateTimeToLive), as output and docs state it.
TTL_LIMIT_NOTE = "DynamoDB allows one TTL change per table per hour"


@dataclass
class RewriteStats:
    """Counts and capacity for the rewrite of one entity (summed over segments).

    ``read_units`` and ``write_units`` are the estimate (from the bytes scanned and the
    items and index entries written); ``reported_*`` what DynamoDB reported for the run
    (``ReturnConsumedCapacity``; zero in a dry run, or where the backend reports none).
    """

    scanned: int = 0
    rewritten: int = 0
    moved: int = 0
    unchanged: int = 0
    skipped: int = 0
    gone: int = 0
    conflicts: int = 0
    failed: int = 0
    read_bytes: int = 0
    read_units: float = 0.0
    write_units: float = 0.0
    reported_read_units: float = 0.0
    reported_write_units: float = 0.0
    errors: list[str] = field(default_factory=list)

    def add(self, other: RewriteStats) -> None:
        """Add another segment's counts."""
        for f in fields(self):
            if f.name != "errors":
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        self.errors.extend(other.errors[: max(0, 5 - len(self.errors))])

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RewriteStats:
        """Stats from a checkpoint entry (unknown keys ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def counts(self) -> Counts:
        """The figures the progress display shows."""
        return Counts(
            scanned=self.scanned,
            rewritten=self.rewritten,
            skipped=self.skipped + self.unchanged + self.gone,
            failed=self.failed,
        )


@dataclass
class MigrationReport:
    """What a run did (or, for a dry run, would do)."""

    dry_run: bool
    index_steps: list[str] = field(default_factory=list)
    rewrites: dict[str, RewriteStats] = field(default_factory=dict)
    #: Guard backfills of added uniqueness constraints, by task name.
    backfills: dict[str, UniqueBackfillReport] = field(default_factory=dict)
    ttl_steps: list[str] = field(default_factory=list)
    #: TTL switches DynamoDB did not take yet (one change per hour): re-run to finish.
    ttl_pending: list[str] = field(default_factory=list)
    #: Rewrites that cannot be done mechanically and got no transform (dry run only;
    #: a real run refuses them), with the planner's reasons.
    needs_transform: dict[str, list[str]] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        """Items that could not be rewritten (left as they were)."""
        return sum(s.failed for s in self.rewrites.values())

    def to_text(self) -> str:
        """A readable summary."""
        verb = "would" if self.dry_run else "did"
        lines = [f"migration {'dry run' if self.dry_run else 'run'}:"]
        if not (self.index_steps or self.rewrites or self.ttl_steps or self.backfills):
            lines.append("  nothing to do")
        for step in self.index_steps:
            lines.append(f"  index: {step}")
        for task, s in self.rewrites.items():
            lines.append(
                f"  rewrite {task}: {s.scanned} scanned, {verb} rewrite {s.rewritten} "
                f"({s.moved} to a new key), {s.unchanged} already current, {s.skipped} "
                f"other entities', {s.failed} failed"
            )
            lines.append(
                f"    estimate: {s.read_units:g} RCU read ({s.read_bytes:,} bytes scanned, "
                f"billed for every item read), {s.write_units:g} WCU written (items and "
                "index entries)"
            )
            if not self.dry_run:
                lines.append(
                    f"    reported by DynamoDB: {s.reported_read_units:g} RCU, "
                    f"{s.reported_write_units:g} WCU; {s.conflicts} concurrent change(s) "
                    f"re-read and retried, {s.gone} item(s) deleted meanwhile"
                )
            for reason in self.needs_transform.get(task, []):
                lines.append(f"    needs a transform: {reason}")
            lines.extend(f"    failed: {e}" for e in s.errors)
        for task, reasons in self.needs_transform.items():
            if task not in self.rewrites:
                lines.extend(f"  needs a transform ({task}): {r}" for r in reasons)
        for step in self.ttl_steps:
            lines.append(f"  ttl: {step}")
        for step in self.ttl_pending:
            lines.append(f"  ttl pending: {step}")
        lines.extend(f"  {b.to_text()}" for b in self.backfills.values())
        return "\n".join(lines) + "\n"


def migrate(
    db: Connection,
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
) -> MigrationReport:
    """Apply the plan between ``snapshot_doc`` and ``model`` to the live tables.

    Safe to run while the application writes (see "Live migrations" in the docs): every
    rewrite is conditional on the item being unchanged since it was read, and retried
    from a fresh consistent read when it is not.

    Args:
        db: The connection to DynamoDB.
        model: The current model (a `Table` or tables).
        snapshot_doc: The snapshot the stored data was written with.
        dry_run: Change nothing; count the items to rewrite (and those that would fail)
            and estimate capacity.
        checkpoint: A JSON file recording each scan segment's progress; a run resumes
            from it, and finished segments are not scanned again. Delete it to rescan.
        segments: Parallel scan segments (threads) per entity.
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

    Raises:
        MigrationError: The plan needs a table migration, or a transform that was not
            supplied, or an index change timed out.
        RequestLimitError: ``segments`` is not 1 to 1,000,000 (also a `ValueError`).
    """
    check_segment_count(segments)
    out = out or sys.stderr
    plan = plan if plan is not None else plan_changes(model, snapshot_doc)
    tables = {t.name: t for t in tables_of(model)}
    _refuse_table_migrations(plan)
    report = MigrationReport(dry_run=dry_run)
    tasks = [
        (table_name, old_id, new_id, f"{table_name}/{old_id}->{new_id}")
        for table_name, old_id, new_id in plan.rewrites()
    ]
    transforms = {task: _transform_for(transform, new_id) for _, _, new_id, task in tasks}
    missing = _missing_transforms(plan, transforms, bare=callable(transform))
    if missing and not dry_run:
        detail = "; ".join(f"{task}: {'; '.join(reasons)}" for task, reasons in missing.items())
        raise MigrationError(
            f"cannot rewrite mechanically ({detail}). Supply a transform (API: "
            "migrate(..., transform=fn); CLI: --transform module:function) that turns the "
            "stored values into the new model's, and check it with --dry-run first"
        )
    report.needs_transform = missing
    runner = _Runner(db, out, poll_interval, timeout, dry_run)
    # Look at every live table first, even when there is nothing to do: a wrong endpoint,
    # region or table name must not pass for "nothing to do".
    created = {c.table for c in plan.changes if (c.action or {}).get("op") == "create_table"}
    for table in tables.values():
        if table.name not in created and runner.describe(table) is None:
            raise MigrationError(
                f"table {table.name} does not exist at this endpoint/region; check "
                "--endpoint-url/--region, or create it (deploy the template)"
            )
    ttl_switches: dict[str, tuple[str, str]] = {}
    for change in plan.changes:
        op = None if change.action is None else change.action["op"]
        if op is None or op in ("rewrite", "backfill_unique"):
            continue
        if op == "switch_ttl":
            assert change.action is not None
            ttl_switches[change.table] = (change.action["old"], change.action["new"])
            continue
        table = tables[change.table]
        assert change.action is not None
        report.index_steps.extend(runner.apply(table, change.action))
    # A dry run keeps its progress in memory: the real run must still scan everything.
    # The checkpoint belongs to this plan only: the same task name in a later migration
    # (the same entity rewritten again) must not read its segments as done.
    fingerprint = hashlib.sha256(
        (dumps(snapshot_doc) + snapshot_json(model)).encode("utf-8")
    ).hexdigest()
    state = (
        _Checkpoint.load(checkpoint, fingerprint)
        if checkpoint is not None and not dry_run
        else _Checkpoint(None)
    )
    failed_tables: set[str] = set()
    for table_name, old_id, new_id, task in tasks:
        table = tables[table_name]
        old = snapshot_doc["tables"][table_name]
        switch = ttl_switches.get(table_name)
        rewrite = _Rewrite(
            db,
            table,
            old,
            old_id,
            new_id,
            _Options(
                out=out,
                dry_run=dry_run,
                state=state,
                task=task,
                page_size=page_size,
                transform=transforms[task],
                keep=frozenset({switch[0]} if switch and switch[0] != switch[1] else ()),
                progress_interval=progress_interval,
                progress_bar=progress_bar,
                max_attempts=max_attempts,
                total=runner.item_count(table),
            ),
        )
        stats = rewrite.run(segments)
        report.rewrites[task] = stats
        if stats.failed:
            failed_tables.add(table_name)
    for table_name, (old_attr, new_attr) in ttl_switches.items():
        table = tables[table_name]
        if table_name in failed_tables:
            report.ttl_pending.append(
                f"table {table_name}: TTL stays on {old_attr!r}: some items could not be "
                f"rewritten, so not every item carries {new_attr!r} yet"
            )
            continue
        done, pending = runner.switch_ttl(table, old_attr, new_attr)
        report.ttl_steps.extend(done)
        report.ttl_pending.extend(pending)
    # After the rewrites, so guards are built from the items as the new model stores them.
    for change in plan.changes:
        if change.action is None or change.action["op"] != "backfill_unique":
            continue
        name, version = _split_id(change.action["entity"])
        entity = entity_plan(tables[change.table], name, version)
        assert entity is not None
        fields = tuple(change.action["fields"])
        task = f"{change.table}/{change.action['entity']}/unique {'+'.join(fields)}"
        report.backfills[task] = backfill_unique(db, entity, fields, dry_run=dry_run)
    out.write(report.to_text())
    out.flush()
    return report


def _transform_for(transform: Transforms, new_id: str) -> Transform | None:
    if transform is None or callable(transform):
        return transform
    name = new_id.rpartition("@")[0]
    return transform.get(new_id) or transform.get(name)


def _missing_transforms(
    plan: MigrationPlan, transforms: Mapping[str, Transform | None], *, bare: bool
) -> dict[str, list[str]]:
    """Task -> reasons, for changes flagged ``needs_transform`` that got no transform."""
    missing: dict[str, list[str]] = {}
    for change in plan.changes:
        reason = getattr(change, "needs_transform", None)
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


# -- index changes ----------------------------------------------------------------------


class _Runner:
    def __init__(
        self, db: Connection, out: TextIO, poll: float, timeout: float, dry_run: bool
    ) -> None:
        self.db = db
        self.out = out
        self.poll = poll
        self.timeout = timeout
        self.dry_run = dry_run

    def describe(self, table: Table) -> dict[str, Any] | None:
        try:
            response = self.db.call("describe_table", {"TableName": table.name})
        except ServiceError as exc:
            if exc.code == "ResourceNotFoundException":
                return None
            raise
        described: dict[str, Any] = response["Table"]
        return described

    def item_count(self, table: Table) -> int | None:
        """DynamoDB's (approximate, refreshed about every six hours) item count."""
        described = self.describe(table)
        return None if described is None else described.get("ItemCount")

    def switch_ttl(self, table: Table, old: str, new: str) -> tuple[list[str], list[str]]:
        """Move the table's TTL setting from ``old`` to ``new``: (steps done, pending)."""
        if self.dry_run:
            return [
                f"would switch TTL on {table.name} from {old!r} to {new!r} (disable, then "
                f"enable; {TTL_LIMIT_NOTE}, so the second step may need a re-run an hour "
                "later; items keep both attributes meanwhile)"
            ], []
        described = self.db.call("describe_time_to_live", {"TableName": table.name})
        ttl = described.get("TimeToLiveDescription", {})
        status, attribute = ttl.get("TimeToLiveStatus", "DISABLED"), ttl.get("AttributeName")
        steps: list[str] = []
        if status in ("ENABLED", "ENABLING") and attribute == new:
            return [f"TTL on {table.name} already reads {new!r}"], []
        if status in ("ENABLED", "ENABLING"):
            try:
                self.set_ttl(table, attribute or old, enabled=False)
            except ServiceError as exc:
                if exc.code != "ValidationException":
                    raise
                return steps, [self.pending(table, old, new, exc, disabled=False)]
            steps.append(f"TTL on {table.name} disabled on {attribute or old!r}")
        try:
            self.set_ttl(table, new, enabled=True)
        except ServiceError as exc:
            if exc.code != "ValidationException":
                raise
            return steps, [self.pending(table, old, new, exc, disabled=True)]
        steps.append(f"TTL on {table.name} enabled on {new!r} ({TTL_LIMIT_NOTE})")
        return steps, []

    def set_ttl(self, table: Table, attribute: str, *, enabled: bool) -> None:
        self.say(f"{'enabling' if enabled else 'disabling'} TTL on {table.name} ({attribute!r})")
        spec = {"Enabled": enabled, "AttributeName": attribute}
        self.db.call(
            "update_time_to_live", {"TableName": table.name, "TimeToLiveSpecification": spec}
        )

    @staticmethod
    def pending(table: Table, old: str, new: str, exc: ServiceError, *, disabled: bool) -> str:
        state = (
            f"TTL is disabled (was {old!r}); nothing expires until it is enabled on {new!r}"
            if disabled
            else f"TTL still reads {old!r}"
        )
        return (
            f"table {table.name}: {state}. DynamoDB refused the change ({exc.message}): "
            f"{TTL_LIMIT_NOTE}; run migrate again after the hour to finish the switch"
        )

    def live_gsis(self, table: Table) -> dict[str, dict[str, Any]]:
        described = self.describe(table) or {}
        return {g["IndexName"]: g for g in described.get("GlobalSecondaryIndexes", [])}

    def apply(self, table: Table, action: Mapping[str, Any]) -> list[str]:
        op = action["op"]
        if op == "create_table":
            if self.describe(table) is not None:
                return []
            if not self.dry_run:
                self.say(f"creating table {table.name}")
                self.db.create_table(table)
            return [f"create table {table.name}"]
        name = action["index"]
        live = self.live_gsis(table)
        steps: list[str] = []
        stale = name in live and (
            op == "delete_gsi"
            or (op == "recreate_gsi" and not self.matches(table, name, live[name]))
        )
        if stale:
            steps.append(f"delete GSI {name} on {table.name}")
            if not self.dry_run:
                self.update(table, {"Delete": {"IndexName": name}}, [])
            live.pop(name)
        if op in ("create_gsi", "recreate_gsi") and name not in live:
            steps.append(f"create GSI {name} on {table.name} (backfills)")
            if not self.dry_run:
                self.create_gsi(table, name)
        return steps

    def matches(self, table: Table, name: str, live: Mapping[str, Any]) -> bool:
        index = table.indexes[name]
        want = {e["IndexName"]: e for e in create_table_request(table)["GlobalSecondaryIndexes"]}
        have_proj = live.get("Projection", {})
        want_proj = index_projection(table, index)
        return bool(
            live.get("KeySchema") == want[name]["KeySchema"]
            and have_proj.get("ProjectionType") == want_proj["ProjectionType"]
            and sorted(have_proj.get("NonKeyAttributes", []))
            == sorted(want_proj.get("NonKeyAttributes", []))
        )

    def create_gsi(self, table: Table, name: str) -> None:
        request = create_table_request(table)
        entry = next(e for e in request["GlobalSecondaryIndexes"] if e["IndexName"] == name)
        attrs = {k["AttributeName"] for k in entry["KeySchema"]}
        definitions = [d for d in request["AttributeDefinitions"] if d["AttributeName"] in attrs]
        self.update(table, {"Create": entry}, definitions)

    def update(self, table: Table, update: dict[str, Any], definitions: list[Any]) -> None:
        what = "creating" if "Create" in update else "deleting"
        name = next(iter(update.values()))["IndexName"]
        self.say(f"{what} GSI {name} on {table.name}")
        params: dict[str, Any] = {"TableName": table.name, "GlobalSecondaryIndexUpdates": [update]}
        if definitions:
            params["AttributeDefinitions"] = definitions
        self.db.call("update_table", params)
        self.wait(table, name, gone="Delete" in update)

    def wait(self, table: Table, name: str, *, gone: bool) -> None:
        # DynamoDB takes one index change at a time: the next UpdateTable must wait until
        # the table and every index are ACTIVE (a new GSI stays CREATING while it backfills).
        deadline = time.monotonic() + self.timeout
        while True:
            described = self.describe(table) or {}
            gsis = {g["IndexName"]: g for g in described.get("GlobalSecondaryIndexes", [])}
            settled = described.get("TableStatus") == "ACTIVE" and all(
                g.get("IndexStatus", "ACTIVE") == "ACTIVE" for g in gsis.values()
            )
            if settled and (name not in gsis if gone else name in gsis):
                self.say(f"GSI {name} on {table.name} {'deleted' if gone else 'ACTIVE'}")
                return
            if time.monotonic() > deadline:
                raise MigrationError(
                    f"table {table.name}: GSI {name} not {'gone' if gone else 'ACTIVE'} after "
                    f"{self.timeout:g}s; re-run the migration to continue"
                )
            time.sleep(self.poll)

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()


# -- checkpoint -------------------------------------------------------------------------


class _Checkpoint:
    """Per-segment scan progress, saved after every page (atomically, by rename)."""

    def __init__(self, path: Path | None, data: dict[str, Any] | None = None) -> None:
        self.path = path
        self.data: dict[str, Any] = data or {"version": CHECKPOINT_VERSION, "tasks": {}}
        self.lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path, fingerprint: str) -> _Checkpoint:
        path = Path(path)
        if not path.exists():
            checkpoint = cls(path)
            checkpoint.data["plan"] = fingerprint
            return checkpoint
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise MigrationError(
                f"checkpoint {path}: unreadable ({exc}); delete it to restart"
            ) from None
        if not isinstance(data, dict) or data.get("version") != CHECKPOINT_VERSION:
            raise MigrationError(
                f"checkpoint {path}: not a version {CHECKPOINT_VERSION} checkpoint; delete it "
                "to restart"
            )
        if data.setdefault("plan", fingerprint) != fingerprint:
            raise MigrationError(
                f"checkpoint {path}: written by another migration (another snapshot or "
                "model); delete it to start this one, or pass another --checkpoint file"
            )
        return cls(path, data)

    def task(self, name: str, segments: int) -> dict[str, Any]:
        with self.lock:
            tasks = self.data["tasks"]
            if name not in tasks:
                tasks[name] = {
                    "total_segments": segments,
                    "segments": {
                        str(i): {"done": False, "start_key": None, "stats": asdict(RewriteStats())}
                        for i in range(segments)
                    },
                }
            task: dict[str, Any] = tasks[name]
            return task

    def save(
        self, name: str, segment: int, start_key: Any, done: bool, stats: RewriteStats
    ) -> None:
        with self.lock:
            entry = self.data["tasks"][name]["segments"][str(segment)]
            entry.update(done=done, start_key=start_key, stats=asdict(stats))
            if self.path is None:
                return
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text(json.dumps(self.data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            os.replace(tmp, self.path)


# -- item rewrites ----------------------------------------------------------------------


def _split_id(ident: str) -> tuple[str, int]:
    name, _, version = ident.rpartition("@")
    return name, int(version)


@dataclass(frozen=True)
class _Options:
    out: TextIO
    dry_run: bool
    state: _Checkpoint
    task: str
    page_size: int | None
    transform: Transform | None
    #: Attributes stored items keep although the new model does not write them (the old
    #: TTL attribute during a TTL switch).
    keep: frozenset[str]
    progress_interval: float
    progress_bar: bool | None
    max_attempts: int
    total: int | None


class _Conflict(Exception):
    """The item changed since it was read (or a transaction was in flight on it)."""


class _KeyTaken(Exception):
    """A moved item's new key already holds an item."""


class _Unconvertible(Exception):
    """The item cannot be turned into a new-model item (decode, validate or encode)."""


def _units(size: int, block: int) -> int:
    return math.ceil(size / block)


class _Rewrite:
    def __init__(
        self,
        db: Connection,
        table: Table,
        old_table: Mapping[str, Any],
        old_id: str,
        new_id: str,
        options: _Options,
    ) -> None:
        self.db = db
        self.table = table
        self.o = options
        name, version = _split_id(new_id)
        plan = entity_plan(table, name, version)
        if plan is None:  # pragma: no cover - the planner only pairs existing entities
            raise MigrationError(f"table {table.name}: no entity {new_id} in the model")
        self.plan: EntityPlan = plan
        self.old_name, self.old_version = _split_id(old_id)
        encoding = old_table["encoding"]
        self.old_et, self.old_ev = encoding["entity_attribute"], encoding["version_attribute"]
        self.key_attrs = [table.pk] + ([table.sk] if table.sk else [])
        old_entity: Mapping[str, Any] = old_table.get("entities", {}).get(old_id) or {}
        self.lock_attribute = self._lock_attribute(old_entity)
        self.known = self._known_attributes(old_table, old_entity)
        self.progress: Progress | None = None

    # -- what "unchanged since read" means -----------------------------------------------

    def _lock_attribute(self, old_entity: Mapping[str, Any]) -> str | None:
        """The version attribute, when both the old and the new model keep one there.

        Every write through such an entity bumps it, so comparing it alone detects any
        concurrent write; otherwise the condition compares every attribute.
        """
        field_name = self.plan.version_field
        if field_name is None or old_entity.get("version_field") != field_name:
            return None
        return self.plan.fields[field_name].attribute

    def _known_attributes(
        self, old_table: Mapping[str, Any], old_entity: Mapping[str, Any]
    ) -> frozenset[str]:
        """Every attribute either model may write for this entity.

        A concurrent writer can add one the scanned item lacked (``ADD`` to a missing
        counter); the condition requires each of them to be still absent.
        """
        names = {f.attribute for f in self.plan.fields.values()}
        names.update(self.key_attrs)
        names.update(self.table.key_attributes())
        names.update((self.table.entity_attribute, self.table.version_attribute))
        names.update(a for a in (self.table.ttl_attribute,) if a)
        names.update(old_entity.get("attributes") or {})
        for keys in (old_entity.get("keys") or {}).values():
            for role in ("pk", "sk"):
                attribute = (keys or {}).get(role) and keys[role].get("attribute")
                if attribute:
                    names.add(attribute)
        settings = old_table.get("settings") or {}
        if isinstance(settings.get("ttl_attribute"), str):
            names.add(settings["ttl_attribute"])
        names.update(self.o.keep)
        return frozenset(names)

    def unchanged_condition(self, item: Item) -> tuple[str, dict[str, str], dict[str, Any]]:
        """A condition true only while the stored item is exactly ``item``."""
        names: dict[str, str] = {}
        values: dict[str, Any] = {}
        clauses: list[str] = []
        if self.lock_attribute is not None:
            names["#v"] = self.lock_attribute
            if self.lock_attribute in item:
                values[":v"] = item[self.lock_attribute]
                clauses.append("#v = :v")
            else:
                clauses.append("attribute_not_exists(#v)")
            return " AND ".join(clauses), names, values
        for i, (attribute, value) in enumerate(sorted(item.items())):
            names[f"#a{i}"] = attribute
            values[f":a{i}"] = value
            clauses.append(f"#a{i} = :a{i}")
        for j, attribute in enumerate(sorted(self.known - item.keys())):
            names[f"#n{j}"] = attribute
            clauses.append(f"attribute_not_exists(#n{j})")
        expression = " AND ".join(clauses)
        if len(expression) > _MAX_EXPRESSION:
            raise _Unconvertible(
                f"{len(item)} attributes make a condition longer than DynamoDB's "
                f"{_MAX_EXPRESSION}-byte limit; give {self.plan.label} a version_field so "
                "the rewrite can check the version alone"
            )
        return expression, names, values

    # -- the scan ------------------------------------------------------------------------

    def run(self, segments: int) -> RewriteStats:
        task = self.o.state.task(self.o.task, segments)
        total = int(task["total_segments"])  # a resumed run keeps the checkpoint's split
        todo = [i for i in range(total) if not task["segments"][str(i)]["done"]]
        done = RewriteStats()
        for i in range(total):
            done.add(RewriteStats.from_dict(task["segments"][str(i)]["stats"]))
        verb = "count" if self.o.dry_run else "rewrite"
        self.o.out.write(f"{verb} {self.o.task}: {len(todo)} of {total} segment(s) to scan\n")
        self.progress = Progress(
            f"{verb} {self.o.task}",
            self.o.total,
            self.o.out,
            done=done.counts(),
            interval=self.o.progress_interval,
            bar=self.o.progress_bar,
        )
        try:
            with ThreadPoolExecutor(max_workers=max(1, len(todo))) as pool:
                list(pool.map(lambda i: self.segment(i, total, task["segments"][str(i)]), todo))
        finally:
            self.progress.close()
        stats = RewriteStats()
        for i in range(total):
            stats.add(RewriteStats.from_dict(task["segments"][str(i)]["stats"]))
        return stats

    def segment(self, segment: int, total: int, saved: Mapping[str, Any]) -> None:
        stats = RewriteStats.from_dict(saved["stats"])
        start_key = saved["start_key"]
        while True:
            # No FilterExpression: DynamoDB bills a Scan for every item it reads, filter
            # or not; reading them all costs the same and lets the estimate count them.
            params: dict[str, Any] = {
                "TableName": self.table.name,
                "Segment": segment,
                "TotalSegments": total,
                "ReturnConsumedCapacity": "INDEXES",
            }
            if start_key is not None:
                params["ExclusiveStartKey"] = start_key
            if self.o.page_size is not None:
                params["Limit"] = self.o.page_size
            response = self.db.call("scan", params)
            stats.reported_read_units += _consumed(response)
            items = response.get("Items", [])
            page_bytes = sum(item_size(item) for item in items)
            stats.read_bytes += page_bytes
            # Billed per request on the summed size of the items read, rounded up to 4 KB
            # once (0.5 RCU per block, eventually consistent).
            stats.read_units += _units(page_bytes, 4096) * 0.5
            before = stats.counts()
            for item in items:
                self.item(item, stats)
            start_key = response.get("LastEvaluatedKey")
            self.o.state.save(self.o.task, segment, start_key, start_key is None, stats)
            after = stats.counts()
            assert self.progress is not None
            self.progress.update(
                scanned=after.scanned - before.scanned,
                rewritten=after.rewritten - before.rewritten,
                skipped=after.skipped - before.skipped,
                failed=after.failed - before.failed,
            )
            if start_key is None:
                break

    # -- one item ------------------------------------------------------------------------

    def ours(self, item: Item) -> bool:
        return item.get(self.old_et) == {"S": self.old_name} and item.get(self.old_ev) == {
            "N": str(self.old_version)
        }

    def convert(self, item: Item) -> Item:
        """The item as the new model writes it (via the transform, when there is one)."""
        try:
            if self.o.transform is not None:
                values = self.o.transform({a: from_attribute_value(av) for a, av in item.items()})
                new_item = self.plan.to_item(self.plan.model.model_validate(dict(values)))
            else:
                new_item = self.plan.to_item(self.plan.from_item(item))
        except (SingleTableError, ValueError) as exc:
            raise _Unconvertible(str(exc)) from None
        except Exception as exc:
            if self.o.transform is None:
                raise
            # The user's function failed on this item: count it, like any other item
            # that cannot be rewritten, rather than stop the whole run.
            raise _Unconvertible(
                f"transform raised {type(exc).__name__}: {exc}".replace("\n", " ")
            ) from None
        for attribute in self.o.keep:
            if attribute in item and attribute not in new_item:
                new_item[attribute] = item[attribute]
        return new_item

    def item(self, item: Item, stats: RewriteStats) -> None:
        stats.scanned += 1
        if not self.ours(item):
            stats.skipped += 1
            return
        current: Item | None = item
        for attempt in range(self.o.max_attempts):
            if current is None or not self.ours(current):
                stats.gone += 1  # deleted (or rewritten by the new code) meanwhile
                return
            try:
                new_item = self.convert(current)
                if new_item == current:
                    stats.unchanged += 1
                    return
                old_key = {a: current[a] for a in self.key_attrs}
                moved = any(new_item.get(a) != v for a, v in old_key.items())
                if attempt == 0:
                    stats.write_units += self.write_estimate(current, new_item, moved)
                if not self.o.dry_run:
                    self.write(current, new_item, old_key, moved, stats)
            except _Unconvertible as exc:
                self.fail(stats, current, str(exc))
                return
            except _KeyTaken:
                self.fail(
                    stats,
                    current,
                    "its new key already holds an item (two old keys map to one new key?)",
                )
                return
            except _Conflict:
                stats.conflicts += 1
                # Someone wrote the item since it was read: start over from what is stored
                # now (a consistent read, so the retry sees that write).
                time.sleep(random.uniform(0, 0.005 * min(attempt + 1, 10)))
                current = self.read(old_key, stats)
                continue
            except ServiceError as exc:
                self.fail(stats, current, str(exc))
                return
            stats.rewritten += 1
            stats.moved += int(moved)
            return
        self.fail(
            stats,
            item,
            f"changed by other writers {self.o.max_attempts} times while being rewritten; "
            "run migrate again",
        )

    def fail(self, stats: RewriteStats, item: Item, reason: str) -> None:
        stats.failed += 1
        if len(stats.errors) < 5:
            stats.errors.append(f"{self._key_text(item)}: {reason}")

    def read(self, key: Item, stats: RewriteStats) -> Item | None:
        response = self.db.call(
            "get_item",
            {
                "TableName": self.table.name,
                "Key": key,
                "ConsistentRead": True,
                "ReturnConsumedCapacity": "INDEXES",
            },
        )
        stats.reported_read_units += _consumed(response)
        found: Item | None = response.get("Item")
        return found

    def write(
        self, item: Item, new_item: Item, old_key: Item, moved: bool, stats: RewriteStats
    ) -> None:
        condition, names, values = self.unchanged_condition(item)
        if self.lock_attribute is not None:
            # Bump the version, so a writer holding the item as it was read before the
            # rewrite gets a version conflict and re-reads it, as after any other write.
            stored = new_item.get(self.lock_attribute, {"N": "0"}).get("N", "0")
            new_item = {**new_item, self.lock_attribute: {"N": str(int(stored) + 1)}}
        guarded: dict[str, Any] = {"ConditionExpression": condition}
        guarded["ExpressionAttributeNames"] = names
        if values:
            guarded["ExpressionAttributeValues"] = values
        try:
            if not moved:
                # Same key: replacing the whole item also drops attributes the new model
                # no longer writes (old index keys).
                response = self.db.call(
                    "put_item",
                    {
                        "TableName": self.table.name,
                        "Item": new_item,
                        "ReturnConsumedCapacity": "INDEXES",
                        **guarded,
                    },
                )
            else:
                # New key: both halves in one transaction; the new key must be free (two
                # old items that the new template maps to one key cannot overwrite each
                # other) and the old item unchanged since it was read.
                response = self.db.call(
                    "transact_write_items",
                    {
                        "TransactItems": [
                            {
                                "Put": {
                                    "TableName": self.table.name,
                                    "Item": new_item,
                                    "ConditionExpression": "attribute_not_exists(#pk)",
                                    "ExpressionAttributeNames": {"#pk": self.table.pk},
                                }
                            },
                            {"Delete": {"TableName": self.table.name, "Key": old_key, **guarded}},
                        ],
                        "ReturnConsumedCapacity": "INDEXES",
                    },
                )
        except ServiceError as exc:
            stats.reported_write_units += _consumed(exc.response)
            _raise_conflict(exc, moved)
            raise
        stats.reported_write_units += _consumed(response)

    # -- cost ----------------------------------------------------------------------------

    def write_estimate(self, item: Item, new_item: Item, moved: bool) -> float:
        """Write units for the rewrite of one item, index entries included.

        A put that replaces an item is billed on the larger of the two, 1 WCU per 1 KB; a
        transaction 2 per 1 KB for each of its put and delete. Each index entry written,
        changed or deleted adds its own units (1 per 1 KB of the projected entry); a key
        move deletes every old entry and writes every new one.
        """
        old_size, new_size = item_size(item), item_size(new_item)
        factor = 2 if moved else 1
        if moved:
            units = 2 * (_units(new_size, 1024) + _units(old_size, 1024))
        else:
            units = _units(max(old_size, new_size), 1024)
        for name, index in self.table.indexes.items():
            before = self._index_entry(name, index, item)
            after = self._index_entry(name, index, new_item)
            if before is None and after is None:
                continue
            if before is None or after is None or moved:
                entries = [e for e in (before, after) if e is not None]
                units += factor * sum(_units(item_size(e), 1024) for e in entries)
                continue
            schema = self.table.key_schema(name)
            index_keys = [a for a in (schema.pk, schema.sk) if a]
            if any(before.get(a) != after.get(a) for a in index_keys):
                units += _units(item_size(before), 1024) + _units(item_size(after), 1024)
            elif before != after:
                units += _units(max(item_size(before), item_size(after)), 1024)
        return float(units)

    def _index_entry(self, name: str, index: Any, item: Item) -> Item | None:
        schema = self.table.key_schema(name)
        index_keys = [a for a in (schema.pk, schema.sk) if a]
        if any(a not in item for a in index_keys):
            return None  # sparse: the item is not in this index
        projection = index_projection(self.table, index)
        kind = projection["ProjectionType"]
        if kind == "ALL":
            return dict(item)
        wanted = set(self.key_attrs) | set(index_keys)
        if kind == "INCLUDE":
            wanted.update(projection.get("NonKeyAttributes", []))
        return {a: v for a, v in item.items() if a in wanted}

    def _key_text(self, item: Item) -> str:
        return ", ".join(
            f"{a}={next(iter(item[a].values()))!r}" for a in self.key_attrs if a in item
        )


def _consumed(response: Mapping[str, Any]) -> float:
    consumed = response.get("ConsumedCapacity")
    if consumed is None:
        return 0.0
    entries = consumed if isinstance(consumed, list) else [consumed]
    return sum(float(e.get("CapacityUnits", 0.0)) for e in entries)


def _raise_conflict(exc: ServiceError, moved: bool) -> None:
    """Turn a refused conditional write into `_Conflict` / `_KeyTaken`; else return."""
    if exc.code in ("ConditionalCheckFailedException", "TransactionConflictException"):
        raise _Conflict() from None
    if exc.code != "TransactionCanceledException":
        return
    reasons = exc.response.get("CancellationReasons")
    if reasons:
        codes = [r.get("Code") for r in reasons]
    else:
        # Some backends leave the reasons out of the parsed response; DynamoDB always
        # lists them in the message: "... reasons [ConditionalCheckFailed, None]".
        listed = exc.message.rpartition("[")[2].rstrip("]")
        codes = [c.strip() for c in listed.split(",")]
    if moved and codes and codes[0] == "ConditionalCheckFailed":
        raise _KeyTaken() from None
    if any(c in ("ConditionalCheckFailed", "TransactionConflict") for c in codes):
        raise _Conflict() from None
