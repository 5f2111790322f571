"""Transactions: up to 100 items written or read atomically, one reason per failed item."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel

from singletable.attributes.size import item_size
from singletable.errors import (
    ExpressionError,
    QueryError,
    RequestLimitError,
    ServiceError,
    TransactionCanceledError,
)
from singletable.expressions.conditions import Condition, render_condition
from singletable.expressions.paths import Placeholders
from singletable.operations.common import describe_key, request_capacity, split_key_values
from singletable.operations.guarded import (
    GuardWrite,
    TransactEntry,
    raise_cancellation,
    write_entries,
)
from singletable.operations.items import Delete, Get, Put
from singletable.operations.protocol import Builder, Call, Operation, ReturnCapacity, Step, chain
from singletable.operations.update import Update, touched_constraints, update_old_known
from singletable.types import Item, mutable_dataclass

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan

R = TypeVar("R")
E = TypeVar("E", bound=BaseModel)


MAX_TRANSACT_ITEMS = 100
#: DynamoDB's limit on the aggregate size of the items of one transaction (4 MB).
MAX_TRANSACT_BYTES = 4 * 1024 * 1024


# -- transactions ---------------------------------------------------------------------


def _too_many(adding: str, held: list[str]) -> str:
    counts = Counter(held)
    holds = ", ".join(f"{n} of {label}" for label, n in sorted(counts.items()))
    return (
        f"{adding}: a transaction holds at most {MAX_TRANSACT_ITEMS} items and this one "
        f"already holds {len(held)} ({holds}); split the work"
    )


@mutable_dataclass
class TransactWrite(Builder, Operation[None]):
    """Up to 100 puts, updates, deletes and condition checks that succeed or fail together.

    A cancelled transaction raises `TransactionCanceledError` with one reason per item
    (``{"index", "entity", "code", "message"}``).
    """

    action: ClassVar[str] = "transact_write_items"
    _containers: ClassVar[tuple[str, ...]] = ("entries",)
    entries: list[TransactEntry] = field(default_factory=list)
    client_token: str | None = None
    capacity: ReturnCapacity | None = None

    def __post_init__(self) -> None:
        # Entries given to the constructor take the checks `put` & co. make as they add
        # (each item once, 100 items, 4 MB); operations belong to those methods.
        given, self.entries = self.entries, []
        for entry in given:
            if not isinstance(entry, TransactEntry):
                raise ExpressionError(
                    f"TransactWrite(entries=...) holds TransactEntry values, got a "
                    f"{type(entry).__name__}: add operations with .put(), .update(), "
                    ".delete() and .check() (TransactWrite().put(op).update(op2))"
                )
            self._add(
                entry.label,
                entry.table,
                entry.key,
                entry.request,
                entry.size,
                entry.guard,
                entry.plan,
                entry.holder,
            )

    def _add(
        self,
        label: str,
        table: str,
        key: Item,
        request: dict[str, Any],
        size: int = 0,
        guard: GuardWrite | None = None,
        plan: EntityPlan | None = None,
        holder: Item | None = None,
    ) -> TransactWrite:
        for entry in self.entries:
            if entry.table == table and entry.key == key:
                raise RequestLimitError(
                    f"{label}: the item with key ({describe_key(key)}) appears twice in one "
                    "transaction; DynamoDB allows each item once"
                )
        if len(self.entries) >= MAX_TRANSACT_ITEMS:
            raise RequestLimitError(_too_many(label, [e.label for e in self.entries]))
        total = size + sum(entry.size for entry in self.entries)
        if total > MAX_TRANSACT_BYTES:
            raise RequestLimitError(
                f"{label}: the items put in this transaction total {total} bytes, over "
                f"DynamoDB's transaction limit of {MAX_TRANSACT_BYTES} bytes (4 MB); split the work"
            )
        self.entries.append(TransactEntry(label, table, key, request, size, guard, plan, holder))
        return self

    def _add_all(self, plan: EntityPlan, entries: list[TransactEntry]) -> TransactWrite:
        # The item and its guards (entity with unique fields), as the single write would.
        for e in entries:
            self._add(e.label, e.table, e.key, e.request, e.size, e.guard, plan, e.holder)
        return self

    @chain
    def put(self, op: Put[Any]) -> TransactWrite:
        """Add a `Put` (its condition included; with unique fields, a create and its guards)."""
        if op.plan.unique:
            if not op.create:
                raise ExpressionError(
                    f"{op.plan.label} has unique fields, so a put inside a transaction must "
                    "know whether it replaces an item and which values it held: use create() "
                    "for a new item, or update().set(...).known(...) for an existing one"
                )
            return self._add_all(op.plan, write_entries(op.guarded(), None))
        params = op.params()
        params.pop("ReturnConsumedCapacity", None)
        return self._add(
            op.plan.label,
            op.plan.table.name,
            op.plan.key_of_item(op.item),
            {"Put": params},
            item_size(op.item),
        )

    @chain
    def update(self, op: Update[Any]) -> TransactWrite:
        """Add an `Update` (its condition included, and the guards of unique fields it moves).

        An update of a unique field needs the stored values given with `Update.known`.
        """
        touched = touched_constraints(op) if op.plan.unique else []
        if touched:
            old = update_old_known(op, touched)
            if old is None:
                needed = sorted({f for c in touched for f in c.fields} - set(op.key_values))
                raise ExpressionError(
                    f"{op.plan.label}: this update changes unique fields, so a transaction "
                    "needs their stored values to move the guards: pass "
                    f".known({', '.join(needed)}=...)"
                )
            return self._add_all(op.plan, write_entries(op.guarded(touched), old))
        params = op.item_params()
        params.pop("ReturnValues", None)
        params.pop("ReturnConsumedCapacity", None)
        return self._add(op.plan.label, op.plan.table.name, op.key, {"Update": params})

    @chain
    def delete(self, op: Delete[Any]) -> TransactWrite:
        """Add a `Delete` (its condition included; with unique fields, of an object)."""
        if op.plan.unique:
            if op.unique_values is None:
                raise ExpressionError(
                    f"{op.plan.label} has unique fields, so a delete inside a transaction "
                    "needs their values to release the guards: delete the object "
                    "(Entity.delete(obj))"
                )
            return self._add_all(op.plan, write_entries(op.guarded(), op.unique_values))
        params = op.item_params()
        params.pop("ReturnValues", None)
        params.pop("ReturnConsumedCapacity", None)
        return self._add(op.plan.label, op.plan.table.name, op.key, {"Delete": params})

    @chain
    def check(
        self, plan: EntityPlan, key: Mapping[str, Any], condition: Condition
    ) -> TransactWrite:
        """Add a condition check on an item that the transaction does not write."""
        key_item = plan.key_from_values(split_key_values(plan, key, what="condition check"))
        ph = Placeholders()
        request: dict[str, Any] = {
            "TableName": plan.table.name,
            "Key": key_item,
            "ConditionExpression": render_condition(condition, ph),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        ph.apply(request)
        return self._add(plan.label, plan.table.name, key_item, {"ConditionCheck": request})

    def params(self) -> dict[str, Any]:
        """The exact ``TransactWriteItems`` request."""
        if not self.entries:
            raise QueryError("a transaction needs at least one item")
        request: dict[str, Any] = {"TransactItems": [e.request for e in self.entries]}
        if self.client_token is not None:
            request["ClientRequestToken"] = self.client_token
        request_capacity(request, self.capacity)
        return request

    def steps(self) -> Step[None]:
        """Run the transaction; a cancellation names the reason of each item."""
        try:
            yield Call(self.action, self.params())
        except ServiceError as exc:
            if exc.code != "TransactionCanceledException":
                raise
            raise_cancellation([e.plan for e in self.entries], exc, self.entries)
            reasons = []
            raw_reasons = exc.response.get("CancellationReasons") or []
            for i, (entry, reason) in enumerate(zip(self.entries, raw_reasons, strict=False)):
                reasons.append(
                    {
                        "index": i,
                        "entity": entry.label,
                        "code": reason.get("Code", "None"),
                        "message": reason.get("Message", ""),
                        "item": reason.get("Item"),
                    }
                )
            failed = [r for r in reasons if r["code"] not in ("None", None)]
            summary = "; ".join(f"#{r['index']} {r['entity']}: {r['code']}" for r in failed)
            raise TransactionCanceledError(
                f"transaction cancelled: {summary or exc.message}", reasons=reasons
            ) from None
        return None


@mutable_dataclass
class TransactGet(Builder, Operation["list[BaseModel | None]"]):
    """Up to 100 consistent reads in one snapshot; ``None`` where an item is missing."""

    action: ClassVar[str] = "transact_get_items"
    _containers: ClassVar[tuple[str, ...]] = ("gets",)
    gets: list[Get[Any]] = field(default_factory=list)
    capacity: ReturnCapacity | None = None

    def __post_init__(self) -> None:
        # Gets given to the constructor take the checks `get` makes as it adds.
        given, self.gets = self.gets, []
        for op in given:
            if not isinstance(op, Get):
                raise ExpressionError(
                    f"TransactGet(gets=...) holds Get operations, got a {type(op).__name__}"
                )
            self._add_get(op)

    @chain
    def get(self, op: Get[Any]) -> TransactGet:
        """Add a `Get`."""
        return self._add_get(op)

    def _add_get(self, op: Get[Any]) -> TransactGet:
        if len(self.gets) >= MAX_TRANSACT_ITEMS:
            raise RequestLimitError(_too_many(op.plan.label, [g.plan.label for g in self.gets]))
        for other in self.gets:
            if other.plan.table.name == op.plan.table.name and other.key == op.key:
                raise RequestLimitError(
                    f"{op.plan.label}: the item with key ({describe_key(op.key)}) appears twice "
                    "in one transaction; DynamoDB allows each item once"
                )
        self.gets.append(op)
        return self

    def params(self) -> dict[str, Any]:
        """The exact ``TransactGetItems`` request."""
        if not self.gets:
            raise QueryError("a transaction needs at least one item")
        request: dict[str, Any] = {
            "TransactItems": [
                {"Get": {"TableName": g.plan.table.name, "Key": g.key}} for g in self.gets
            ]
        }
        request_capacity(request, self.capacity)
        return request

    def parse(self, response: dict[str, Any]) -> list[BaseModel | None]:
        """The decoded items, in request order."""
        result: list[BaseModel | None] = []
        for get, entry in zip(self.gets, response.get("Responses", []), strict=False):
            item = entry.get("Item")
            result.append(None if item is None else get.plan.from_item(item))
        return result
