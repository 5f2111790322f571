"""The migration planner: what changed between a committed snapshot and the current model.

Both sides are compared as snapshot documents (`snapshot`), so the planner reads only
what the compiled plans describe. Every difference becomes a `Change` with a
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

from singletable.model.unique import FIELD_JOIN
from singletable.tooling.migrations.effects import entity_effects
from singletable.tooling.migrations.native import missing_note
from singletable.tooling.migrations.snapshot import Model, snapshot, unique_forms


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
            ``{"op": "create_gsi", "index": "GSI3"}``,
            ``{"op": "rewrite", "old": "AuditEvent@1", "new": "AuditEvent@1"}`` or
            ``{"op": "switch_ttl", "old": "expires", "new": "ttl"}``.
        needs_transform: Why the runner cannot carry out this change mechanically (read
            each item with the new model and write it back) for some stored values, e.g.
            a narrowed datetime precision; ``None`` when it can. The runner refuses a
            rewrite any of whose changes has a reason here, unless the user supplies a
            transform.
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
            "needs_transform": self.needs_transform,
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

    def transforms_needed(self, table: str, old: str, new: str) -> list[str]:
        """Why the rewrite ``old -> new`` of ``table`` needs a user transform (empty: none)."""
        return [
            c.needs_transform
            for c in self.changes
            if c.needs_transform is not None
            and c.table == table
            and c.action is not None
            and c.action.get("op") == "rewrite"
            and (c.action["old"], c.action["new"]) == (old, new)
        ]

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
            if change.needs_transform is not None:
                lines.append(
                    f"      cannot be done mechanically: {change.needs_transform}; "
                    "supply a transform"
                )
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
        if setting == "ttl_attribute" and before != after:
            yield _switch_ttl(name, old, before, after)
        elif before != after:
            yield Change(
                ChangeClass.SAFE,
                name,
                f"setting {setting}",
                f"{before!r} -> {after!r}: deploy the updated table definition (UpdateTable)",
            )
    yield from _diff_entities(name, old, new)


def _switch_ttl(name: str, old: Mapping[str, Any], before: str | None, after: str | None) -> Change:
    """The table's TTL setting names another attribute: UpdateTimeToLive, at most hourly."""
    writers = sorted(i for i, e in old["entities"].items() if e["ttl_field"] is not None)
    steps = (
        f"disable TTL on {before!r}, then enable it on {after!r}"
        if before and after
        else f"enable TTL on {after!r}"
        if after
        else f"disable TTL on {before!r}"
    )
    limit = (
        "DynamoDB allows one TTL change per table per hour (and disabling takes up to an "
        "hour to settle), so the switch may have to wait"
    )
    if writers:
        return Change(
            ChangeClass.ITEM_REWRITE,
            name,
            "setting ttl_attribute",
            f"{before!r} -> {after!r}: stored items of {', '.join(writers)} carry their expiry "
            f"in {before!r}; they are rewritten to carry both attributes, then the runner "
            f"switches the table's TTL ({steps}). {limit}",
            {"op": "switch_ttl", "old": before, "new": after},
        )
    return Change(
        ChangeClass.SAFE,
        name,
        "setting ttl_attribute",
        f"{before!r} -> {after!r}: no stored item carries an expiry; the runner switches the "
        f"table's TTL ({steps}). {limit}",
        {"op": "switch_ttl", "old": before, "new": after},
    )


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


def _all_indexes(table: Mapping[str, Any]) -> dict[str, Any]:
    """Template and native GSIs (and LSIs) by name: they share one namespace."""
    return {**table["indexes"], **table.get("native_indexes", {})}


def _index_keys(index: Mapping[str, Any]) -> list[str]:
    """The key attributes of an index entry, template (one per role) or native (parts)."""
    keys: list[str] = []
    for role in ("pk", "sk"):
        entry = index[role]
        if isinstance(entry, list):
            keys.extend(part["attribute"] for part in entry)
        elif entry is not None:
            keys.append(entry["attribute"])
    return keys


def _diff_indexes(name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[Change]:
    old_ix, new_ix = _all_indexes(old), _all_indexes(new)
    used = _used_attributes(old)
    # Added before removed: a run that moves readers from one index to another (an
    # expand/contract step done at once) creates the new index before it drops the old.
    order = sorted(set(old_ix) | set(new_ix), key=lambda i: (i not in new_ix, i))
    for index in order:
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
            yield _gsi_added(name, index, after, used, old, new)
        elif after is None:
            yield Change(
                ChangeClass.ONLINE_INDEX,
                name,
                f"GSI {index} removed",
                "UpdateTable deletes the index; queries that use it stop working"
                + _moved_readers_note(index, old_ix, new_ix),
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
                "again and let it backfill (two UpdateTables; no queries on it meanwhile)"
                + _kind_switch_note(index, before, after)
                + missing_note(old, new, index),
                {"op": "recreate_gsi", "index": index},
            )
        else:
            yield Change(
                ChangeClass.SAFE,
                name,
                f"GSI {index} throughput",
                f"{before.get('throughput')!r} -> {after.get('throughput')!r}: UpdateTable",
            )


def _gsi_added(
    name: str,
    index: str,
    after: Mapping[str, Any],
    used: set[str],
    old: Mapping[str, Any],
    new: Mapping[str, Any],
) -> Change:
    """A new GSI: a backfill when stored items carry its key attributes, else nothing."""
    keys = _index_keys(after)
    carried = sorted(set(keys) & used)
    native = isinstance(after["pk"], list)
    if carried:
        how = (
            "DynamoDB indexes the attributes as they are stored, so no item is rewritten"
            if native
            else "UpdateTable creates the index and backfills it"
        )
        return Change(
            ChangeClass.ONLINE_INDEX,
            name,
            f"GSI {index} added",
            f"stored items already carry {', '.join(carried)}: {how} (one GSI per "
            "UpdateTable; queries on it wait for ACTIVE)" + missing_note(old, new, index),
            {"op": "create_gsi", "index": index},
        )
    return Change(
        ChangeClass.SAFE,
        name,
        f"GSI {index} added",
        f"no stored item carries {', '.join(keys)} yet, so there is nothing to "
        "backfill; deploy the template (or `singletable migrate` creates it)",
        {"op": "create_gsi", "index": index},
    )


def _kind_switch_note(index: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """Advice for an index that keeps its name but moves between template and native keys."""
    if isinstance(before["pk"], list) == isinstance(after["pk"], list):
        return ""
    return (
        f". It moves from {'native' if isinstance(before['pk'], list) else 'template'} to "
        f"{'native' if isinstance(after['pk'], list) else 'template'} keys under the same "
        "name, so its readers have no index until the new one is ACTIVE: declare the new "
        "index under another name instead, move the readers to it, then drop this one "
        "(expand/contract, docs/schema.md)"
    )


def _moved_readers_note(index: str, old_ix: Mapping[str, Any], new_ix: Mapping[str, Any]) -> str:
    """Advice for a GSI removed while another one is added: the expand/contract order."""
    added = sorted(set(new_ix) - set(old_ix))
    if not added:
        return ""
    return (
        f". {', '.join(added)} is added in the same plan: if it replaces {index} (e.g. "
        "template keys moved to native ones), deploy the addition first, move every reader "
        f"to it, and drop {index} in a later plan (expand/contract, docs/schema.md); "
        f"`migrate` creates {', '.join(added)} before it deletes {index}"
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


def _diff_entity(
    table: str, old: Mapping[str, Any], new: Mapping[str, Any], old_id: str, new_id: str
) -> Iterator[Change]:
    """The changes of one entity: every way its stored items differ (see `effects`)."""
    subject = f"entity {old_id}" if old_id == new_id else f"entity {old_id} -> {new_id}"
    rewrite = {"op": "rewrite", "old": old_id, "new": new_id}
    for effect in entity_effects(old, new, old_id, new_id):
        kind = (
            ChangeClass.BREAKING_READS
            if effect.unreadable
            else ChangeClass.ITEM_REWRITE
            if effect.rewrite
            else ChangeClass.SAFE
        )
        where = subject if effect.subject == "identifier" else f"{subject}, {effect.subject}"
        action = rewrite if effect.rewrite or effect.unreadable else None
        yield Change(kind, table, where, effect.reason, action, effect.needs_transform)
    before, after = old["entities"][old_id], new["entities"][new_id]
    yield from _diff_unique(table, subject, (old_id, new_id), before, after)
    if before["version_field"] != after["version_field"]:
        yield Change(
            ChangeClass.SAFE,
            table,
            f"{subject}, version_field",
            f"optimistic locking field {before['version_field']!r} -> "
            f"{after['version_field']!r}; stored values are read as they are",
        )


def _diff_unique(
    table: str,
    subject: str,
    ids: tuple[str, str],
    before: Mapping[str, Any],
    after: Mapping[str, Any],
) -> Iterator[Change]:
    """Uniqueness constraints added, dropped, or stored differently.

    Added: stored items need guards. Dropped: guards linger. Stored differently (the
    entity's name or a field's key codec is part of the guard key): every guard moves.
    """
    old_id, new_id = ids
    old, new = unique_forms(before), unique_forms(after)
    rewrite = {"op": "rewrite", "old": old_id, "new": new_id}
    for name in sorted(new.keys() - old.keys()):
        yield Change(
            ChangeClass.ITEM_REWRITE,
            table,
            f"{subject}, unique {name}",
            "stored items hold no guard for this new constraint: backfill the guards (a "
            "scan that reports values several items already share instead of picking one)",
            {"op": "backfill_unique", "entity": new_id, "fields": name.split(FIELD_JOIN)},
        )
    for name in sorted(old.keys() - new.keys()):
        yield Change(
            ChangeClass.SAFE,
            table,
            f"{subject}, unique {name}",
            "constraint dropped: writes stop checking it; its guard items stay in the table "
            "until deleted",
        )
    for name in sorted(old.keys() & new.keys()):
        moved = _guard_key_change(before["name"], after["name"], old[name], new[name])
        if moved is not None:
            yield Change(
                ChangeClass.ITEM_REWRITE,
                table,
                f"{subject}, unique {name}",
                f"{moved}, which guard keys are built from: the rewrite moves every item's "
                "guard to its new key, in the item's own transaction",
                rewrite,
            )


def _guard_key_change(
    old_name: str,
    new_name: str,
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any] | None,
) -> str | None:
    """What changes a constraint's guard keys (``None``: nothing, or unknown codecs)."""
    if old_name != new_name:
        return f"the entity name changes from {old_name!r} to {new_name!r}"
    if old is None or new is None:
        return None  # a snapshot older than format 3: codecs not recorded
    for field_name in sorted(new):
        if old.get(field_name) != new[field_name]:
            return (
                f"field {field_name}'s key codec changes from {old.get(field_name)} to "
                f"{new[field_name]}"
            )
    return None
