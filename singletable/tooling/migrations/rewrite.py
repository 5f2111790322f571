"""How the stored items of one old entity become items of the new model.

An `EntityRewrite` knows how the items of one old entity (``_et``/``_ev`` from the
snapshot) become items of the new model: decoded with the new plan (or converted by a
user transform), the condition that holds only while a stored item is unchanged, and
the uniqueness guards that move with it. The rewrite of one scanned item as an operation
is `singletable.tooling.migrations.rewrite_item.RewriteItem`.

Every write is conditional on the item being unchanged since it was read
(`EntityRewrite.unchanged`): its version attribute where both models keep one, otherwise
every attribute read, by value, and the absence of every attribute either model writes
that the item lacked.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from singletable.attributes.convert import from_attribute_value
from singletable.errors import SingleTableError
from singletable.expressions.conditions import Condition, and_, render_condition
from singletable.expressions.paths import Placeholders
from singletable.keys.codecs import codec_from_params
from singletable.model.plan import EntityPlan, entity_plan
from singletable.model.table import Table
from singletable.model.unique import UniqueConstraint
from singletable.operations.common import key_ref
from singletable.operations.guarded import GuardWrite, guard_writes
from singletable.operations.limits import (
    MAX_EXPRESSION_BYTES,
    MAX_EXPRESSION_OPERATORS,
    expression_operators,
    expression_size,
)
from singletable.tooling.migrations.snapshot import unique_forms
from singletable.types import AttributeValue, Item

#: A user transform: the stored item's values (plain Python, keyed by attribute name:
#: fields are stored under their names) to the new model's field values.
Transform = Callable[[Mapping[str, Any]], Mapping[str, Any]]


class Unconvertible(Exception):
    """The item cannot be turned into a new-model item (decode, validate or encode)."""


def split_id(ident: str) -> tuple[str, int]:
    """``"Order@2"`` -> ``("Order", 2)``."""
    name, _, version = ident.rpartition("@")
    return name, int(version)


class EntityRewrite:
    """How the stored items of one old entity become items of the new model.

    Args:
        table: The table in the new model.
        old_table: The table's section of the snapshot the items were written with.
        old_id: The old entity identifier (``"Customer@1"``).
        new_id: The new one.
        transform: Converts stored values to the new model's (see `Transform`).
        keep: Attributes the items keep although the new model does not write them (the
            old TTL attribute during a TTL switch).
        rewrite: Whether the items are rewritten (False: only their guards are backfilled).
    """

    def __init__(
        self,
        table: Table,
        old_table: Mapping[str, Any],
        old_id: str,
        new_id: str,
        *,
        transform: Transform | None = None,
        keep: frozenset[str] = frozenset(),
        rewrite: bool = True,
    ) -> None:
        self.table = table
        name, version = split_id(new_id)
        plan = entity_plan(table, name, version)
        if plan is None:  # pragma: no cover - the planner only pairs existing entities
            raise Unconvertible(f"table {table.name}: no entity {new_id} in the model")
        self.plan: EntityPlan = plan
        self.transform = transform
        self.keep = keep
        self.rewrite = rewrite
        self.old_name, self.old_version = split_id(old_id)
        encoding = old_table["encoding"]
        self.old_et, self.old_ev = encoding["entity_attribute"], encoding["version_attribute"]
        self.key_attrs = [table.pk] + ([table.sk] if table.sk else [])
        old_entity: Mapping[str, Any] = old_table.get("entities", {}).get(old_id) or {}
        self.lock_attribute = self._lock_attribute(old_entity)
        self.known = self._known_attributes(old_table, old_entity)
        self.old_constraints = self._old_constraints(old_entity)

    # -- what the stored items hold -------------------------------------------------------

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
        table = self.table
        names = {f.attribute for f in self.plan.fields.values()}
        names.update(self.key_attrs)
        names.update(table.key_attributes())
        names.update((table.entity_attribute, table.version_attribute))
        names.update(a for a in (table.ttl_attribute,) if a)
        names.update(old_entity.get("attributes") or {})
        for keys in (old_entity.get("keys") or {}).values():
            for role in ("pk", "sk"):
                attribute = (keys or {}).get(role) and keys[role].get("attribute")
                if attribute:
                    names.add(attribute)
        settings = old_table.get("settings") or {}
        if isinstance(settings.get("ttl_attribute"), str):
            names.add(settings["ttl_attribute"])
        names.update(self.keep)
        return frozenset(names)

    def _old_constraints(self, old_entity: Mapping[str, Any]) -> dict[str, UniqueConstraint]:
        """The constraints whose guards the stored items hold, as the old model built them.

        The new model's own constraint where the stored form is the same; else rebuilt
        from the snapshot (old entity name, old codecs). A snapshot older than format 3
        records no codecs: they are taken to be the new model's.
        """
        new = {c.name: c for c in self.plan.unique}
        result: dict[str, UniqueConstraint] = {}
        for name, codecs in unique_forms(old_entity).items():
            current = new.get(name)
            fields = tuple(name.split("+"))
            if codecs is None:
                if current is None:
                    continue  # dropped, and its codecs unknown: its guards stay as they are
                codecs = {f: c.params() for f, c in current.codecs().items()}
            same_codecs = current is not None and all(
                {k: v for k, v in codecs[f].items() if k != "format"} == c.params()
                for f, c in current.codecs().items()
            )
            if current is not None and same_codecs and self.old_name == self.plan.name:
                result[name] = current
                continue
            built = {f: codec_from_params(codecs[f]) for f in fields}
            result[name] = UniqueConstraint.build(self.old_name, fields, self.table, built)
        return result

    def ours(self, item: Item) -> bool:
        """Whether ``item`` is one of the old entity's stored items."""
        return item.get(self.old_et) == {"S": self.old_name} and item.get(self.old_ev) == {
            "N": str(self.old_version)
        }

    def key_of(self, item: Item) -> Item:
        """The primary key of a stored item."""
        return {a: item[a] for a in self.key_attrs}

    def holder_fields(self, key: Item) -> dict[str, Any]:
        """A holder's key as the new model's key fields (the raw key if it does not parse)."""
        try:
            return self.plan.fields_from_keys(key)
        except SingleTableError:
            return {a: next(iter(av.values())) for a, av in key.items()}

    def key_text(self, item: Mapping[str, AttributeValue]) -> str:
        """A key as messages show it."""
        return ", ".join(
            f"{a}={next(iter(item[a].values()))!r}" for a in self.key_attrs if a in item
        )

    # -- the new item ---------------------------------------------------------------------

    def convert(self, item: Item) -> Item:
        """The item as the new model writes it (via the transform, when there is one)."""
        if not self.rewrite:
            return item
        try:
            if self.transform is not None:
                values = self.transform({a: from_attribute_value(av) for a, av in item.items()})
                new_item = self.plan.to_item(self.plan.model.model_validate(dict(values)))
            else:
                new_item = self.plan.to_item(self.plan.from_item(item))
        except (SingleTableError, ValueError) as exc:
            raise Unconvertible(str(exc)) from None
        except Exception as exc:
            if self.transform is None:
                raise
            # The user's function failed on this item: count it, like any other item
            # that cannot be rewritten, rather than stop the whole run.
            raise Unconvertible(
                f"transform raised {type(exc).__name__}: {exc}".replace("\n", " ")
            ) from None
        for attribute in self.keep:
            if attribute in item and attribute not in new_item:
                new_item[attribute] = item[attribute]
        return new_item

    def unchanged(self, item: Item) -> Condition:
        """A condition true only while the stored item is exactly ``item``."""
        if self.lock_attribute is not None:
            lock = key_ref(self.lock_attribute)
            stored = item.get(self.lock_attribute)
            return lock == stored if stored is not None else lock.not_exists()
        clauses = [key_ref(a) == av for a, av in sorted(item.items())]
        clauses += [key_ref(a).not_exists() for a in sorted(self.known - item.keys())]
        condition = and_(*clauses)
        text = render_condition(condition, Placeholders())
        size = expression_size(text)
        operators = expression_operators("ConditionExpression", text)
        if size > MAX_EXPRESSION_BYTES or operators > MAX_EXPRESSION_OPERATORS:
            raise Unconvertible(
                f"{len(item)} attributes make a condition of {size:,} bytes and "
                f"{operators:,} operators, past DynamoDB's limits ({MAX_EXPRESSION_BYTES:,} "
                f"bytes, {MAX_EXPRESSION_OPERATORS} operators); give {self.plan.label} a "
                "version_field so the rewrite can check the version alone"
            )
        return condition

    def bumped(self, new_item: Item) -> Item:
        """``new_item`` with the next version, when the version alone is compared.

        So a writer holding the item as it was read before the rewrite gets a version
        conflict and re-reads it, as after any other write.
        """
        if self.lock_attribute is None:
            return new_item
        stored = new_item.get(self.lock_attribute, {"N": "0"}).get("N", "0")
        return {**new_item, self.lock_attribute: {"N": str(int(stored) + 1)}}

    # -- guards ---------------------------------------------------------------------------

    def decoded(self, item: Item, fields: Sequence[str]) -> dict[str, Any]:
        """The values of ``fields`` in a stored item (``None`` where absent)."""
        return self._values(item, fields, raw=False)

    def _values(self, item: Item, fields: Sequence[str], *, raw: bool) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name in fields:
            plan_field = self.plan.fields.get(name)
            av = item.get(plan_field.attribute if plan_field else name)
            if av is None:
                values[name] = None
                continue
            try:
                value = plan_field.codec.from_av(av) if plan_field else from_attribute_value(av)
            except (SingleTableError, ValueError, TypeError):
                value = from_attribute_value(av)
            # Codecs rebuilt from a snapshot write an enum by its value.
            values[name] = value.value if raw and isinstance(value, enum.Enum) else value
        return values

    def guard_moves(self, old: Item, new: Item) -> list[GuardWrite]:
        """The guard changes of replacing the stored item ``old`` by ``new``.

        The one guarded-write mechanism pairs the constraints (by their fields) and
        decides what moves (`singletable.operations.guarded.guard_writes`); the old side
        is the snapshot's constraints (`_old_constraints`), since a renamed entity or a
        changed codec has no plan of its own in the new model.
        """
        old_values: dict[str, Any] = {}
        for constraint in self.old_constraints.values():
            rebuilt = constraint not in self.plan.unique
            old_values.update(self._values(old, constraint.fields, raw=rebuilt))
        new_values = self._values(new, sorted(self.plan.unique_fields()), raw=False)
        moved = self.key_of(old) != self.key_of(new)
        return guard_writes(
            self.plan.unique,
            old_values,
            new_values,
            old_constraints=list(self.old_constraints.values()),
            moved_from=self.key_of(old) if moved else None,
        )

    def is_backfill(self, write: GuardWrite) -> bool:
        """Whether ``write`` claims a guard of a constraint new to the model."""
        return write.claim and write.constraint.name not in self.old_constraints
