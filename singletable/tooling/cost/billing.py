"""The lines an operation is billed: per item written or read, per index entry, per page.

Pure. The rules are those of `singletable.tooling.cost.capacity`'s module docstring.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from singletable.attributes.size import item_size
from singletable.errors import EstimateError
from singletable.model.table import Table
from singletable.operations.reads import BaseQuery
from singletable.operations.scan import Scan
from singletable.tooling.cost.report import CapacityLine
from singletable.tooling.cost.sizes import (
    READ_BLOCK_BYTES,
    entry_write_size,
    index_entry,
    index_key,
    index_spec,
    projected_names,
    read_units,
    same_entry,
    write_units,
)
from singletable.types import AttributeValue

__all__ = ["WriteMode", "item_read_line", "page_lines", "single_write"]

#: How a write is sent: alone, inside a BatchWriteItem, or inside a transaction.
WriteMode = Literal["single", "batch", "transaction"]

#: Units DynamoDB Local 3.3.0 reports for a delete whose key holds no item.
_MISSING_DELETE_UNITS: dict[WriteMode, float] = {"single": 1.0, "batch": 2.0, "transaction": 1.0}


def single_write(
    table: Table,
    before: Mapping[str, AttributeValue] | None,
    after: Mapping[str, AttributeValue] | None,
    verb: str,
    position: int,
    transactional: bool,
    mode: WriteMode,
) -> list[CapacityLine]:
    """The lines of one item write: the item (larger of before and after), then each index."""
    return _write_lines(
        table,
        before,
        after,
        verb=verb,
        position=position,
        transactional=transactional,
        missing_delete=_MISSING_DELETE_UNITS[mode],
    )


def _write_lines(
    table: Table,
    before: Mapping[str, AttributeValue] | None,
    after: Mapping[str, AttributeValue] | None,
    *,
    verb: str,
    position: int,
    transactional: bool,
    missing_delete: float,
) -> list[CapacityLine]:
    lines: list[CapacityLine] = []
    sizes = [item_size(i) for i in (before, after) if i is not None]
    if sizes:
        size = max(sizes)
        units = write_units(size, transactional=transactional)
        lines.append(
            CapacityLine("write", units, table.name, None, position, f"{verb} ({size:,} B)", size)
        )
    else:  # a delete of a key that holds no item
        lines.append(
            CapacityLine(
                "write", missing_delete, table.name, None, position, f"{verb} (no item)", 0
            )
        )
    for index in table.index_names():
        old = index_entry(table, index, before) if before is not None else None
        new = index_entry(table, index, after) if after is not None else None
        changes: list[tuple[str, int]] = []
        if old is None and new is None:
            continue
        if old is None:
            assert new is not None
            changes.append(("put", entry_write_size(table, index, new)))
        elif new is None:
            changes.append(("delete", entry_write_size(table, index, old)))
        elif index_key(table, index, old) != index_key(table, index, new):
            changes += [
                ("delete", entry_write_size(table, index, old)),
                ("put", entry_write_size(table, index, new)),
            ]
        elif not same_entry(old, new):
            size = max(entry_write_size(table, index, e) for e in (old, new))
            changes.append(("update", size))
        for change, size in changes:
            lines.append(
                CapacityLine(
                    "write",
                    write_units(size, transactional=transactional),
                    table.name,
                    index,
                    position,
                    f"index {index}: {change} ({size:,} B)",
                    size,
                )
            )
    return lines


def item_read_line(
    table: Table,
    item: Mapping[str, AttributeValue] | None,
    *,
    verb: str,
    position: int,
    consistent: bool,
    transactional: bool,
    missing_blocks: int,
) -> CapacityLine:
    """The line of one item read; a missing item costs ``missing_blocks`` blocks."""
    if item is None:
        size = 0
        units = missing_blocks * read_units(
            READ_BLOCK_BYTES, consistent=consistent, transactional=transactional
        )
        what = f"{verb} (no item)"
    else:
        size = item_size(item)
        units = read_units(size, consistent=consistent, transactional=transactional)
        what = f"{verb} ({size:,} B)"
    return CapacityLine("read", units, table.name, None, position, what, size)


def page_lines(
    query: BaseQuery[Any], read: Sequence[Mapping[str, AttributeValue]]
) -> list[CapacityLine]:
    """The lines of a query or scan that reads ``read``: one per page, plus table fetches."""
    table = query.table
    index = query._index()
    params = query.params()
    consistent = bool(params.get("ConsistentRead"))
    limit = params.get("Limit")
    sizes = []
    for item in read:
        entry = index_entry(table, index, item) if index is not None else item
        if entry is None:
            raise EstimateError(
                f"table {table.name!r}: an item read through index {index!r} lacks that "
                f"index's key attributes, so the index holds no entry for it: {dict(item)!r}"
            )
        sizes.append(item_size(entry))
    step = int(limit) if limit else max(len(sizes), 1)
    pages = [sizes[i : i + step] for i in range(0, len(sizes), step)] or [[]]
    verb = "scan" if isinstance(query, Scan) else "query"
    fetches = index is not None and _fetches_from_table(table, index, params)
    lines = []
    for number, page in enumerate(pages):
        total = sum(page)
        lines.append(
            CapacityLine(
                "read",
                read_units(total, consistent=consistent),
                table.name,
                index,
                number,
                f"{verb} page {number + 1}: {len(page)} items, {total:,} B",
                total,
            )
        )
        if fetches:
            # Each item is then read from the table as a GetItem would: whole, rounded
            # up per item.
            first = number * step
            for item in read[first : first + len(page)]:
                size = item_size(item)
                lines.append(
                    CapacityLine(
                        "read",
                        read_units(size, consistent=consistent),
                        table.name,
                        None,
                        number,
                        f"{verb} page {number + 1}: table fetch ({size:,} B)",
                        size,
                    )
                )
    return lines


def _fetches_from_table(table: Table, index: str, params: Mapping[str, Any]) -> bool:
    """Whether a query/scan of an LSI reads its items from the table as well.

    An LSI (unlike a GSI) answers for attributes it does not project by fetching each
    item from the table: when the request names one in its ProjectionExpression, or asks
    ``Select=ALL_ATTRIBUTES``. (DynamoDB Local also fetches for a ProjectionExpression that
    names only projected attributes; AWS documents fetches for non-projected ones only,
    which is what is estimated here.)
    """
    spec = index_spec(table, index)
    if spec.kind != "LSI" or spec.projection.type == "ALL" or params.get("Select") == "COUNT":
        return False
    if params.get("Select") == "ALL_ATTRIBUTES":
        return True
    expression = params.get("ProjectionExpression")
    if not expression:
        return False
    names = params.get("ExpressionAttributeNames", {})
    projected = projected_names(table, index)
    for path in expression.split(","):
        top = path.strip().split(".")[0].split("[")[0]
        if names.get(top, top) not in projected:
            return True
    return False
