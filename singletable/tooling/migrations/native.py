"""Native GSIs over stored items: which items a native index holds, and what a change does.

A native GSI keys items by attributes they already store (the fields' own attributes), so
DynamoDB decides membership from the stored item alone: an item is in the index when it
carries every part, each of the index's type; its place follows the stored values. A
model change therefore needs no rewrite for the index itself, but stored items are out of
step with it where they do not store a part as the new model would:

* an optional part not stored (``None``), or a part the old model had no field for: not
  in the index (by design for ``None``; the attribute effects say when a new default
  makes the new model write a value instead);
* a part stored as NULL (a ``None`` under a non-``None`` default), as an empty string or
  binary, or as another type: DynamoDB skips the item when it backfills the index;
* a part stored in another form (codec or stored-format id) than the new model writes:
  the index orders the stored form, not the new one, until the item is rewritten;
* every part stored by an entity that no longer feeds the index (a part's field was
  removed): the leftover attributes keep the item in the index.

Pure: it reads JSON-able snapshot descriptions only (`singletable.tooling.migrations.snapshot`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from singletable.tooling.migrations.codec_changes import (
    codec_params,
    codec_text,
    format_changes,
    stores_alike,
)
from singletable.tooling.migrations.sides import Comparison, Effect, may_be_absent, stores_none

__all__ = ["missing_note", "native_effects"]


def _parts(index: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A native index entry's parts in key order (partition parts, then sort parts)."""
    return [*index["pk"], *index["sk"]]


def _form_change(field: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> str | None:
    """A part field's stored form under the old model against the new one (None: alike).

    A widening stores every old value byte for byte as before (`stores_alike`), so the
    index, which orders the stored values, holds the items where it did.
    """
    if stores_alike(before, after):
        return None
    b, a = codec_params(before), codec_params(after)
    changes = format_changes(before, after)
    if b != a:
        changes.insert(0, f"{codec_text(b)} -> {codec_text(a)}")
    return f"{field} ({'; '.join(changes)})" if changes else None


def _old_entity(old: Mapping[str, Any], ident: str, name: str) -> Mapping[str, Any] | None:
    """The old entity whose stored items a new one reads: same identifier, else same name."""
    entities: Mapping[str, Any] = old["entities"]
    if ident in entities:
        return entities[ident]  # type: ignore[no-any-return]
    return next((e for e in entities.values() if e["name"] == name), None)


def missing_note(old: Mapping[str, Any], new: Mapping[str, Any], index: str) -> str:
    """The stored items a new (or rebuilt) native GSI leaves out or holds out of step.

    Empty for a template GSI, and when every stored item is in it as the new model would
    put it. The item-level differences that need a rewrite are planned per entity
    (`native_effects`); this note says what the backfill will hold.
    """
    spec = new.get("native_indexes", {}).get(index)
    if spec is None:
        return ""
    types = {p["attribute"]: p["type"] for p in _parts(spec)}
    notes: list[str] = []
    fed: set[str] = set()
    for ident, entity in sorted(new["entities"].items()):
        native = entity.get("native_indexes", {}).get(index)
        if native is None:
            continue
        before = _old_entity(old, ident, entity["name"])
        if before is None:
            continue  # a new entity: no stored items
        fed.add(before["name"])
        stored_as = f"{before['name']}@{before['version']}"  # the id the items carry
        notes.extend(_entity_notes(stored_as, before, entity, native, types))
    for ident, entity in sorted(old["entities"].items()):
        stored = set(entity["attributes"])
        if entity["name"] not in fed and set(types) <= stored:
            notes.append(
                f"{ident} items that store every part stay in it although the new model "
                "does not feed it, until rewritten"
            )
    if not notes:
        return (
            ". Every stored item of the entities that feed it is in it"
            if fed
            else ". No entity with stored items feeds it"
        )
    return ". Stored items left out or out of step: " + "; ".join(notes)


def _entity_notes(
    ident: str,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    native: Mapping[str, Any],
    types: Mapping[str, str],
) -> Iterator[str]:
    """What the backfill does with one entity's stored items, part by part."""
    old_attrs: Mapping[str, Any] = before["attributes"]
    for part in _parts(native):
        field = part["field"]
        attr = old_attrs.get(field)
        if attr is None:
            yield f"{ident} items lack {field} (a new field): not in it until written again"
            continue
        if may_be_absent(attr):
            yield f"{ident} items whose {field} is None: not in it (sparse)"
        if stores_none(attr):
            yield f"{ident} items that store a None {field} as NULL: skipped (a key is never NULL)"
        if attr.get("type") in ("S", "B") and attr.get("type") == types[part["attribute"]]:
            yield f"{ident} items whose {field} is empty: skipped (a key is never empty)"
        if attr.get("type") != types[part["attribute"]]:
            yield (
                f"{ident} items store {field} as {attr.get('type')}, the index key is "
                f"{types[part['attribute']]}: skipped until rewritten"
            )
            continue
        changed = _form_change(field, attr, after["attributes"][field])
        if changed is not None:
            yield (
                f"{ident} items store {changed}: the index holds and orders the stored form "
                "until they are rewritten"
            )


def native_effects(
    cmp: Comparison, old_table: Mapping[str, Any], new_table: Mapping[str, Any]
) -> Iterator[Effect]:
    """How one entity's stored items are out of step with the new table's native GSIs."""
    old_attrs, new_attrs = cmp.old.attributes, cmp.new.attributes
    feeds = cmp.new.entity.get("native_indexes", {})
    fed = cmp.old.entity.get("native_indexes", {})
    for index, spec in sorted(new_table.get("native_indexes", {}).items()):
        subject = f"{index} key"
        parts = [p["attribute"] for p in _parts(spec)]
        yield from _empty_values(cmp, index, parts, _part_attributes(old_table))
        if index not in feeds:
            if set(parts) <= set(old_attrs):
                gone = sorted(set(parts) - set(new_attrs))
                yield Effect(
                    subject,
                    f"stored items carry every part of native GSI {index} "
                    f"({', '.join(parts)}), so DynamoDB keeps them in it, but the new model "
                    f"has no field {', '.join(gone)} and does not feed it: queries on it find "
                    "them until a rewrite drops the leftover attributes",
                )
            continue
        changed = [
            change
            for part in _parts(feeds[index])
            if part["field"] in old_attrs
            for change in [
                _form_change(part["field"], old_attrs[part["field"]], new_attrs[part["field"]])
            ]
            if change is not None
        ]
        if changed:
            existed = index in fed and index in old_table.get("native_indexes", {})
            was = "holds" if existed else "will hold"
            yield Effect(
                subject,
                f"native GSI {index} {was} stored items by the values as stored, and the "
                f"new model stores {', '.join(changed)} differently: they sit in it out of "
                "order (or, another type, are left out) until rewritten",
            )


def _part_attributes(table: Mapping[str, Any]) -> set[str]:
    """Every attribute that is a part of one of the table's native GSIs."""
    return {
        p["attribute"] for spec in table.get("native_indexes", {}).values() for p in _parts(spec)
    }


def _empty_values(
    cmp: Comparison, index: str, parts: list[str], keyed: set[str]
) -> Iterator[Effect]:
    """Stored empty strings or binaries under a part attribute the old model did not key.

    DynamoDB refuses an empty value in any index key attribute, so it skips such items
    when it backfills the index, and the new model refuses to write them (whether or not
    the entity feeds the index): only a transform (a value, or None) fixes them. The
    snapshot does not say whether any stored value is empty, so this is a warning, not a
    transform the runner would insist on for every item.
    """
    fields = [
        name
        for name in parts  # a field's attribute is its name (FieldPlan.attribute)
        if name not in keyed
        and name in cmp.new.attributes
        and codec_params(cmp.old.attributes.get(name, {})).get("python") in ("str", "bytes")
    ]
    if fields:
        names = ", ".join(fields)
        yield Effect(
            f"{index} key, empty values",
            f"stored items whose {names} is empty (an empty string or binary) are left out "
            f"of native GSI {index}, and the new model refuses to write them: if any may "
            "be, give them a value or None first (a migration with a transform)",
            rewrite=False,
        )
