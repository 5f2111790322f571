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

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from singletable.errors import EstimateError
from singletable.model.table import Table
from singletable.operations.batch import BatchGet, BatchWrite
from singletable.operations.collection import CollectionQuery
from singletable.operations.guarded import stored_values
from singletable.operations.items import Delete, Get, ProjectedGet, Put, delete_entries, put_entries
from singletable.operations.query import EntityQuery
from singletable.operations.reads import BaseQuery
from singletable.operations.scan import Scan
from singletable.operations.transactions import TransactGet, TransactWrite
from singletable.operations.update import (
    Update,
    touched_constraints,
    update_entries,
    update_old_known,
)
from singletable.tooling.cost.billing import item_read_line, page_lines, single_write
from singletable.tooling.cost.report import CapacityEstimate, CapacityLine

if TYPE_CHECKING:
    from singletable.operations.protocol import Operation

__all__ = ["estimate_capacity", "explain"]


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
        return CapacityEstimate(tuple(page_lines(op, list(read or ()))))
    if isinstance(op, ProjectedGet):
        op = op.get
    if isinstance(op, (Put, Update, Delete)):
        return _item_write(op, existing, after)
    if isinstance(op, Get):
        return _get(op, read)
    if isinstance(op, BatchGet):
        return _batch_get(op, read)
    if isinstance(op, TransactGet):
        return _transact_get(op, read)
    if isinstance(op, BatchWrite):
        return _batch_write(op, existing, list(tables))
    if isinstance(op, TransactWrite):
        return _transact_write(op, existing, after, list(tables))
    raise EstimateError(f"cannot estimate the capacity of a {type(op).__name__}")


def _get(op: Get[Any], read: Any) -> CapacityEstimate:
    line = item_read_line(
        op.plan.table,
        read,
        verb="get",
        position=0,
        consistent=op.consistent,
        transactional=False,
        missing_blocks=1,
    )
    return CapacityEstimate((line,))


def _item_write(
    op: Put[Any] | Update[Any] | Delete[Any], existing: Any, after: Any
) -> CapacityEstimate:
    """A put, update or delete of one item: guarded when it keeps unique fields."""
    if op.plan.unique:
        guarded = _guarded_write(op, existing, after)
        if guarded is not None:
            return guarded
    table = op.plan.table
    if isinstance(op, Put):
        return CapacityEstimate(
            tuple(single_write(table, existing, op.item, "put", 0, False, "single"))
        )
    if isinstance(op, Delete):
        return CapacityEstimate(
            tuple(single_write(table, existing, None, "delete", 0, False, "single"))
        )
    if after is None:
        raise EstimateError(
            f"{op.plan.label}: estimating an update needs after= (the item as stored "
            "after it); the estimator does not evaluate update expressions"
        )
    return CapacityEstimate(
        tuple(single_write(table, existing, after, "update", 0, False, "single"))
    )


def _batch_get(op: BatchGet, read: Any) -> CapacityEstimate:
    items = _aligned(read, len(op.keys), "the batch get", "read")
    return CapacityEstimate(
        tuple(
            item_read_line(
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
    )


def _transact_get(op: TransactGet, read: Any) -> CapacityEstimate:
    items = _aligned(read, len(op.gets), "the transaction", "read")
    return CapacityEstimate(
        tuple(
            item_read_line(
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
            item_read_line(
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
    lines += single_write(table, existing, new, verb, 0, True, "transaction")
    for position, entry in enumerate(entries[1:], start=1):
        guard = entry.guard
        assert guard is not None
        item = guard.constraint.guard_item(guard.values, entries[0].key)
        what = f"unique {guard.constraint.name} {'claim' if guard.claim else 'release'}"
        if guard.claim:
            lines += single_write(table, None, item, what, position, True, "transaction")
        else:
            lines += single_write(table, item, None, what, position, True, "transaction")
    if isinstance(op, Update):
        read("read back after update", after)  # a transaction returns no item
    return CapacityEstimate(tuple(lines))


def _batch_write(op: BatchWrite, existing: Any, tables: list[Table]) -> CapacityEstimate:
    befores = _aligned(existing, len(op.requests), "the batch write", "existing")
    lines: list[CapacityLine] = []
    for i, ((name, request), before) in enumerate(zip(op.requests, befores, strict=True)):
        table = _table_by_name(name, tables, "a batch write")
        if "PutRequest" in request:
            new = request["PutRequest"]["Item"]
            lines += single_write(table, before, new, "batch put", i, False, "batch")
        else:
            lines += single_write(table, before, None, "batch delete", i, False, "batch")
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
            lines += single_write(
                table, before, request["Item"], "transactional put", i, True, "transaction"
            )
        elif kind == "Delete":
            lines += single_write(
                table, before, None, "transactional delete", i, True, "transaction"
            )
        elif kind == "Update":
            if new is None:
                raise EstimateError(
                    f"transaction entry #{i} ({entry.label}) is an update: give the item "
                    "after it in after=[...]"
                )
            lines += single_write(
                table, before, new, "transactional update", i, True, "transaction"
            )
        else:  # ConditionCheck: billed like a transactional read of the checked item
            line = item_read_line(
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
