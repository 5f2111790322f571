"""The deployed table against the model: differences classified like the planner's.

`describe_deployed` reads the live table (DescribeTable, DescribeTimeToLive and
DescribeContinuousBackups, each an operation sent through the executor); `drift` compares
that description with the model's `TableDefinition`, purely, and names every difference
with the planner's `ChangeClass`, read as "what it takes to make the live table the
model's": a GSI missing is an online index change, a key schema that differs is a table
migration, a billing mode, stream, TTL or point-in-time recovery setting is safe (an
UpdateTable or UpdateTimeToLive) but still a difference. Tags are not compared
(DescribeTable does not return them).

DynamoDB Local implements no backups: where DescribeContinuousBackups is an unknown
operation, point-in-time recovery is reported as not compared rather than as a difference.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from singletable.errors import ServiceError
from singletable.model.definition import (
    IndexDefinition,
    TableDefinition,
    projection_of,
    table_definition,
)
from singletable.model.table import Table
from singletable.operations.protocol import Executor
from singletable.operations.tables import DescribeTable
from singletable.tooling.migrations.indexes import Request
from singletable.tooling.migrations.planner import Change, ChangeClass


@dataclass(frozen=True)
class Deployed:
    """What the describe calls returned for one table (``None``: not there / not known).

    Attributes:
        table: DescribeTable's ``Table``; ``None`` when the table does not exist.
        ttl: DescribeTimeToLive's ``TimeToLiveDescription``.
        backups: DescribeContinuousBackups' ``ContinuousBackupsDescription``; ``None``
            where the endpoint implements no backups (DynamoDB Local).
    """

    table: Mapping[str, Any] | None
    ttl: Mapping[str, Any] | None = None
    backups: Mapping[str, Any] | None = None


def describe_deployed(db: Executor, table: Table | str) -> Deployed:
    """Describe the live table, its TTL and its continuous backups."""
    name = table if isinstance(table, str) else table.name
    try:
        described: dict[str, Any] = db.execute(DescribeTable(name))
    except ServiceError as exc:
        if exc.code != "ResourceNotFoundException":
            raise
        return Deployed(None)
    ttl = db.execute(Request("describe_time_to_live", {"TableName": name}))
    try:
        backups = db.execute(Request("describe_continuous_backups", {"TableName": name}))
    except ServiceError as exc:
        if exc.code != "UnknownOperationException":
            raise
        backups = None
    return Deployed(
        described,
        ttl.get("TimeToLiveDescription", {}),
        None if backups is None else backups.get("ContinuousBackupsDescription", {}),
    )


@dataclass(frozen=True)
class DriftReport:
    """The differences between the deployed tables and the model."""

    changes: tuple[Change, ...] = ()
    #: What could not be compared, and why (e.g. backups on DynamoDB Local).
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def worst(self) -> ChangeClass | None:
        """The most expensive class among the differences (``None``: no difference)."""
        if not self.changes:
            return None
        return max((c.kind for c in self.changes), key=lambda k: k.severity)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "worst": None if self.worst is None else self.worst.value,
            "changes": [c.to_dict() for c in self.changes],
            "notes": list(self.notes),
        }

    def to_json(self) -> str:
        """The report as indented JSON with a trailing newline."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_text(self) -> str:
        """One line per difference (class, subject), its reason below, grouped by table."""
        lines: list[str] = []
        if self.worst is None:
            lines.append("No drift: the deployed tables match the model.")
        else:
            lines.append(f"{len(self.changes)} difference(s); worst: {self.worst.value}")
        table = None
        for change in self.changes:
            if change.table != table:
                table = change.table
                lines.append(f"\ntable {table}:")
            lines.append(f"  [{change.kind.value}] {change.subject}")
            lines.append(f"      {change.reason}")
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines) + "\n"


def check_deployed(db: Executor, tables: Table | Sequence[Table]) -> DriftReport:
    """Describe every table of the model at ``db``'s endpoint and compare (`drift`)."""
    many = [tables] if isinstance(tables, Table) else list(tables)
    reports = [drift(t, describe_deployed(db, t)) for t in many]
    return DriftReport(
        tuple(c for r in reports for c in r.changes), tuple(n for r in reports for n in r.notes)
    )


def drift(table: Table | TableDefinition, deployed: Deployed) -> DriftReport:
    """The differences between ``deployed`` and the model's definition of the table."""
    want = table_definition(table) if isinstance(table, Table) else table
    if deployed.table is None:
        change = Change(
            ChangeClass.SAFE,
            want.name,
            "table missing",
            "the model declares this table but the endpoint has none: deploy the definition "
            "(singletable synth)",
            {"op": "create_table"},
        )
        return DriftReport((change,))
    notes = []
    if deployed.backups is None:
        notes.append(
            f"{want.name}: point-in-time recovery not compared (the endpoint implements "
            "no DescribeContinuousBackups)"
        )
    changes = [
        *_keys(want, deployed.table),
        *_indexes(want, deployed.table),
        *_settings(want, deployed),
    ]
    return DriftReport(tuple(changes), tuple(notes))


def _types(live: Mapping[str, Any]) -> dict[str, str]:
    return {a["AttributeName"]: a["AttributeType"] for a in live.get("AttributeDefinitions", [])}


def _typed_key(schema: Sequence[Mapping[str, Any]], types: Mapping[str, str]) -> list[str]:
    return [
        f"{k['AttributeName']} ({types.get(k['AttributeName'], '?')}, {k['KeyType']})"
        for k in schema
    ]


def _keys(want: TableDefinition, live: Mapping[str, Any]) -> Iterator[Change]:
    model = [f"{p.name} ({p.type}, {p.role})" for p in want.key]
    have = _typed_key(live.get("KeySchema", []), _types(live))
    if model != have:
        yield Change(
            ChangeClass.TABLE_MIGRATION,
            want.name,
            "table key schema",
            f"deployed {', '.join(have)}; the model has {', '.join(model)}. A key schema is "
            "fixed at creation: create a new table and copy every item",
        )


def _index_shape(index: IndexDefinition) -> tuple[list[str], dict[str, Any]]:
    projection = projection_of(index)
    if "NonKeyAttributes" in projection:
        projection["NonKeyAttributes"] = sorted(projection["NonKeyAttributes"])
    return [f"{p.name} ({p.type}, {p.role})" for p in index.key], projection


def _live_shape(
    entry: Mapping[str, Any], types: Mapping[str, str]
) -> tuple[list[str], dict[str, Any]]:
    projection = dict(entry.get("Projection", {}))
    if "NonKeyAttributes" in projection:
        projection["NonKeyAttributes"] = sorted(projection["NonKeyAttributes"])
    return _typed_key(entry.get("KeySchema", []), types), projection


def _indexes(want: TableDefinition, live: Mapping[str, Any]) -> Iterator[Change]:
    types = _types(live)
    for kind, arg in (("GSI", "GlobalSecondaryIndexes"), ("LSI", "LocalSecondaryIndexes")):
        model = {i.name: i for i in want.indexes if i.kind == kind}
        have = {e["IndexName"]: e for e in live.get(arg, [])}
        for name in sorted(set(model) | set(have)):
            yield from _index_change(want.name, kind, name, model.get(name), have.get(name), types)


def _index_change(
    table: str,
    kind: str,
    name: str,
    model: IndexDefinition | None,
    live: Mapping[str, Any] | None,
    types: Mapping[str, str],
) -> Iterator[Change]:
    if model is not None and live is not None:
        if _index_shape(model) == _live_shape(live, types):
            yield from _index_throughput(table, name, model, live)
            return
        what = "changed"
    else:
        what = "missing" if live is None else "not in the model"
    if kind == "LSI":
        yield Change(
            ChangeClass.TABLE_MIGRATION,
            table,
            f"LSI {name} {what}",
            "LSIs exist only from table creation: create a new table with the model's and "
            "copy every item",
        )
    elif live is None:
        yield Change(
            ChangeClass.ONLINE_INDEX,
            table,
            f"GSI {name} missing",
            "the model queries an index the deployed table lacks: UpdateTable creates it and "
            "backfills it (queries on it fail until then)",
            {"op": "create_gsi", "index": name},
        )
    elif model is None:
        yield Change(
            ChangeClass.ONLINE_INDEX,
            table,
            f"GSI {name} not in the model",
            "the deployed table has an index the model does not declare: UpdateTable deletes "
            "it (or declare it in the model)",
            {"op": "delete_gsi", "index": name},
        )
    else:
        keys, projection = _live_shape(live, types)
        yield Change(
            ChangeClass.ONLINE_INDEX,
            table,
            f"GSI {name} changed",
            f"deployed key {', '.join(keys)}, projection {projection}; the model's differ: "
            "delete the index and create it again (it backfills)",
            {"op": "recreate_gsi", "index": name},
        )


def _index_throughput(
    table: str, name: str, model: IndexDefinition, live: Mapping[str, Any]
) -> Iterator[Change]:
    if model.throughput is None:
        return
    have = live.get("ProvisionedThroughput", {})
    deployed = (have.get("ReadCapacityUnits"), have.get("WriteCapacityUnits"))
    wanted = (model.throughput.read, model.throughput.write)
    if deployed != wanted:
        yield Change(
            ChangeClass.SAFE,
            table,
            f"GSI {name} throughput",
            f"deployed {deployed} (read, write); the model has {wanted}: UpdateTable",
        )


def _live_settings(deployed: Deployed) -> dict[str, Any]:
    """The deployed table's settings in the model's terms."""
    live = deployed.table or {}
    # A table created PROVISIONED before billing modes existed carries no summary.
    billing = live.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")
    have = live.get("ProvisionedThroughput", {})
    stream = live.get("StreamSpecification", {})
    ttl = deployed.ttl or {}
    settings = {
        "billing_mode": billing,
        "throughput": (
            (have.get("ReadCapacityUnits"), have.get("WriteCapacityUnits"))
            if billing == "PROVISIONED"
            else None
        ),
        "stream": stream.get("StreamViewType") if stream.get("StreamEnabled") else None,
        # ENABLING counts as on: the switch is under way, and it cannot be undone for an hour.
        "ttl_attribute": ttl.get("AttributeName")
        if ttl.get("TimeToLiveStatus") in ("ENABLED", "ENABLING")
        else None,
        "sse": live.get("SSEDescription", {}).get("SSEType") == "KMS",
        "deletion_protection": bool(live.get("DeletionProtectionEnabled", False)),
    }
    if deployed.backups is not None:
        pitr = deployed.backups.get("PointInTimeRecoveryDescription", {})
        settings["point_in_time_recovery"] = pitr.get("PointInTimeRecoveryStatus") == "ENABLED"
    return settings


_HOW = {
    "billing_mode": "UpdateTable (BillingMode; one switch per table per 24 hours)",
    "throughput": "UpdateTable (ProvisionedThroughput)",
    "stream": "UpdateTable (StreamSpecification)",
    "ttl_attribute": "UpdateTimeToLive (one change per table per hour)",
    "sse": "UpdateTable (SSESpecification)",
    "deletion_protection": "UpdateTable (DeletionProtectionEnabled)",
    "point_in_time_recovery": "UpdateContinuousBackups",
}


def _settings(want: TableDefinition, deployed: Deployed) -> Iterator[Change]:
    model: dict[str, Any] = {
        "billing_mode": want.billing_mode,
        "throughput": None
        if want.throughput is None
        else (want.throughput.read, want.throughput.write),
        "stream": want.stream,
        "ttl_attribute": want.ttl_attribute,
        "sse": want.sse,
        "deletion_protection": want.deletion_protection,
        "point_in_time_recovery": want.point_in_time_recovery,
    }
    have = _live_settings(deployed)
    for name, wanted in model.items():
        if name in have and have[name] != wanted:
            yield Change(
                ChangeClass.SAFE,
                want.name,
                f"setting {name}",
                f"deployed {have[name]!r}; the model has {wanted!r}: deploy the definition, "
                f"or {_HOW[name]}",
            )
