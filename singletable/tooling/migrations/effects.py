"""What a model change does to stored items: the analysis under the migration planner.

The planner must never call a change safe while some stored item differs from what the
new model would write for it. So instead of diffing declarations, this module follows
each stored attribute of an entity's items through both models:

* the **old side** is what the old model holds for an item after reading it back and
  writing it again (its canonical form: a field stored without its attribute reads as
  the old default, and that default feeds the old keys);
* the **new side** is what the new model reads from the same stored item (an absent
  attribute reads as the *new* default) and would then write.

Both sides are computed symbolically from two snapshot entity descriptions: a field's
value is either the value the item stores (`Stored`), a constant default (`Const`), a
fresh value from a default factory (`Fresh`), or unreadable (`Unreadable`). For every
key attribute (table key and every index key), every combination of "attribute stored /
not stored" of the nullable fields it depends on is rendered on both sides: index
membership (sparse indexes), template text, codec parameters and stored-format ids,
escaping. Non-key attributes, the stored identifier (``_et``/``_ev``) and the TTL
attribute are compared the same way. Each difference becomes an `Effect`.

Pure: it reads JSON-able snapshot descriptions only (``singletable.tooling.migrations.snapshot``).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping
from typing import Any

from singletable.tooling.migrations.codec_changes import (
    codec_params,
    codec_text,
    format_changes,
    narrowing,
    stores_alike,
    widens,
)
from singletable.tooling.migrations.key_effects import key_effects
from singletable.tooling.migrations.native import native_effects
from singletable.tooling.migrations.sides import (
    Comparison,
    Effect,
    Side,
    Unreadable,
    absent_value,
    numbers_convert,
    show,
    stores_none,
)

__all__ = ["Effect", "entity_effects", "format_changes"]


def entity_effects(
    old_table: Mapping[str, Any],
    new_table: Mapping[str, Any],
    old_id: str,
    new_id: str,
) -> list[Effect]:
    """Every way the stored items of one entity differ under the new model.

    Args:
        old_table: The snapshot section of the table the items were written with.
        new_table: The same table as the current model describes it.
        old_id: The entity's identifier in the old section (``"AuditEvent@1"``).
        new_id: The paired entity in the new section.
    """
    old = Side(old_table["entities"][old_id], old_table["encoding"])
    new = Side(new_table["entities"][new_id], new_table["encoding"])
    cmp = Comparison(old, new)
    effects: list[Effect] = []
    if old_id != new_id:
        effects.append(
            Effect(
                "identifier",
                f"the stored identifier changes ({old_id} -> {new_id}): items written as "
                f"{old_id} must be rewritten to be found as the new entity",
            )
        )
    for param in ("entity_attribute", "version_attribute"):
        if old.encoding[param] != new.encoding[param]:
            effects.append(
                Effect(
                    "identifier",
                    f"{param} {old.encoding[param]!r} -> {new.encoding[param]!r}: every stored "
                    "item carries its identifier under the old name",
                )
            )
    effects.extend(key_effects(cmp, _key_attributes(new_table)))
    effects.extend(native_effects(cmp, old_table, new_table))
    effects.extend(_attribute_effects(cmp))
    effects.extend(_ttl_effects(cmp, old_table, new_table))
    return _one_per_subject(effects)


def _one_per_subject(effects: list[Effect]) -> list[Effect]:
    """The effects, one per subject: an attribute is listed once, as severe as its worst."""
    merged: dict[str, Effect] = {}
    for effect in effects:
        seen = merged.get(effect.subject)
        merged[effect.subject] = effect if seen is None else _joined(seen, effect)
    return list(merged.values())


def _joined(first: Effect, second: Effect) -> Effect:
    return Effect(
        first.subject,
        f"{first.reason}; {second.reason}",
        rewrite=first.rewrite or second.rewrite,
        unreadable=first.unreadable or second.unreadable,
        needs_transform=first.needs_transform or second.needs_transform,
    )


def _ttl_effects(
    cmp: Comparison, old_table: Mapping[str, Any], new_table: Mapping[str, Any]
) -> Iterator[Effect]:
    """A difference in the TTL attribute stored items carry (name, field, encoding)."""
    old_field, new_field = cmp.old.entity["ttl_field"], cmp.new.entity["ttl_field"]
    old_attr = old_table["settings"]["ttl_attribute"] if old_field else None
    new_attr = new_table["settings"]["ttl_attribute"] if new_field else None
    reasons: list[str] = []
    if old_field != new_field:
        reasons.append(f"field {old_field!r} -> {new_field!r}")
    if old_attr != new_attr:
        reasons.append(f"attribute {old_attr!r} -> {new_attr!r}")
    old_format = old_table["encoding"].get("ttl_format")
    new_format = new_table["encoding"].get("ttl_format")
    if old_field and new_field and old_format and new_format and old_format != new_format:
        reasons.append(f"stored format {old_format} -> {new_format}")
    if old_field and old_field == new_field:
        b, a = cmp.old.attributes.get(old_field), cmp.new.attributes.get(new_field)
        if (
            b is not None
            and a is not None
            and codec_params(b).get("python") != codec_params(a).get("python")
        ):
            reasons.append(
                f"field type {codec_params(b).get('python')} -> {codec_params(a).get('python')}"
            )
    if reasons:
        yield Effect(
            "ttl",
            f"the TTL the entity writes changes ({', '.join(reasons)}): stored items keep the "
            "old expiry until rewritten",
        )


def _key_attributes(table: Mapping[str, Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    for index, entry in table["indexes"].items():
        for role in ("pk", "sk"):
            if entry.get(role):
                found.setdefault(entry[role]["attribute"], index)
    for role in ("pk", "sk"):
        if table["key"].get(role):
            found[table["key"][role]["attribute"]] = "<table>"
    return found


def _attribute_effects(cmp: Comparison) -> Iterator[Effect]:
    """Differences in the stored (non-key) attributes of the entity's fields."""
    before_all, after_all = cmp.old.attributes, cmp.new.attributes
    for name in sorted(set(before_all) | set(after_all)):
        before, after = before_all.get(name), after_all.get(name)
        if after is None:
            yield Effect(
                f"attribute {name}",
                "field removed: reads ignore the stored attribute (it stays until items are "
                "rewritten)",
                rewrite=False,
            )
            continue
        if before is not None:
            decodes = yield from _stored_value_effects(name, before, after)
            if not decodes:
                continue  # reported as unreadable: what absent items read changes nothing
        if False not in cmp.fields_stored(name):
            continue
        yield from _absent_attribute_effects(name, before, after)


def _stored_value_effects(
    name: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> Generator[Effect, None, bool]:
    """Differences in how the values a field stores read and write under the new model.

    Returns:
        Whether the stored values still decode (or read as numbers of the new type).
    """
    subject = f"attribute {name}"
    if stores_none(before) and not after.get("nullable"):
        yield Effect(
            subject,
            "no longer optional: items that store None (as NULL, the field's default "
            "being another value) do not validate",
            unreadable=True,
            needs_transform=f"field {name}: stored None values have no value in the new model",
        )
    b, a = codec_params(before), codec_params(after)
    change = f"{codec_text(b)} -> {codec_text(a)}"
    if stores_alike(before, after):
        if b != a:
            yield Effect(
                subject,
                f"allowed values widen ({change}): every stored value still decodes and is "
                "stored alike",
                rewrite=False,
            )
        return True
    if numbers_convert(before, after) and b != a:
        yield Effect(
            subject,
            f"stored values now read as {a.get('python')} ({change}); "
            "the new model may store or key them differently",
        )
    elif not widens(b, a):
        yield Effect(
            subject,
            f"stored type changes ({change}): stored values may no longer decode or validate",
            unreadable=True,
            needs_transform=narrowing(before, after, f"field {name}"),
        )
        return False
    formats = format_changes(before, after)
    if formats:
        yield Effect(
            subject,
            "; ".join(formats) + ": the new model writes stored values differently "
            "(reads still work); rewrite so that conditions and filters compare them "
            "correctly",
        )
    return True


def _absent_attribute_effects(
    name: str, before: Mapping[str, Any] | None, after: Mapping[str, Any]
) -> Iterator[Effect]:
    """What stored items without the field's attribute read under the new model."""
    subject = f"attribute {name}"
    old_absent, new_absent = absent_value(before), absent_value(after)
    if isinstance(old_absent, Unreadable):
        return  # the old model did not read such items either (a None in Any)
    if isinstance(new_absent, Unreadable):
        yield Effect(
            subject,
            (
                "new required field without a default"
                if before is None
                else "the field becomes required without a default"
            )
            + ": stored items without it fail validation; give it a default or make it "
            "optional",
            unreadable=True,
            needs_transform=f"field {name}: stored items without it have no value for it",
        )
    elif old_absent != new_absent:
        what = "new field" if before is None else "items stored without it"
        yield Effect(
            subject,
            f"{what}: stored items lack the attribute and now read it as "
            f"{show(new_absent)} (was {show(old_absent)}), which the new model would "
            "store; conditions, filters and index keys do not see it until rewritten",
        )
    elif before is None:
        yield Effect(
            subject,
            "new optional field: stored items read it as None, which the new model also "
            "stores by omitting the attribute",
            rewrite=False,
        )
