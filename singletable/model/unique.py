"""Uniqueness constraints: one *guard item* per unique value, in the entity's own table.

An entity declares ``unique=("email",)`` (one constraint per field) or
``unique=[("tenant_id", "email")]`` (one constraint over a group of fields). For every
stored item whose constrained fields are all set, the table holds a guard item whose
primary key is built from the entity, the fields and their values; writes claim and
release guards in the same transaction as the item (`singletable.operations.guarded`).

The guard key shape (see ``docs/uniqueness.md``) is, with delimiter ``D`` and escape
character ``E``::

    PK = E "UNIQUE" D escape(entity name) D field1 D value1 D field2 D value2
    SK = E "UNIQUE"            (tables with a sort key)

No entity key can ever equal or start like it: in an entity's string key the escape
character only appears as the start of an escape sequence, followed by two upper-case
hex digits (literal segments may not contain it, unescaped codec output never reaches
it), whereas a guard key has ``E`` followed by ``U``. The values are encoded by the
fields' key codecs and escaped like any key segment, so two values share a guard exactly
when they are equal as the fields' types compare them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from singletable.errors import KeyDecodeError
from singletable.keys.codec_base import KeyCodec
from singletable.keys.templates import FieldSegment, KeyTemplate
from singletable.model.table import Table
from singletable.types import AttributeValue, Item, frozen_dataclass

#: The marker after the escape character that starts every guard key.
GUARD_MARK = "UNIQUE"

#: Attributes of a guard item besides its key: which entity and fields it guards, and
#: the primary key of the item holding the value.
GUARD_ENTITY = "_uq_entity"
GUARD_FIELDS = "_uq_fields"
GUARD_HOLDER_PK = "_uq_pk"
GUARD_HOLDER_SK = "_uq_sk"

#: Joins the field names of a constraint over several fields (never in an identifier).
FIELD_JOIN = "+"


def guard_prefix(table: Table) -> str:
    """The text every guard partition key on ``table`` starts with (``"%UNIQUE#"``)."""
    return f"{table.escape}{GUARD_MARK}{table.delimiter}"


def guard_sort_key(table: Table) -> str:
    """The sort key of every guard item (on tables with a sort key)."""
    return f"{table.escape}{GUARD_MARK}"


def is_guard_item(table: Table, item: Mapping[str, AttributeValue]) -> bool:
    """Whether ``item`` (or a key) is a uniqueness guard of ``table``.

    Decided by the partition key alone, so it works on keys-only stream records too.
    """
    pk = item.get(table.pk)
    return pk is not None and pk.get("S", "").startswith(guard_prefix(table))


@frozen_dataclass
class UniqueConstraint:
    """One uniqueness constraint of an entity: its fields and the guard keys they make.

    Attributes:
        entity: The entity's stored name.
        fields: The constrained fields, in declaration order.
        table: The entity's table.
        values_template: Formats and parses the values part of a guard key (the fields'
            key codecs, joined by the table's delimiter).
    """

    entity: str
    fields: tuple[str, ...]
    table: Table
    values_template: KeyTemplate
    #: The partition key text shared by every guard of this constraint.
    key_prefix: str

    @classmethod
    def build(
        cls, entity: str, fields: Sequence[str], table: Table, codecs: Mapping[str, KeyCodec[Any]]
    ) -> UniqueConstraint:
        """Compile a constraint from its fields' key codecs."""
        d = table.delimiter
        # Each value follows its field's name: readable, and never an empty key.
        source = d.join(f"{f}{d}{{{f}}}" for f in fields)
        template = KeyTemplate(
            source,
            attribute=table.pk,
            role="pk",
            key_type="S",
            escaper=table.escaper,
            codecs=codecs,
            where=f"entity {entity}, unique {FIELD_JOIN.join(fields)}",
        )
        prefix = f"{guard_prefix(table)}{table.escaper.escape(entity)}{d}"
        # The values part is size-checked by its template; the guard key also holds the prefix.
        template.stored_after(prefix)
        return cls(entity, tuple(fields), table, template, prefix)

    @property
    def name(self) -> str:
        """How the constraint is named in guard keys, snapshots and messages."""
        return FIELD_JOIN.join(self.fields)

    def values(self, source: Mapping[str, Any]) -> dict[str, Any] | None:
        """The constrained values in ``source``; ``None`` when any of them is ``None``.

        A value that is ``None`` (an optional field left unset) is not guarded, as SQL
        treats NULL in a unique index: any number of items may leave it unset.
        """
        values = {f: source.get(f) for f in self.fields}
        return None if any(v is None for v in values.values()) else values

    def guard_key(self, values: Mapping[str, Any]) -> Item:
        """The primary key of the guard of these values."""
        pk = self.key_prefix + self.values_template.format(values)
        key: Item = {self.table.pk: {"S": pk}}
        if self.table.sk is not None:
            key[self.table.sk] = {"S": guard_sort_key(self.table)}
        return key

    def guard_item(self, values: Mapping[str, Any], holder: Mapping[str, AttributeValue]) -> Item:
        """The whole guard item for these values, held by the item with key ``holder``."""
        item = self.guard_key(values)
        item[GUARD_ENTITY] = {"S": self.entity}
        item[GUARD_FIELDS] = {"S": self.name}
        item[GUARD_HOLDER_PK] = dict(holder[self.table.pk])
        if self.table.sk is not None:
            item[GUARD_HOLDER_SK] = dict(holder[self.table.sk])
        return item

    def holder_attributes(self, holder: Mapping[str, AttributeValue]) -> dict[str, AttributeValue]:
        """The guard attributes that name the holder (for "held by this item" conditions)."""
        result = {GUARD_HOLDER_PK: dict(holder[self.table.pk])}
        if self.table.sk is not None:
            result[GUARD_HOLDER_SK] = dict(holder[self.table.sk])
        return result

    def parse_values(self, guard_pk: str) -> dict[str, Any]:
        """The values a guard key of this constraint was built from."""
        if not guard_pk.startswith(self.key_prefix):
            raise KeyDecodeError(
                f"{guard_pk!r} is not a guard of unique {self.name} of {self.entity}"
            )
        return self.values_template.parse(guard_pk[len(self.key_prefix) :])

    def codecs(self) -> dict[str, KeyCodec[Any]]:
        """The key codec of each field, as guard keys write its values."""
        return {
            segment.name: segment.codec
            for segment in self.values_template.segments
            if isinstance(segment, FieldSegment)
        }

    def describe(self) -> list[str]:
        """The JSON-able description used by snapshots: the field names."""
        return list(self.fields)
