"""The unit rules and the sizes they are applied to: items, index entries, blocks.

Pure: what an index holds for an item (`index_entry`), what its write is billed on, and
when two stored values are the same to DynamoDB (numbers by value, sets in any order).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from singletable.attributes.size import item_size
from singletable.model.definition import index_projection
from singletable.model.table import GSI, LSI, NativeGSI, Table
from singletable.types import AttributeValue, Item

__all__ = [
    "READ_BLOCK_BYTES",
    "WRITE_BLOCK_BYTES",
    "LSI_ENTRY_OVERHEAD_BYTES",
    "canonical",
    "entry_write_size",
    "index_entry",
    "index_key",
    "projected_names",
    "read_units",
    "same_entry",
    "write_units",
]

#: Reads are billed per 4 KB block, writes per 1 KB block.
READ_BLOCK_BYTES = 4096
WRITE_BLOCK_BYTES = 1024

#: An LSI entry write is billed on the entry's size plus this overhead (GSI entries are
#: not): what DynamoDB Local reports, and the per-entry overhead AWS documents for LSIs.
LSI_ENTRY_OVERHEAD_BYTES = 100


def read_units(size: int, *, consistent: bool = False, transactional: bool = False) -> float:
    """RCU for reading ``size`` bytes in one rounding (an item, or a query page's sum).

    Args:
        size: Bytes read.
        consistent: Strongly consistent (1 RCU per 4 KB) instead of eventually (0.5).
        transactional: Transactional read (2 RCU per 4 KB).

    Returns:
        ``ceil(size / 4096)`` blocks times 0.5, 1 or 2; 0.0 for 0 bytes.
    """
    blocks = math.ceil(size / READ_BLOCK_BYTES)
    per_block = 2.0 if transactional else 1.0 if consistent else 0.5
    return blocks * per_block


def write_units(size: int, *, transactional: bool = False) -> float:
    """WCU for writing ``size`` bytes: ``ceil(size / 1024)``, doubled in a transaction."""
    return math.ceil(size / WRITE_BLOCK_BYTES) * (2.0 if transactional else 1.0)


def index_spec(table: Table, index: str) -> GSI | LSI | NativeGSI:
    """The declaration of ``index``: a template GSI or LSI, or a native GSI."""
    return table.native_indexes.get(index) or table.indexes[index]


def index_key_attributes(table: Table, index: str) -> list[str]:
    """The key attributes of ``index``: its pk and sk, or every part of a native GSI."""
    native = table.native_indexes.get(index)
    if native is not None:
        return [p.attribute for p in native.parts]
    schema = table.key_schema(index)
    return [a for a in (schema.pk, schema.sk) if a is not None]


def index_entry(table: Table, index: str, item: Mapping[str, AttributeValue]) -> Item | None:
    """The entry ``item`` has in ``index``, or ``None`` when it lacks an index key.

    The entry holds the table's key attributes, the index's key attributes (each part of
    a native GSI, at its real size) and the projected attributes (every one for ``ALL``).
    """
    if any(a not in item for a in index_key_attributes(table, index)):
        return None
    if index_spec(table, index).projection.type == "ALL":
        return dict(item)
    names = projected_names(table, index)
    return {name: av for name, av in item.items() if name in names}


def projected_names(table: Table, index: str) -> set[str]:
    """The attributes a non-ALL index entry holds: keys, plus what the table projects."""
    names = {a for a in (table.pk, table.sk) if a is not None}
    names.update(index_key_attributes(table, index))
    # The projection as the table is created (INCLUDE also carries the entity and version
    # attributes), not only the attributes the model names.
    names.update(index_projection(table, index_spec(table, index)).get("NonKeyAttributes", ()))
    return names


def entry_write_size(table: Table, index: str, entry: Mapping[str, AttributeValue]) -> int:
    """The bytes an index entry write is billed on: an LSI entry carries 100 bytes more."""
    overhead = LSI_ENTRY_OVERHEAD_BYTES if index_spec(table, index).kind == "LSI" else 0
    return item_size(entry) + overhead


def canonical(av: AttributeValue | None) -> Any:
    """A hashable form in which the values DynamoDB stores as equal are equal.

    Numbers compare by value (DynamoDB stores ``"35.50"`` as ``"35.5"``), sets in any
    order, binary as bytes, maps and lists element by element.
    """
    if av is None:
        return None
    ((kind, value),) = av.items()
    if kind == "N":
        return (kind, Decimal(value))
    if kind == "NS":
        return (kind, frozenset(Decimal(v) for v in value))
    if kind == "B":
        return (kind, bytes(value))
    if kind == "BS":
        return (kind, frozenset(bytes(v) for v in value))
    if kind == "SS":
        return (kind, frozenset(value))
    if kind == "L":
        return (kind, tuple(canonical(v) for v in value))
    if kind == "M":
        return (kind, frozenset((k, canonical(v)) for k, v in value.items()))
    return (kind, value)


def same_entry(a: Mapping[str, AttributeValue], b: Mapping[str, AttributeValue]) -> bool:
    """Whether DynamoDB stores the two entries as the same (numbers by value, ...)."""
    if a.keys() != b.keys():
        return False
    return all(av == b[name] or canonical(av) == canonical(b[name]) for name, av in a.items())


def index_key(table: Table, index: str, entry: Item) -> tuple[Any, ...]:
    """The index key of an entry, in the canonical form that compares stored values."""
    return tuple(canonical(entry.get(a)) for a in index_key_attributes(table, index))
