"""The migration planner: what changed between a committed snapshot and the current model.

Both sides are compared as snapshot documents (`singletable._snapshot`), so the planner
reads only what the compiled plans describe. Every difference becomes a `Change` with a
`ChangeClass` and a reason a reviewer can act on; a `MigrationPlan` renders them as text
or JSON and turns the worst class into a CI exit code:

====  =======================  ==============================================================
code  class                    meaning
====  =======================  ==============================================================
0     ``safe``                 deploy the new definition; no stored item is affected
3     ``online-index-change``  add / remove / rebuild a GSI with UpdateTable (backfill time)
4     ``item-rewrite``         stored items no longer match their key templates: rewrite them
5     ``breaking-for-reads``   some stored items stop decoding under the new model
6     ``table-migration``      the table's key schema or an LSI changes: new table and a copy
====  =======================  ==============================================================

(1 is left for unexpected errors and 2 for usage errors, as argparse uses them.)
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from singletable.tooling.snapshot import Model, snapshot


class ChangeClass(enum.Enum):
    """How much a change costs, from nothing (`SAFE`) to a new table (`TABLE_MIGRATION`)."""

    SAFE = "safe"
    ONLINE_INDEX = "online-index-change"
    ITEM_REWRITE = "item-rewrite"
    BREAKING_READS = "breaking-for-reads"
    TABLE_MIGRATION = "table-migration"

    @property
    def exit_code(self) -> int:
        """The process exit code for a plan whose worst change is of this class."""
        return _EXIT_CODES[self]

    @property
    def severity(self) -> int:
        """Rank for "worst change" (higher is worse)."""
        return list(ChangeClass).index(self)


_EXIT_CODES = {
    ChangeClass.SAFE: 0,
    ChangeClass.ONLINE_INDEX: 3,
    ChangeClass.ITEM_REWRITE: 4,
    ChangeClass.BREAKING_READS: 5,
    ChangeClass.TABLE_MIGRATION: 6,
}


@dataclass(frozen=True)
class Change:
    """One difference between the snapshot and the model.

    Attributes:
        kind: Its class.
        table: The table it concerns.
        subject: What changed, e.g. ``"entity AuditEvent@1, <table> sk"`` or ``"GSI GSI3"``.
        reason: Why it has this class and what to do.
        action: What the migration runner does for it (``None``: nothing to run), e.g.
            ``{"op": "create_gsi", "index": "GSI3"}`` or
            ``{"op": "rewrite", "old": "AuditEvent@1", "new": "AuditEvent@1"}``.
        needs_transform: Why the rewrite cannot be done mechanically for some stored
            values (``None``: it can); the runner refuses it unless given a transform.
    """

    kind: ChangeClass
    table: str
    subject: str
    reason: str
    action: Mapping[str, Any] | None = None
    needs_transform: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "class": self.kind.value,
            "table": self.table,
            "subject": self.subject,
            "reason": self.reason,
            "action": dict(self.action) if self.action is not None else None,
        }


@dataclass(frozen=True)
class MigrationPlan:
    """Every change between a snapshot and the model, in a stable order."""

    changes: tuple[Change, ...] = field(default_factory=tuple)

    @property
    def worst(self) -> ChangeClass:
        """The most expensive class among the changes (`SAFE` when there are none)."""
        return max(
            (c.kind for c in self.changes), key=lambda k: k.severity, default=ChangeClass.SAFE
        )

    @property
    def exit_code(self) -> int:
        """0 when nothing is unsafe, else the exit code of the worst class (see module doc)."""
        return self.worst.exit_code

    def of(self, kind: ChangeClass) -> list[Change]:
        """The changes of one class."""
        return [c for c in self.changes if c.kind is kind]

    def rewrites(self) -> list[tuple[str, str, str]]:
        """``(table, old entity id, new entity id)`` of every entity whose items need rewriting."""
        seen: dict[tuple[str, str, str], None] = {}
        for change in self.changes:
            if change.action is not None and change.action.get("op") == "rewrite":
                seen[(change.table, change.action["old"], change.action["new"])] = None
        return list(seen)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "worst": self.worst.value,
            "exit_code": self.exit_code,
            "changes": [c.to_dict() for c in self.changes],
        }

    def to_json(self) -> str:
        """The plan as indented JSON with a trailing newline."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_text(self) -> str:
        """The plan as readable text: one line per change, grouped by table."""
        if not self.changes:
            return "No changes: the model matches the snapshot.\n"
        lines = [
            f"{len(self.changes)} change(s); worst: {self.worst.value} (exit code {self.exit_code})"
        ]
        table = None
        for change in self.changes:
            if change.table != table:
                table = change.table
                lines.append(f"\ntable {table}:")
            lines.append(f"  [{change.kind.value}] {change.subject}")
            lines.append(f"      {change.reason}")
        return "\n".join(lines) + "\n"


def plan_changes(
    model: Model | Mapping[str, Any], snapshot_doc: Mapping[str, Any]
) -> MigrationPlan:
    """Compare the current model with a (loaded) snapshot.

    Args:
        model: The current model: a `Table`, a sequence of tables, or a snapshot document.
        snapshot_doc: The committed snapshot (`load_snapshot` / `read_snapshot`), i.e. the
            model the stored data was written with.
    """
    new = dict(model) if isinstance(model, Mapping) else snapshot(model)
    return MigrationPlan(tuple(_diff(snapshot_doc, new)))


# -- the comparison ---------------------------------------------------------------------


def _diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[Change]:
    old_tables, new_tables = old["tables"], new["tables"]
    for name in sorted(set(old_tables) | set(new_tables)):
        if name not in new_tables:
            yield Change(
                ChangeClass.TABLE_MIGRATION,
                name,
                "table removed",
                "the model no longer declares this table; its items stay in DynamoDB. Move "
                "them to another table, or delete the table by hand",
            )
        elif name not in old_tables:
            yield Change(
                ChangeClass.SAFE,
                name,
                "table added",
                "a new table: deploy the template (or let `singletable migrate` create it)",
                {"op": "create_table"},
            )
        else:
            yield from _diff_table(name, old_tables[name], new_tables[name])


def _fmt_key(key: Mapping[str, Any] | None) -> str:
    return "none" if key is None else f"{key['attribute']} ({key['type']})"


def _diff_table(name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[Change]:
    for role in ("pk", "sk"):
        if old["key"][role] != new["key"][role]:
            yield Change(
                ChangeClass.TABLE_MIGRATION,
                name,
                f"table {role}",
                f"the table's {role} changes from {_fmt_key(old['key'][role])} to "
                f"{_fmt_key(new['key'][role])}; a key schema is fixed at creation: create a "
                "new table and copy every item",
            )
    yield from _diff_indexes(name, old, new)
    for setting in sorted(set(old["settings"]) | set(new["settings"])):
        before, after = old["settings"].get(setting), new["settings"].get(setting)
        if before != after:
            yield Change(
                ChangeClass.SAFE,
                name,
                f"setting {setting}",
                f"{before!r} -> {after!r}: deploy the updated table definition (UpdateTable)",
            )
    yield from _diff_entities(name, old, new)


def _used_attributes(table: Mapping[str, Any]) -> set[str]:
    """Attribute names that stored items of this table may carry."""
    used: set[str] = set()
    for entity in table["entities"].values():
        used.update(entity["attributes"])
        for keys in entity["keys"].values():
            for role in ("pk", "sk"):
                if role in keys:
                    used.add(keys[role]["attribute"])
    return used


def _live_index(
    index: Mapping[str, Any] | None, encoding: Mapping[str, Any]
) -> dict[str, Any] | None:
    """An index entry as DynamoDB holds it (see `index_projection`).

    An INCLUDE list is a set, and it also carries the entity and version attributes.
    """
    if index is None:
        return None
    projection = dict(index["projection"])
    if projection.get("ProjectionType") == "INCLUDE":
        extra = {encoding["entity_attribute"], encoding["version_attribute"]}
        projection["NonKeyAttributes"] = sorted(set(projection["NonKeyAttributes"]) | extra)
    return {**index, "projection": projection}


def _diff_indexes(name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[Change]:
    old_ix, new_ix = old["indexes"], new["indexes"]
    used = _used_attributes(old)
    for index in sorted(set(old_ix) | set(new_ix)):
        before = _live_index(old_ix.get(index), old["encoding"])
        after = _live_index(new_ix.get(index), new["encoding"])
        if before == after:
            continue
        kind = (after or before or {}).get("kind")
        if "LSI" in (kind, (before or {}).get("kind")):
            what = "added" if before is None else "removed" if after is None else "changed"
            yield Change(
                ChangeClass.TABLE_MIGRATION,
                name,
                f"LSI {index}",
                f"local secondary index {what}; LSIs exist only from table creation: create "
                "a new table with it and copy every item",
            )
        elif before is None:
            assert after is not None
            keys = [k["attribute"] for k in (after["pk"], after["sk"]) if k is not None]
            carried = sorted(set(keys) & used)
            if carried:
                yield Change(
                    ChangeClass.ONLINE_INDEX,
                    name,
                    f"GSI {index} added",
                    f"stored items already carry {', '.join(carried)}: UpdateTable creates the "
                    "index and backfills it (one GSI per UpdateTable; queries on it wait for "
                    "ACTIVE)",
                    {"op": "create_gsi", "index": index},
                )
            else:
                yield Change(
                    ChangeClass.SAFE,
                    name,
                    f"GSI {index} added",
                    f"no stored item carries {', '.join(keys)} yet, so there is nothing to "
                    "backfill; deploy the template (or `singletable migrate` creates it)",
                    {"op": "create_gsi", "index": index},
                )
        elif after is None:
            yield Change(
                ChangeClass.ONLINE_INDEX,
                name,
                f"GSI {index} removed",
                "UpdateTable deletes the index; queries that use it stop working",
                {"op": "delete_gsi", "index": index},
            )
        elif (before["pk"], before["sk"], before["projection"]) != (
            after["pk"],
            after["sk"],
            after["projection"],
        ):
            what = "key schema" if before["projection"] == after["projection"] else "projection"
            yield Change(
                ChangeClass.ONLINE_INDEX,
                name,
                f"GSI {index} {what} changed",
                f"a GSI's {what} cannot change in place: delete the index, then create it "
                "again and let it backfill (two UpdateTables; no queries on it meanwhile)",
                {"op": "recreate_gsi", "index": index},
            )
        else:
            yield Change(
                ChangeClass.SAFE,
                name,
                f"GSI {index} throughput",
                f"{before.get('throughput')!r} -> {after.get('throughput')!r}: UpdateTable",
            )


def _pair_entities(
    old: Mapping[str, Any], new: Mapping[str, Any]
) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """Match old and new entities: same identifier, else same name, else same class."""
    pairs = [(i, i) for i in old if i in new]
    old_left = [i for i in old if i not in new]
    new_left = [i for i in new if i not in old]
    for attr in ("name", "class"):
        for old_id in list(old_left):
            matches = [n for n in new_left if new[n][attr] == old[old_id][attr]]
            if len(matches) == 1:
                pairs.append((old_id, matches[0]))
                old_left.remove(old_id)
                new_left.remove(matches[0])
    return sorted(pairs), sorted(old_left), sorted(new_left)


def _diff_entities(name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[Change]:
    pairs, removed, added = _pair_entities(old["entities"], new["entities"])
    for ident in added:
        yield Change(
            ChangeClass.SAFE, name, f"entity {ident}", "new entity: no stored items to change"
        )
    for ident in removed:
        yield Change(
            ChangeClass.BREAKING_READS,
            name,
            f"entity {ident}",
            "entity removed: its stored items no longer decode (UnknownEntityError in "
            "collection queries); delete them, or keep the class",
        )
    for old_id, new_id in pairs:
        yield from _diff_entity(name, old, new, old_id, new_id)


def _template_problems(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    old_enc: Mapping[str, Any],
    new_enc: Mapping[str, Any],
) -> list[str]:
    reasons: list[str] = []
    if before["template"] != after["template"]:
        reasons.append(f"template {before['template']!r} -> {after['template']!r}")
    if before["type"] != after["type"]:
        reasons.append(f"attribute type {before['type']} -> {after['type']}")
    if before["attribute"] != after["attribute"]:
        reasons.append(f"attribute {before['attribute']} -> {after['attribute']}")
    for field_name in sorted(set(before["fields"]) & set(after["fields"])):
        b, a = before["fields"][field_name], after["fields"][field_name]
        if _widens(b, a):
            continue  # e.g. a new enum member: every stored key encodes as before
        for param in sorted(set(b) | set(a)):
            if b.get(param) != a.get(param):
                reasons.append(f"field {field_name}: {param} {b.get(param)!r} -> {a.get(param)!r}")
    escaped = any(f.get("escaped") for f in before["fields"].values())
    segmented = old_enc["delimiter"] in before["template"]
    if segmented and old_enc["delimiter"] != new_enc["delimiter"]:
        reasons.append(f"delimiter {old_enc['delimiter']!r} -> {new_enc['delimiter']!r}")
    if escaped:
        for param in ("escape", "escape_scheme_version"):
            if old_enc[param] != new_enc[param]:
                reasons.append(f"{param} {old_enc[param]!r} -> {new_enc[param]!r}")
    return reasons


def _widens(before: Any, after: Any) -> bool:
    """Whether codec parameters ``after`` read and write every value of ``before`` alike.

    True when they are equal, except that a list of allowed ``values`` (the members of
    an Enum, the values of a Literal) may gain values or change order: values are
    stored as themselves, so the stored bytes of every old value stay the same.
    """
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        if set(before) != set(after):
            return False
        for key, b in before.items():
            a = after[key]
            if key == "values" and isinstance(b, list) and isinstance(a, list):
                if not {json.dumps(v) for v in b} <= {json.dumps(v) for v in a}:
                    return False
            elif not _widens(b, a):
                return False
        return True
    return bool(before == after)


def old_enc_changed(old_enc: Mapping[str, Any], new_enc: Mapping[str, Any]) -> bool:
    """Whether the table's key encoding parameters differ."""
    return any(old_enc[k] != new_enc[k] for k in ("delimiter", "escape", "escape_scheme_version"))


def _diff_entity(  # noqa: C901 - one comparison per snapshot section
    table: str, old: Mapping[str, Any], new: Mapping[str, Any], old_id: str, new_id: str
) -> Iterator[Change]:
    before, after = old["entities"][old_id], new["entities"][new_id]
    old_enc, new_enc = old["encoding"], new["encoding"]
    subject = f"entity {old_id}" if old_id == new_id else f"entity {old_id} -> {new_id}"
    rewrite = {"op": "rewrite", "old": old_id, "new": new_id}
    if old_id != new_id:
        yield Change(
            ChangeClass.ITEM_REWRITE,
            table,
            subject,
            f"the stored identifier changes ({old_enc['entity_attribute']}/"
            f"{old_enc['version_attribute']} {old_id} -> {new_id}): items written as {old_id} "
            "must be rewritten to be found as the new entity",
            rewrite,
        )
    for param in ("entity_attribute", "version_attribute"):
        if old_enc[param] != new_enc[param]:
            yield Change(
                ChangeClass.ITEM_REWRITE,
                table,
                subject,
                f"{param} {old_enc[param]!r} -> {new_enc[param]!r}: every stored item carries "
                "its identifier under the old name",
                rewrite,
            )
    old_keys, new_keys = before["keys"], after["keys"]
    for index in sorted(set(old_keys) | set(new_keys)):
        where = f"{subject}, {index} key"
        if index not in new_keys:
            if index in new["indexes"]:
                yield Change(
                    ChangeClass.ITEM_REWRITE,
                    table,
                    where,
                    f"the entity no longer writes index {index}, but its stored items still "
                    "carry the index keys and stay in the index until rewritten",
                    rewrite,
                )
            continue
        if index not in old_keys:
            carried = [
                i
                for i, keys in old_keys.items()
                if {r: keys.get(r) for r in ("pk", "sk")}
                == {r: new_keys[index].get(r) for r in ("pk", "sk")}
            ]
            if carried and not old_enc_changed(old_enc, new_enc):
                yield Change(
                    ChangeClass.SAFE,
                    table,
                    where,
                    f"stored items already carry exactly these keys (written for "
                    f"{carried[0]}), so the index backfills them without a rewrite",
                )
                continue
            new_sparse = [
                f for f in new_keys[index].get("sparse_fields", []) if f not in before["attributes"]
            ]
            if new_sparse:
                # Stored items predate the optional field, so they read it as None and
                # belong outside this sparse index: there is nothing to backfill.
                yield Change(
                    ChangeClass.SAFE,
                    table,
                    where,
                    f"index {index} is keyed on the new optional field {new_sparse[0]!r}, "
                    "which no stored item has, so no stored item belongs in it",
                )
                continue
            yield Change(
                ChangeClass.ITEM_REWRITE,
                table,
                where,
                f"the entity now writes keys for index {index}; stored items lack them and "
                "are missing from the index until rewritten",
                rewrite,
            )
            continue
        reasons: list[str] = []
        for role in ("pk", "sk"):
            b, a = old_keys[index].get(role), new_keys[index].get(role)
            if b is None or a is None:
                if b != a:
                    reasons.append(f"{role} template {'added' if b is None else 'removed'}")
                continue
            reasons.extend(f"{role} {r}" for r in _template_problems(b, a, old_enc, new_enc))
        if reasons:
            yield Change(
                ChangeClass.ITEM_REWRITE,
                table,
                where,
                "what the entity writes into the key changes ("
                + "; ".join(reasons)
                + "): stored items no longer match and must be rewritten under the new keys",
                rewrite,
            )
        elif old_keys[index]["sparse_fields"] != new_keys[index]["sparse_fields"]:
            yield Change(
                ChangeClass.SAFE,
                table,
                where,
                f"sparse fields {old_keys[index]['sparse_fields']} -> "
                f"{new_keys[index]['sparse_fields']}: stored keys are unchanged",
            )
    yield from _diff_attributes(table, subject, before["attributes"], after["attributes"])
    yield from _diff_unique(table, subject, new_id, before, after)
    if before["ttl_field"] != after["ttl_field"] or (
        after["ttl_field"] is not None
        and old["settings"]["ttl_attribute"] != new["settings"]["ttl_attribute"]
    ):
        yield Change(
            ChangeClass.ITEM_REWRITE,
            table,
            f"{subject}, ttl",
            f"the TTL written by the entity changes (field {before['ttl_field']!r} -> "
            f"{after['ttl_field']!r}, attribute {old['settings']['ttl_attribute']!r} -> "
            f"{new['settings']['ttl_attribute']!r}); stored items keep the old expiry "
            "until rewritten",
            rewrite,
        )
    if before["version_field"] != after["version_field"]:
        yield Change(
            ChangeClass.SAFE,
            table,
            f"{subject}, version_field",
            f"optimistic locking field {before['version_field']!r} -> "
            f"{after['version_field']!r}; stored values are read as they are",
        )


def _diff_attributes(
    table: str, subject: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> Iterator[Change]:
    for attr in sorted(set(before) | set(after)):
        b, a = before.get(attr), after.get(attr)
        where = f"{subject}, attribute {attr}"
        if b == a:
            continue
        if b is None:
            assert a is not None
            if a["required"]:
                yield Change(
                    ChangeClass.BREAKING_READS,
                    table,
                    where,
                    "new required field without a default: stored items lack it and fail "
                    "validation; give it a default or make it optional",
                )
            else:
                yield Change(
                    ChangeClass.SAFE,
                    table,
                    where,
                    "new optional field: stored items read it as its default",
                )
        elif a is None:
            yield Change(
                ChangeClass.SAFE,
                table,
                where,
                "field removed: reads ignore the stored attribute (it stays until items are "
                "rewritten)",
            )
        else:
            b_codec = {k: v for k, v in b.items() if k != "required"}
            a_codec = {k: v for k, v in a.items() if k != "required"}
            if not _widens(b_codec, a_codec):
                yield Change(
                    ChangeClass.BREAKING_READS,
                    table,
                    where,
                    f"stored type changes ({_codec_text(b_codec)} -> {_codec_text(a_codec)}): "
                    "stored values may no longer decode or validate",
                )
            elif a["required"] and not b["required"]:
                yield Change(
                    ChangeClass.BREAKING_READS,
                    table,
                    where,
                    "optional field becomes required: stored items without a value fail "
                    "validation; keep a default",
                )
            elif b_codec != a_codec:
                yield Change(
                    ChangeClass.SAFE,
                    table,
                    where,
                    f"allowed values widen ({_codec_text(b_codec)} -> {_codec_text(a_codec)}): "
                    "every stored value still decodes",
                )
            else:
                yield Change(ChangeClass.SAFE, table, where, "required field becomes optional")


def _codec_text(params: Mapping[str, Any]) -> str:
    return json.dumps(params, sort_keys=True)


def _diff_unique(
    table: str, subject: str, new_id: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> Iterator[Change]:
    """Uniqueness constraints added (stored items need guards) or dropped (guards linger)."""
    old = {tuple(c) for c in before.get("unique", [])}
    new = {tuple(c) for c in after.get("unique", [])}
    for fields in sorted(new - old):
        yield Change(
            ChangeClass.ITEM_REWRITE,
            table,
            f"{subject}, unique {'+'.join(fields)}",
            "stored items hold no guard for this new constraint: backfill the guards (a "
            "scan that reports values several items already share instead of picking one)",
            {"op": "backfill_unique", "entity": new_id, "fields": list(fields)},
        )
    for fields in sorted(old - new):
        yield Change(
            ChangeClass.SAFE,
            table,
            f"{subject}, unique {'+'.join(fields)}",
            "constraint dropped: writes stop checking it; its guard items stay in the table "
            "until deleted",
        )
