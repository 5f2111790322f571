"""Model snapshots: what the model writes, as a deterministic, diffable JSON document.

A snapshot is meant to be committed next to the code (``singletable snapshot app:table
-o model.snapshot.json``). The migration planner compares the current model with it, so
it records everything that decides the bytes of stored items: per table the key schema,
indexes, delimiter, escape character and escape scheme, the bookkeeping attribute names;
per entity its stored identifier (name, version), every key template with each field's
codec parameters (padding width, datetime precision, ...) and every attribute's codec.

Everything is read from the compiled plans (`EntityPlan.describe`, `KeyTemplate.describe`),
never re-derived from the classes. The text is ``json.dumps(sort_keys=True, indent=2)``
plus a trailing newline, so two snapshots of the same model are byte-identical and a
model change shows up as a small, readable diff.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from singletable.errors import SnapshotError
from singletable.model.table import GSI, Table

#: Version of the snapshot document's layout. A reader refuses any other version.
FORMAT_VERSION = 1

#: Version of the key segment escape scheme (``docs/architecture.md``: every character
#: ``<= escape`` written as the escape character plus two upper-case hex digits). Stored
#: keys depend on it, so a future scheme change must show up in every plan as a rewrite.
ESCAPE_SCHEME_VERSION = 1

Model = Table | Sequence[Table]


def tables_of(model: Model) -> list[Table]:
    """The tables of a model given as one table or a sequence of tables.

    Raises:
        SnapshotError: Two different tables share a name.
    """
    tables = [model] if isinstance(model, Table) else list(model)
    seen: dict[str, Table] = {}
    for table in tables:
        if not isinstance(table, Table):
            raise TypeError(f"expected a Table, got {type(table).__name__} {table!r}")
        other = seen.setdefault(table.name, table)
        if other is not table:
            raise SnapshotError(f"two different Table objects are both named {table.name!r}")
    return list(seen.values())


def _key(attribute: str | None, kind: str) -> dict[str, str] | None:
    return None if attribute is None else {"attribute": attribute, "type": kind}


def entity_id(name: str, version: int) -> str:
    """The snapshot key of an entity: its stored identifier, ``"AuditEvent@1"``."""
    return f"{name}@{version}"


def describe_table(table: Table) -> dict[str, Any]:
    """The snapshot section of one table (JSON-able, not yet sorted)."""
    indexes: dict[str, Any] = {}
    for name, index in table.indexes.items():
        schema = table.key_schema(name)
        entry: dict[str, Any] = {
            "kind": index.kind,
            "pk": _key(schema.pk, schema.pk_type),
            "sk": _key(schema.sk, schema.sk_type),
            "projection": index.projection.to_dict(),
        }
        if isinstance(index, GSI) and index.throughput is not None:
            entry["throughput"] = {"read": index.throughput.read, "write": index.throughput.write}
        indexes[name] = entry
    return {
        "name": table.name,
        "key": {
            "pk": _key(table.pk, table.pk_type),
            "sk": _key(table.sk, table.sk_type),
        },
        "encoding": {
            "delimiter": table.delimiter,
            "escape": table.escape,
            "escape_scheme_version": ESCAPE_SCHEME_VERSION,
            "entity_attribute": table.entity_attribute,
            "version_attribute": table.version_attribute,
        },
        "indexes": indexes,
        "settings": {
            "billing_mode": table.billing_mode,
            "throughput": None
            if table.throughput is None
            else {"read": table.throughput.read, "write": table.throughput.write},
            "ttl_attribute": table.ttl_attribute,
            "stream": table.stream,
            "point_in_time_recovery": table.point_in_time_recovery,
            "deletion_protection": table.deletion_protection,
            "sse": table.sse,
            "tags": dict(table.tags),
        },
        "entities": {
            entity_id(plan.name, plan.version): plan.describe() for plan in table.entity_plans()
        },
    }


def snapshot(model: Model) -> dict[str, Any]:
    """The snapshot document of a model (one table or several), as JSON-able data."""
    return {
        "format_version": FORMAT_VERSION,
        "tables": {table.name: describe_table(table) for table in tables_of(model)},
    }


def dumps(document: Mapping[str, Any]) -> str:
    """A snapshot document as its canonical text: sorted keys, indent 2, trailing newline."""
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def snapshot_json(model: Model) -> str:
    """The canonical snapshot text of a model (what ``singletable snapshot`` writes)."""
    return dumps(snapshot(model))


def load_snapshot(text: str, *, source: str = "snapshot") -> dict[str, Any]:
    """Parse and check a snapshot's text.

    Args:
        text: The JSON text.
        source: How error messages name it (a file name).

    Raises:
        SnapshotError: Not JSON, not a snapshot, or another ``format_version``.
    """
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SnapshotError(
            f"{source}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    if not isinstance(document, dict) or "format_version" not in document:
        raise SnapshotError(
            f"{source}: not a singletable snapshot (no 'format_version'); create one with "
            "`singletable snapshot module:attribute -o FILE`"
        )
    version = document["format_version"]
    if version != FORMAT_VERSION:
        raise SnapshotError(
            f"{source}: snapshot format_version is {version!r}, this singletable reads "
            f"format_version {FORMAT_VERSION}; regenerate it with `singletable snapshot` from "
            "the model it describes (check out that commit), or use a matching singletable"
        )
    tables = document.get("tables")
    if not isinstance(tables, dict) or not all(
        isinstance(t, dict) and isinstance(t.get("entities"), dict) for t in tables.values()
    ):
        raise SnapshotError(f"{source}: malformed snapshot: 'tables' must map names to tables")
    # Every section the planner reads, so a hand-edited or truncated file is refused here
    # with its location rather than failing deep inside the planner.
    for name, table in tables.items():
        for section in _TABLE_SECTIONS:
            if not isinstance(table.get(section), dict):
                raise SnapshotError(
                    f"{source}: malformed snapshot: table {name!r} has no {section!r} section"
                )
        for entity_id, entity in table["entities"].items():
            missing = [k for k in _ENTITY_SECTIONS if k not in entity]
            if missing:
                raise SnapshotError(
                    f"{source}: malformed snapshot: entity {entity_id!r} of table {name!r} "
                    f"has no {missing[0]!r}"
                )
    return document


_TABLE_SECTIONS = ("encoding", "entities", "indexes", "key", "settings")
_ENTITY_SECTIONS = ("attributes", "keys", "name", "version", "ttl_field", "version_field")


def read_snapshot(path: str | Path) -> dict[str, Any]:
    """Read and check a snapshot file (`SnapshotError` if unreadable or of another version)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read snapshot: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise SnapshotError(
            f"{path}: not a snapshot: not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None
    return load_snapshot(text, source=str(path))
