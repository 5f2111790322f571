"""The migration runner: applies what a `MigrationPlan` asks of a live table.

Two kinds of work:

* **Index changes** (``create_gsi``, ``delete_gsi``, ``recreate_gsi`` actions): one
  UpdateTable per GSI, as DynamoDB requires, each followed by waiting until the table and
  every index are ACTIVE again. Every step first looks at the live table, so a re-run
  skips what is already done.
* **Item rewrites** (``rewrite`` actions): a parallel Scan (one thread per segment) finds
  the items stored under the old identifier (``_et``/``_ev`` from the snapshot). Items
  carry every field as its own attribute, so each is decoded with the *new* entity plan
  and written as the new model would write it. When the primary key is unchanged the
  item is simply replaced; when it moves, the put of the new item (on condition that the
  new key is free) and the delete of the old one go in one transaction, so a crash never
  loses or duplicates an item. An item that the new model already writes identically is
  skipped, which makes a re-run do nothing. Progress (the last evaluated key of every
  segment) is saved to a checkpoint file after every page, so an interrupted run resumes.

Table migrations (key schema or LSI changes) are refused: they need a new table.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from singletable.attributes.size import item_size
from singletable.errors import MigrationError, ServiceError, SingleTableError
from singletable.io.connection import Connection
from singletable.model.definition import create_table_request, index_projection
from singletable.model.plan import EntityPlan
from singletable.model.table import Table
from singletable.tooling.planner import ChangeClass, MigrationPlan, plan_changes
from singletable.tooling.snapshot import Model, dumps, snapshot_json, tables_of
from singletable.tooling.unique import UniqueBackfillReport, backfill_unique
from singletable.types import Item

CHECKPOINT_VERSION = 1


@dataclass
class RewriteStats:
    """Counts for the rewrite of one entity (summed over segments)."""

    scanned: int = 0
    rewritten: int = 0
    moved: int = 0
    unchanged: int = 0
    failed: int = 0
    read_bytes: int = 0
    write_units: float = 0.0
    errors: list[str] = field(default_factory=list)

    def add(self, other: RewriteStats) -> None:
        """Add another segment's counts."""
        self.scanned += other.scanned
        self.rewritten += other.rewritten
        self.moved += other.moved
        self.unchanged += other.unchanged
        self.failed += other.failed
        self.read_bytes += other.read_bytes
        self.write_units += other.write_units
        self.errors.extend(other.errors[: max(0, 5 - len(self.errors))])

    @property
    def read_units(self) -> float:
        """Eventually consistent scan cost estimate: 0.5 RCU per 4 KB read."""
        return math.ceil(self.read_bytes / 4096) * 0.5


@dataclass
class MigrationReport:
    """What a run did (or, for a dry run, would do)."""

    dry_run: bool
    index_steps: list[str] = field(default_factory=list)
    rewrites: dict[str, RewriteStats] = field(default_factory=dict)
    #: Guard backfills of added uniqueness constraints, by task name.
    backfills: dict[str, UniqueBackfillReport] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        """Items that could not be rewritten (left as they were)."""
        return sum(s.failed for s in self.rewrites.values())

    def to_text(self) -> str:
        """A readable summary."""
        verb = "would" if self.dry_run else "did"
        lines = [f"migration {'dry run' if self.dry_run else 'run'}:"]
        if not self.index_steps and not self.rewrites and not self.backfills:
            lines.append("  nothing to do")
        for step in self.index_steps:
            lines.append(f"  index: {step}")
        for task, s in self.rewrites.items():
            lines.append(
                f"  rewrite {task}: {s.scanned} scanned, {verb} rewrite {s.rewritten} "
                f"({s.moved} to a new key), {s.unchanged} already current, {s.failed} failed; "
                f"~{s.read_units:g} RCU read, ~{s.write_units:g} WCU written"
            )
            lines.extend(f"    failed: {e}" for e in s.errors)
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
) -> MigrationReport:
    """Apply the plan between ``snapshot_doc`` and ``model`` to the live tables.

    Args:
        db: The connection to DynamoDB.
        model: The current model (a `Table` or tables).
        snapshot_doc: The snapshot the stored data was written with.
        dry_run: Change nothing; count the items to rewrite and estimate capacity.
        checkpoint: A JSON file recording each scan segment's progress; a run resumes
            from it, and finished segments are not scanned again. Delete it to rescan.
        segments: Parallel scan segments (threads) per entity.
        page_size: Scan ``Limit`` (items read per page, i.e. per checkpoint); default
            DynamoDB's 1 MB pages.
        out: Where progress lines go (default: stderr).
        poll_interval: Seconds between DescribeTable polls while an index changes.
        timeout: Seconds to wait for an index change before giving up.

    Raises:
        MigrationError: The plan needs a table migration, or an index change timed out.
        ValueError: ``segments`` is not 1 to 1,000,000.
    """
    if not 1 <= segments <= 1_000_000:
        # With no segment nothing would be scanned, and the run would report success.
        raise ValueError(f"segments must be 1 to 1,000,000 (DynamoDB's limit), got {segments}")
    out = out or sys.stderr
    plan = plan_changes(model, snapshot_doc)
    tables = {t.name: t for t in tables_of(model)}
    _refuse_table_migrations(plan)
    report = MigrationReport(dry_run=dry_run)
    runner = _Runner(db, out, poll_interval, timeout, dry_run)
    for change in plan.changes:
        if change.action is None or change.action["op"] in ("rewrite", "backfill_unique"):
            continue
        table = tables[change.table]
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
    for table_name, old_id, new_id in plan.rewrites():
        table = tables[table_name]
        old = snapshot_doc["tables"][table_name]
        task = f"{table_name}/{old_id}->{new_id}"
        rewrite = _Rewrite(db, table, old, old_id, new_id, out, dry_run, state, task, page_size)
        stats = rewrite.run(segments)
        report.rewrites[task] = stats
    # After the rewrites, so guards are built from the items as the new model stores them.
    for change in plan.changes:
        if change.action is None or change.action["op"] != "backfill_unique":
            continue
        name, version = _split_id(change.action["entity"])
        entity = tables[change.table].entity_plan(name, version)
        assert entity is not None
        fields = tuple(change.action["fields"])
        task = f"{change.table}/{change.action['entity']}/unique {'+'.join(fields)}"
        report.backfills[task] = backfill_unique(db, entity, fields, dry_run=dry_run)
    out.write(report.to_text())
    return report


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


class _Rewrite:
    def __init__(
        self,
        db: Connection,
        table: Table,
        old_table: Mapping[str, Any],
        old_id: str,
        new_id: str,
        out: TextIO,
        dry_run: bool,
        state: _Checkpoint,
        task: str,
        page_size: int | None,
    ) -> None:
        self.page_size = page_size
        self.db = db
        self.table = table
        self.out = out
        self.dry_run = dry_run
        self.state = state
        self.task = task
        name, version = _split_id(new_id)
        plan = table.entity_plan(name, version)
        if plan is None:  # pragma: no cover - the planner only pairs existing entities
            raise MigrationError(f"table {table.name}: no entity {new_id} in the model")
        self.plan: EntityPlan = plan
        self.old_name, self.old_version = _split_id(old_id)
        encoding = old_table["encoding"]
        self.old_et, self.old_ev = encoding["entity_attribute"], encoding["version_attribute"]
        self.key_attrs = [table.pk] + ([table.sk] if table.sk else [])
        self.lock = threading.Lock()

    def run(self, segments: int) -> RewriteStats:
        task = self.state.task(self.task, segments)
        total = int(task["total_segments"])  # a resumed run keeps the checkpoint's split
        todo = [i for i in range(total) if not task["segments"][str(i)]["done"]]
        verb = "counting" if self.dry_run else "rewriting"
        self.say(f"{verb} {self.task}: {len(todo)} of {total} segment(s) to scan")
        with ThreadPoolExecutor(max_workers=max(1, len(todo))) as pool:
            list(pool.map(lambda i: self.segment(i, total, task["segments"][str(i)]), todo))
        stats = RewriteStats()
        for i in range(total):
            stats.add(RewriteStats(**task["segments"][str(i)]["stats"]))
        return stats

    def segment(self, segment: int, total: int, saved: Mapping[str, Any]) -> None:
        stats = RewriteStats(**saved["stats"])
        start_key = saved["start_key"]
        page = 0
        while True:
            params: dict[str, Any] = {
                "TableName": self.table.name,
                "Segment": segment,
                "TotalSegments": total,
                "FilterExpression": "#et = :et AND #ev = :ev",
                "ExpressionAttributeNames": {"#et": self.old_et, "#ev": self.old_ev},
                "ExpressionAttributeValues": {
                    ":et": {"S": self.old_name},
                    ":ev": {"N": str(self.old_version)},
                },
            }
            if start_key is not None:
                params["ExclusiveStartKey"] = start_key
            if self.page_size is not None:
                params["Limit"] = self.page_size
            response = self.db.call("scan", params)
            for item in response.get("Items", []):
                self.item(item, stats)
            start_key = response.get("LastEvaluatedKey")
            page += 1
            self.state.save(self.task, segment, start_key, start_key is None, stats)
            self.say(
                f"  {self.task} segment {segment + 1}/{total} page {page}: {stats.scanned} "
                f"scanned, {stats.rewritten} rewritten, {stats.unchanged} current, "
                f"{stats.failed} failed"
            )
            if start_key is None:
                break

    def item(self, item: Item, stats: RewriteStats) -> None:
        stats.scanned += 1
        size = item_size(item)
        stats.read_bytes += size
        try:
            new_item = self.plan.to_item(self.plan.from_item(item))
        except (SingleTableError, ValueError) as exc:
            stats.failed += 1
            if len(stats.errors) < 5:
                stats.errors.append(f"{self._key_text(item)}: {exc}")
            return
        if new_item == item:
            stats.unchanged += 1
            return
        old_key = {a: item[a] for a in self.key_attrs}
        new_key = {a: new_item[a] for a in self.key_attrs}
        new_units = math.ceil(item_size(new_item) / 1024)
        moved = new_key != old_key
        if moved:
            stats.write_units += 2 * new_units + 2 * math.ceil(size / 1024)
        else:
            stats.write_units += new_units
        if not self.dry_run:
            try:
                self.write(item, new_item, old_key, moved)
            except (ServiceError, SingleTableError) as exc:
                stats.failed += 1
                if len(stats.errors) < 5:
                    stats.errors.append(f"{self._key_text(item)}: {exc}")
                return
        stats.rewritten += 1
        stats.moved += int(moved)

    def write(self, item: Item, new_item: Item, old_key: Item, moved: bool) -> None:
        if not moved:
            # Same key: replacing the whole item also drops attributes the new model no
            # longer writes (old index keys).
            self.db.call("put_item", {"TableName": self.table.name, "Item": new_item})
            return
        # New key: both halves in one transaction, and the new key must be free, so two
        # old items that the new template maps to one key cannot overwrite each other.
        self.db.call(
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
                    {"Delete": {"TableName": self.table.name, "Key": old_key}},
                ]
            },
        )

    def _key_text(self, item: Item) -> str:
        return ", ".join(
            f"{a}={next(iter(item[a].values()))!r}" for a in self.key_attrs if a in item
        )

    def say(self, text: str) -> None:
        with self.lock:
            self.out.write(text + "\n")
