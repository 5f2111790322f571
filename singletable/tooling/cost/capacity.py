"""Capacity estimates: the RCU/WCU an operation consumes, computed from item sizes.

Pure: no I/O. `estimate_capacity` takes an operation (the same value whose ``params()``
is the boto3 request) plus what DynamoDB will find — the stored item(s) before a write,
the item after an update, the items a read returns — and returns a `CapacityEstimate`
whose total equals the ``ConsumedCapacity`` DynamoDB reports, with one `CapacityLine` per
item and per index touched (``explain()`` gives it as plain data).

The rules, each checked against DynamoDB Local 3.3.0 with ``ReturnConsumedCapacity=
INDEXES`` (see ``tests/integration/test_capacity_oracle.py``):

* **Reads** are billed in 4 KB blocks: eventually consistent 0.5 RCU per block, strongly
  consistent 1, transactional 2. GetItem, BatchGetItem and TransactGetItems round up
  *per item*; Query and Scan round up once per response page, on the *sum* of the sizes
  of the items read (before any filter, whatever the projection). On an index the size
  read is the size of the *index entry* (table keys + index keys + projected attributes;
  no overhead bytes).
* **Missing items** still cost something, differently per operation: GetItem one block;
  TransactGetItems one block (x2); BatchGetItem nothing; an empty Query/Scan page
  nothing (DynamoDB Local reports 0.0; some write-ups say real DynamoDB bills 0.5).
* **Writes** are billed in 1 KB blocks on the *larger* of the item before and after the
  write (PutItem over an existing item, UpdateItem; DeleteItem on the item deleted), 2x
  for TransactWriteItems. Writing an item identical to the stored one still costs it.
  Deleting a missing key costs 1 WCU (2 inside a BatchWriteItem, 1 — not 2 — inside a
  transaction: the figures DynamoDB Local reports).
* A transaction's **ConditionCheck** is billed like a transactional read: 2 per 4 KB
  block of the checked item (one block when it is missing).
* **Index writes**: for every GSI/LSI, compare the item's index entry before and after:
  absent -> present is one put (entry size), present -> absent one delete (old entry
  size), a changed index key a delete *and* a put, a changed projected value with the
  same keys one write on the larger entry, an unchanged entry nothing. Entries are sized
  like items; 1 KB blocks; 2x in a transaction.

* **Numbers** compare by value: DynamoDB stores ``"35.50"`` as ``"35.5"``, so re-writing
  it changes nothing (no index write).
* **LSI entries** are billed on their size plus 100 bytes (`LSI_ENTRY_OVERHEAD_BYTES`);
  GSI entries on their size alone.
* An **LSI query or scan that names attributes the index does not project** (or asks
  ``Select=ALL_ATTRIBUTES``) reads the index entries (one rounding on their sum) *and*
  fetches every item from the table, each rounded up on its own like a GetItem.

Not modelled: the 1 MB page limit (pass each page's items separately) and failed
conditional writes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from singletable.attributes.size import item_size
from singletable.errors import EstimateError
from singletable.model.definition import index_projection
from singletable.model.table import Table
from singletable.operations.batch import BatchGet, BatchWrite
from singletable.operations.collection import CollectionQuery
from singletable.operations.guarded import stored_values
from singletable.operations.items import Delete, Get, ProjectedGet, Put, delete_entries, put_entries
from singletable.operations.query import BaseQuery, EntityQuery
from singletable.operations.scan import Scan
from singletable.operations.transactions import TransactGet, TransactWrite
from singletable.operations.update import (
    Update,
    touched_constraints,
    update_entries,
    update_old_known,
)
from singletable.types import AttributeValue, Item

if TYPE_CHECKING:
    from singletable.operations.protocol import Operation

__all__ = [
    "READ_BLOCK_BYTES",
    "WRITE_BLOCK_BYTES",
    "CapacityEstimate",
    "CapacityLine",
    "LSI_ENTRY_OVERHEAD_BYTES",
    "EstimateError",
    "estimate_capacity",
    "index_entry",
    "read_units",
    "write_units",
]

#: Reads are billed per 4 KB block, writes per 1 KB block.
READ_BLOCK_BYTES = 4096
WRITE_BLOCK_BYTES = 1024

#: An LSI entry write is billed on the entry's size plus this overhead (GSI entries are
#: not): what DynamoDB Local reports, and the per-entry overhead AWS documents for LSIs.
LSI_ENTRY_OVERHEAD_BYTES = 100

#: Units DynamoDB Local 3.3.0 reports for a delete whose key holds no item.
_MISSING_DELETE_UNITS = {"single": 1.0, "batch": 2.0, "transaction": 1.0}

Kind = Literal["read", "write"]


@dataclass(frozen=True)
class CapacityLine:
    """One item's (or one index entry's) share of an operation's capacity.

    Attributes:
        kind: ``"read"`` (RCU) or ``"write"`` (WCU).
        units: The capacity units.
        table: The table name.
        index: The index name, or ``None`` for the table itself.
        item: The item's position in a batch or transaction (0 for single-item ops, the
            page number for queries and scans).
        what: A short description, e.g. ``"put (1,025 B)"`` or ``"index GSI1: move"``.
        size: The bytes billed (after taking the larger of before and after).
    """

    kind: Kind
    units: float
    table: str
    index: str | None
    item: int
    what: str
    size: int


@dataclass(frozen=True)
class CapacityEstimate:
    """The capacity an operation consumes, line by line."""

    lines: tuple[CapacityLine, ...] = ()

    @property
    def rcu(self) -> float:
        """Read capacity units in all."""
        return sum(line.units for line in self.lines if line.kind == "read")

    @property
    def wcu(self) -> float:
        """Write capacity units in all."""
        return sum(line.units for line in self.lines if line.kind == "write")

    @property
    def total(self) -> float:
        """Every unit, as DynamoDB's ``ConsumedCapacity.CapacityUnits`` sums them."""
        return sum(line.units for line in self.lines)

    @property
    def table_units(self) -> float:
        """Units consumed on the table itself (``ConsumedCapacity.Table``)."""
        return sum(line.units for line in self.lines if line.index is None)

    @property
    def index_units(self) -> dict[str, float]:
        """Units per index (``ConsumedCapacity.GlobalSecondaryIndexes`` / ``Local...``)."""
        result: dict[str, float] = {}
        for line in self.lines:
            if line.index is not None:
                result[line.index] = result.get(line.index, 0.0) + line.units
        return result

    def __add__(self, other: CapacityEstimate) -> CapacityEstimate:
        return CapacityEstimate(self.lines + other.lines)

    def explain(self) -> dict[str, Any]:
        """The estimate as plain data: totals, per index, and one entry per line."""
        return {
            "rcu": self.rcu,
            "wcu": self.wcu,
            "table": self.table_units,
            "indexes": self.index_units,
            "breakdown": [
                {
                    "kind": line.kind,
                    "units": line.units,
                    "table": line.table,
                    "index": line.index,
                    "item": line.item,
                    "what": line.what,
                    "bytes": line.size,
                }
                for line in self.lines
            ],
        }


# -- unit rules -------------------------------------------------------------------------


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


def index_entry(table: Table, index: str, item: Mapping[str, AttributeValue]) -> Item | None:
    """The entry ``item`` has in ``index``, or ``None`` when it lacks an index key.

    The entry holds the table's key attributes, the index's key attributes and the
    projected attributes (every attribute for ``ALL``).
    """
    schema = table.key_schema(index)
    if schema.pk not in item or (schema.sk is not None and schema.sk not in item):
        return None
    if table.indexes[index].projection.type == "ALL":
        return dict(item)
    names = _projected_names(table, index)
    return {name: av for name, av in item.items() if name in names}


def _projected_names(table: Table, index: str) -> set[str]:
    """The attributes a non-ALL index entry holds: keys, plus what the table projects."""
    schema = table.key_schema(index)
    names = {a for a in (table.pk, table.sk, schema.pk, schema.sk) if a is not None}
    # The projection as the table is created (INCLUDE also carries the entity and version
    # attributes), not only the attributes the model names.
    names.update(index_projection(table, table.indexes[index]).get("NonKeyAttributes", ()))
    return names


def _entry_write_size(table: Table, index: str, entry: Mapping[str, AttributeValue]) -> int:
    """The bytes an index entry write is billed on: an LSI entry carries 100 bytes more."""
    overhead = LSI_ENTRY_OVERHEAD_BYTES if table.indexes[index].kind == "LSI" else 0
    return item_size(entry) + overhead


def _canonical(av: AttributeValue | None) -> Any:
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
        return (kind, tuple(_canonical(v) for v in value))
    if kind == "M":
        return (kind, frozenset((k, _canonical(v)) for k, v in value.items()))
    return (kind, value)


def _same(a: Mapping[str, AttributeValue], b: Mapping[str, AttributeValue]) -> bool:
    if a.keys() != b.keys():
        return False
    return all(av == b[name] or _canonical(av) == _canonical(b[name]) for name, av in a.items())


def _key_of(table: Table, index: str, entry: Item) -> tuple[Any, ...]:
    schema = table.key_schema(index)
    return tuple(_canonical(entry.get(a)) for a in (schema.pk, schema.sk) if a is not None)


# -- writes -----------------------------------------------------------------------------


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
    for index in table.indexes:
        old = index_entry(table, index, before) if before is not None else None
        new = index_entry(table, index, after) if after is not None else None
        changes: list[tuple[str, int]] = []
        if old is None and new is None:
            continue
        if old is None:
            assert new is not None
            changes.append(("put", _entry_write_size(table, index, new)))
        elif new is None:
            changes.append(("delete", _entry_write_size(table, index, old)))
        elif _key_of(table, index, old) != _key_of(table, index, new):
            changes += [
                ("delete", _entry_write_size(table, index, old)),
                ("put", _entry_write_size(table, index, new)),
            ]
        elif not _same(old, new):
            size = max(_entry_write_size(table, index, e) for e in (old, new))
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


# -- reads ------------------------------------------------------------------------------


def _item_read_line(
    table: Table,
    item: Mapping[str, AttributeValue] | None,
    *,
    verb: str,
    position: int,
    consistent: bool,
    transactional: bool,
    missing_blocks: int,
) -> CapacityLine:
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


def _page_lines(
    query: BaseQuery[Any], read: Sequence[Mapping[str, AttributeValue]]
) -> list[CapacityLine]:
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
    spec = table.indexes[index]
    if spec.kind != "LSI" or spec.projection.type == "ALL" or params.get("Select") == "COUNT":
        return False
    if params.get("Select") == "ALL_ATTRIBUTES":
        return True
    expression = params.get("ProjectionExpression")
    if not expression:
        return False
    names = params.get("ExpressionAttributeNames", {})
    projected = _projected_names(table, index)
    for path in expression.split(","):
        top = path.strip().split(".")[0].split("[")[0]
        if names.get(top, top) not in projected:
            return True
    return False


# -- dispatch ---------------------------------------------------------------------------


def _table_by_name(name: str, tables: Iterable[Table], what: str) -> Table:
    for table in tables:
        if table.name == name:
            return table
    raise EstimateError(
        f"{what} writes to table {name!r}: pass it as estimate_capacity(..., tables=[...]) "
        "so that its indexes can be costed"
    )


def _aligned(values: Sequence[Any] | None, count: int, what: str, argument: str) -> Sequence[Any]:
    if values is None:
        return [None] * count
    if len(values) != count:
        raise EstimateError(
            f"{what} has {count} entries but {argument}= has {len(values)}; give one per "
            "entry (None where there is no item)"
        )
    return values


def estimate_capacity(
    op: Operation[Any] | BaseQuery[Any],
    *,
    existing: Any = None,
    after: Any = None,
    read: Any = None,
    tables: Iterable[Table] = (),
) -> CapacityEstimate:
    """Estimate the capacity ``op`` consumes, exactly as DynamoDB reports it.

    What to pass, per operation (``Item`` = a low-level item such as ``obj.to_item()``):

    * `Put` / `Delete`: ``existing`` = the item stored under the key before, or ``None``.
    * `Update`: ``existing`` as above and ``after`` = the item after the update (e.g.
      ``Entity.to_item(result)``; the estimator does not evaluate update expressions).
    * `Get` / `ProjectedGet`: ``read`` = the stored item, or ``None`` if there is none.
    * `BatchGet` / `TransactGet`: ``read`` = one item (or ``None``) per key, in order.
    * `BatchWrite`: ``existing`` = one item (or ``None``) per request (puts, then
      deletes); ``tables`` = the `Table` objects written to.
    * `TransactWrite`: ``existing`` and (for updates) ``after`` = one per entry;
      ``tables`` as for `BatchWrite`.
    * `EntityQuery` / `CollectionQuery` / `Scan`: ``read`` = the stored items the request
      reads (every item the key condition or scan touches, filtered out or not), in
      order; they are split into pages by the request's ``Limit``.

    Returns:
        The estimate; its ``total`` is ``ConsumedCapacity.CapacityUnits``.

    Raises:
        EstimateError: A required argument is missing or has the wrong length.
    """
    if isinstance(op, (EntityQuery, CollectionQuery, Scan)):
        return CapacityEstimate(tuple(_page_lines(op, list(read or ()))))
    if isinstance(op, ProjectedGet):
        op = op.get
    if isinstance(op, (Put, Update, Delete)) and op.plan.unique:
        guarded = _guarded_write(op, existing, after)
        if guarded is not None:
            return guarded
    if isinstance(op, Get):
        line = _item_read_line(
            op.plan.table,
            read,
            verb="get",
            position=0,
            consistent=op.consistent,
            transactional=False,
            missing_blocks=1,
        )
        return CapacityEstimate((line,))
    if isinstance(op, Put):
        return CapacityEstimate(
            tuple(_single_write(op.plan.table, existing, op.item, "put", 0, False, "single"))
        )
    if isinstance(op, Delete):
        return CapacityEstimate(
            tuple(_single_write(op.plan.table, existing, None, "delete", 0, False, "single"))
        )
    if isinstance(op, Update):
        if after is None:
            raise EstimateError(
                f"{op.plan.label}: estimating an update needs after= (the item as stored "
                "after it); the estimator does not evaluate update expressions"
            )
        return CapacityEstimate(
            tuple(_single_write(op.plan.table, existing, after, "update", 0, False, "single"))
        )
    if isinstance(op, BatchGet):
        items = _aligned(read, len(op.keys), "the batch get", "read")
        lines = tuple(
            _item_read_line(
                plan.table,
                item,
                verb="batch get",
                position=i,
                consistent=op.consistent,
                transactional=False,
                missing_blocks=0,
            )
            for i, ((plan, _key), item) in enumerate(zip(op.keys, items, strict=True))
        )
        return CapacityEstimate(lines)
    if isinstance(op, TransactGet):
        items = _aligned(read, len(op.gets), "the transaction", "read")
        return CapacityEstimate(
            tuple(
                _item_read_line(
                    get.plan.table,
                    item,
                    verb="transactional get",
                    position=i,
                    consistent=True,
                    transactional=True,
                    missing_blocks=1,
                )
                for i, (get, item) in enumerate(zip(op.gets, items, strict=True))
            )
        )
    if isinstance(op, BatchWrite):
        return _batch_write(op, existing, list(tables))
    if isinstance(op, TransactWrite):
        return _transact_write(op, existing, after, list(tables))
    raise EstimateError(f"cannot estimate the capacity of a {type(op).__name__}")


def _guarded_write(
    op: Put[Any] | Update[Any] | Delete[Any], existing: Any, after: Any
) -> CapacityEstimate | None:
    """A write of an entity with unique fields: its reads and its transaction with guards.

    ``None`` for an update that changes no unique field (a plain UpdateItem).
    """
    plan = op.plan
    table = plan.table
    old = None if existing is None else stored_values(plan, existing, plan.unique_fields())
    lines: list[CapacityLine] = []

    def read(verb: str, item: Any) -> None:
        lines.append(
            _item_read_line(
                table,
                item,
                verb=verb,
                position=0,
                consistent=True,
                transactional=False,
                missing_blocks=1,
            )
        )

    if isinstance(op, Put):
        if not op.create:
            read("read before put", existing)
        entries = put_entries(op, None if op.create else old, read=not op.create)
        new: Any = op.item
        verb = "transactional put"
    elif isinstance(op, Update):
        touched = touched_constraints(op)
        if not touched:
            return None
        if after is None:
            raise EstimateError(
                f"{op.plan.label}: estimating an update needs after= (the item as stored "
                "after it); the estimator does not evaluate update expressions"
            )
        known = update_old_known(op, touched)
        if known is None:
            read("read before update", existing)
        entries = update_entries(op, touched, known if known is not None else old)
        new = after
        verb = "transactional update"
    else:
        known_values = None if op.return_old else op.unique_values
        if known_values is None:
            read("read before delete", existing)
            if existing is None:
                return CapacityEstimate(tuple(lines))  # nothing to delete: no transaction
        entries = delete_entries(op, known_values if known_values is not None else old or {})
        new = None
        verb = "transactional delete"
    lines += _single_write(table, existing, new, verb, 0, True, "transaction")
    for position, entry in enumerate(entries[1:], start=1):
        guard = entry.guard
        assert guard is not None
        item = guard.constraint.guard_item(guard.values, entries[0].key)
        what = f"unique {guard.constraint.name} {'claim' if guard.claim else 'release'}"
        if guard.claim:
            lines += _single_write(table, None, item, what, position, True, "transaction")
        else:
            lines += _single_write(table, item, None, what, position, True, "transaction")
    if isinstance(op, Update):
        read("read back after update", after)  # a transaction returns no item
    return CapacityEstimate(tuple(lines))


def _single_write(
    table: Table,
    before: Mapping[str, AttributeValue] | None,
    after: Mapping[str, AttributeValue] | None,
    verb: str,
    position: int,
    transactional: bool,
    mode: str,
) -> list[CapacityLine]:
    return _write_lines(
        table,
        before,
        after,
        verb=verb,
        position=position,
        transactional=transactional,
        missing_delete=_MISSING_DELETE_UNITS[mode],
    )


def _batch_write(op: BatchWrite, existing: Any, tables: list[Table]) -> CapacityEstimate:
    befores = _aligned(existing, len(op.requests), "the batch write", "existing")
    lines: list[CapacityLine] = []
    for i, ((name, request), before) in enumerate(zip(op.requests, befores, strict=True)):
        table = _table_by_name(name, tables, "a batch write")
        if "PutRequest" in request:
            new = request["PutRequest"]["Item"]
            lines += _single_write(table, before, new, "batch put", i, False, "batch")
        else:
            lines += _single_write(table, before, None, "batch delete", i, False, "batch")
    return CapacityEstimate(tuple(lines))


def _transact_write(
    op: TransactWrite, existing: Any, after: Any, tables: list[Table]
) -> CapacityEstimate:
    count = len(op.entries)
    befores = _aligned(existing, count, "the transaction", "existing")
    afters = _aligned(after, count, "the transaction", "after")
    lines: list[CapacityLine] = []
    for i, (entry, before, new) in enumerate(zip(op.entries, befores, afters, strict=True)):
        table = _table_by_name(entry.table, tables, f"transaction entry #{i} ({entry.label})")
        ((kind, request),) = entry.request.items()
        if kind == "Put":
            lines += _single_write(
                table, before, request["Item"], "transactional put", i, True, "transaction"
            )
        elif kind == "Delete":
            lines += _single_write(
                table, before, None, "transactional delete", i, True, "transaction"
            )
        elif kind == "Update":
            if new is None:
                raise EstimateError(
                    f"transaction entry #{i} ({entry.label}) is an update: give the item "
                    "after it in after=[...]"
                )
            lines += _single_write(
                table, before, new, "transactional update", i, True, "transaction"
            )
        else:  # ConditionCheck: billed like a transactional read of the checked item
            line = _item_read_line(
                table,
                before,
                verb="condition check",
                position=i,
                consistent=True,
                transactional=True,
                missing_blocks=1,
            )
            lines.append(line)
    return CapacityEstimate(tuple(lines))


#: What each operation needs to be estimated exactly, and what is unknown without it.
_NEEDS: tuple[tuple[tuple[type, ...], str, str], ...] = (
    (
        (EntityQuery, CollectionQuery, Scan),
        "read",
        "read=[...]: the items the request reads (every item the key condition or scan "
        "touches, before filters); without them the read units cannot be known",
    ),
    (
        (Get, ProjectedGet, BatchGet, TransactGet),
        "read",
        "read=: the stored item(s) (None where missing); without them only the cost of "
        "missing items is known, a lower bound",
    ),
    (
        (Put, Delete, Update, BatchWrite, TransactWrite),
        "existing",
        "existing=: the item(s) stored under the key before the write (None where there "
        "is none); a larger stored item, or index entries it has, costs more: without it "
        "the units are a lower bound",
    ),
)


class _NotGiven:
    def __repr__(self) -> str:
        return "<not given>"


_NOT_GIVEN: Any = _NotGiven()


def explain(
    op: Operation[Any] | BaseQuery[Any],
    *,
    existing: Any = _NOT_GIVEN,
    after: Any = _NOT_GIVEN,
    read: Any = _NOT_GIVEN,
    tables: Iterable[Table] = (),
) -> dict[str, Any]:
    """The exact request ``op`` sends and the capacity it will consume, side by side.

    Takes the same arguments as `estimate_capacity`. An argument the operation needs and
    that is not given is never taken as "nothing": the capacity says ``"exact": False``,
    lists under ``"unknown"`` what it cannot know and what to pass, ``rcu``, ``wcu``,
    ``table`` and ``indexes`` are ``None`` (never a silent 0), and ``"at_least"`` gives
    the lower bounds the known part implies.
    """
    given = {"existing": existing, "after": after, "read": read}
    unknown = [
        message
        for kinds, argument, message in _NEEDS
        if isinstance(op, kinds) and given[argument] is _NOT_GIVEN
    ]
    estimate = estimate_capacity(
        op,
        **{k: None if v is _NOT_GIVEN else v for k, v in given.items()},
        tables=tables,
    )
    capacity = estimate.explain()
    capacity["exact"] = not unknown
    if unknown:
        capacity["unknown"] = unknown
        capacity["at_least"] = {"rcu": estimate.rcu, "wcu": estimate.wcu, "total": estimate.total}
        for figure in ("rcu", "wcu", "table", "indexes"):
            capacity[figure] = None
    return {"request": op.params(), "capacity": capacity}
