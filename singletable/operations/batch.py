"""Batch reads and writes: split at DynamoDB's limits, unprocessed items retried with backoff."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from singletable.errors import RequestLimitError
from singletable.model.plan import plan_of
from singletable.operations.common import request_capacity, split_key_values, stamp_times, utc_now
from singletable.operations.protocol import Call, Operation, ReturnCapacity, Sleep, Step
from singletable.types import Item

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan

R = TypeVar("R")
E = TypeVar("E", bound=BaseModel)


#: DynamoDB's request limits.
MAX_BATCH_WRITE = 25
MAX_BATCH_GET = 100


# -- batches --------------------------------------------------------------------------


def _backoff(attempt: int, base: float, cap: float) -> float:
    # "Full jitter": a random pause up to an exponentially growing ceiling.
    return random.uniform(0, min(cap, base * (2**attempt)))


def _put_plan(model: type[BaseModel]) -> EntityPlan:
    """The plan of a class whose instances a batch write puts, refused if it cannot."""
    plan = plan_of(model)
    if plan.version_field is not None:
        # BatchWriteItem carries no conditions, so it cannot check versions:
        # writing such an item unchecked could silently undo a concurrent write.
        raise RequestLimitError(
            f"{plan.label} uses optimistic locking (version_field="
            f"{plan.version_field!r}), which a batch write cannot check; write it "
            "with put() or in a TransactWrite"
        )
    _refuse_unique(plan, "put")
    return plan


def _refuse_unique(plan: EntityPlan, what: str) -> None:
    if plan.unique:
        names = ", ".join(c.name for c in plan.unique)
        raise RequestLimitError(
            f"{plan.label} has unique fields ({names}), whose guards must be written in one "
            f"transaction with the item, and BatchWriteItem can be neither conditional nor "
            f"atomic; {what} it with create()/put()/delete() or in a TransactWrite"
        )


@dataclass
class BatchWriteResult:
    """What a batch write did: items put and keys deleted, and the calls it took."""

    put: int = 0
    deleted: int = 0
    calls: int = 0
    retries: int = 0


class BatchWrite(Operation[BatchWriteResult]):
    """Put and delete many items: 25 per call, unprocessed items retried with backoff.

    Raises `RequestLimitError` if items are still unprocessed after ``max_attempts``;
    nothing is dropped silently.
    """

    action = "batch_write_item"

    def __init__(
        self,
        puts: Iterable[BaseModel] = (),
        deletes: Iterable[tuple[EntityPlan, Mapping[str, Any]]] = (),
        *,
        max_attempts: int = 8,
        backoff_base: float = 0.05,
        backoff_cap: float = 5.0,
        capacity: ReturnCapacity | None = None,
    ) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        seen: set[tuple[Any, ...]] = set()
        self.n_put = 0
        self.n_delete = 0
        now = utc_now()
        plans: dict[type[BaseModel], EntityPlan] = {}  # each class checked once
        for obj in puts:
            plan = plans.get(type(obj))
            if plan is None:
                plan = plans[type(obj)] = _put_plan(type(obj))
            if plan.updated_at_field is not None or plan.created_at_field is not None:
                obj = stamp_times(plan, obj, now)
            item = plan.to_item(obj)
            self._add(plan, plan.key_of_item(item), {"PutRequest": {"Item": item}}, seen)
            self.n_put += 1
        for plan, key in deletes:
            _refuse_unique(plan, "delete")
            key_item = plan.key_from_values(split_key_values(plan, key, what="batch delete"))
            self._add(plan, key_item, {"DeleteRequest": {"Key": key_item}}, seen)
            self.n_delete += 1
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.capacity = capacity

    def _add(
        self, plan: EntityPlan, key: Item, request: dict[str, Any], seen: set[tuple[Any, ...]]
    ) -> None:
        # A key's attribute values hold hashable text or bytes: (name, type, value) per
        # attribute identifies it (repr() of the sorted key did too, at twice the cost).
        ident = (plan.table.name, *[(a, *av.items()) for a, av in key.items()])
        if ident in seen:
            raise RequestLimitError(
                f"{plan.label}: the same key appears twice in one batch write "
                "(DynamoDB rejects the whole batch); write it once"
            )
        seen.add(ident)
        self.requests.append((plan.table.name, request))

    def _chunk_params(self, chunk: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        items: dict[str, list[dict[str, Any]]] = {}
        for table, write in chunk:
            items.setdefault(table, []).append(write)
        request: dict[str, Any] = {"RequestItems": items}
        request_capacity(request, self.capacity)
        return request

    def chunks(self) -> list[dict[str, Any]]:
        """The requests of every call, 25 writes each (before any retry)."""
        return [
            self._chunk_params(self.requests[i : i + MAX_BATCH_WRITE])
            for i in range(0, len(self.requests), MAX_BATCH_WRITE)
        ]

    def params(self) -> dict[str, Any]:
        """The first call's request (see `chunks` for all of them)."""
        chunks = self.chunks()
        return chunks[0] if chunks else {"RequestItems": {}}

    def steps(self) -> Step[BatchWriteResult]:
        """Send each chunk; resend unprocessed items with exponential backoff and jitter."""
        result = BatchWriteResult(put=self.n_put, deleted=self.n_delete)
        for request in self.chunks():
            attempt = 0
            while True:
                response = yield Call(self.action, request)
                result.calls += 1
                unprocessed = response.get("UnprocessedItems") or {}
                if not any(unprocessed.values()):
                    break
                attempt += 1
                if attempt >= self.max_attempts:
                    left = sum(len(v) for v in unprocessed.values())
                    raise RequestLimitError(
                        f"batch write: {left} items still unprocessed after {attempt} "
                        "attempts (throttled); nothing was dropped, retry them later"
                    )
                result.retries += 1
                yield Sleep(_backoff(attempt, self.backoff_base, self.backoff_cap))
                request = {**request, "RequestItems": unprocessed}
        return result


class BatchGet(Operation["list[BaseModel]"]):
    """Read many items by key: 100 keys per call, unprocessed keys retried with backoff.

    Returns the items found, in the order their keys were given (missing keys are
    skipped); raises `RequestLimitError` rather than return a partial result.
    """

    action = "batch_get_item"

    def __init__(
        self,
        keys: Iterable[tuple[EntityPlan, Mapping[str, Any]]],
        *,
        consistent: bool = False,
        max_attempts: int = 8,
        backoff_base: float = 0.05,
        backoff_cap: float = 5.0,
        capacity: ReturnCapacity | None = None,
    ) -> None:
        self.keys: list[tuple[EntityPlan, Item]] = []
        seen: set[tuple[str, str]] = set()
        for plan, values in keys:
            key = plan.key_from_values(split_key_values(plan, values, what="batch get"))
            ident = (plan.table.name, repr(sorted(key.items())))
            if ident in seen:
                raise RequestLimitError(
                    f"{plan.label}: the same key appears twice in one batch get "
                    "(DynamoDB rejects the whole batch); ask once"
                )
            seen.add(ident)
            self.keys.append((plan, key))
        self.consistent = consistent
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.capacity = capacity

    def chunks(self) -> list[dict[str, Any]]:
        """The requests of every call, 100 keys each (before any retry)."""
        result = []
        for i in range(0, len(self.keys), MAX_BATCH_GET):
            tables: dict[str, dict[str, Any]] = {}
            for plan, key in self.keys[i : i + MAX_BATCH_GET]:
                entry = tables.setdefault(plan.table.name, {"Keys": []})
                if self.consistent:
                    entry["ConsistentRead"] = True
                entry["Keys"].append(key)
            request: dict[str, Any] = {"RequestItems": tables}
            request_capacity(request, self.capacity)
            result.append(request)
        return result

    def params(self) -> dict[str, Any]:
        """The first call's request (see `chunks` for all of them)."""
        chunks = self.chunks()
        return chunks[0] if chunks else {"RequestItems": {}}

    def steps(self) -> Step[list[BaseModel]]:
        """Fetch every chunk, retrying unprocessed keys; decode in key order."""
        found: dict[tuple[str, str], Item] = {}
        for request in self.chunks():
            attempt = 0
            while True:
                response = yield Call(self.action, request)
                for table, items in (response.get("Responses") or {}).items():
                    for item in items:
                        found[self._ident(table, item)] = item
                unprocessed = response.get("UnprocessedKeys") or {}
                if not any(v.get("Keys") for v in unprocessed.values()):
                    break
                attempt += 1
                if attempt >= self.max_attempts:
                    left = sum(len(v.get("Keys", [])) for v in unprocessed.values())
                    raise RequestLimitError(
                        f"batch get: {left} keys still unprocessed after {attempt} attempts "
                        "(throttled); no partial result is returned"
                    )
                yield Sleep(_backoff(attempt, self.backoff_base, self.backoff_cap))
                request = {**request, "RequestItems": unprocessed}
        result = []
        for plan, key in self.keys:
            item = found.get((plan.table.name, repr(sorted(key.items()))))
            if item is not None:
                result.append(plan.from_item(item))
        return result

    def _ident(self, table: str, item: Item) -> tuple[str, str]:
        plan = next(p for p, _ in self.keys if p.table.name == table)
        attrs = [plan.table.pk] + ([plan.table.sk] if plan.table.sk else [])
        return (table, repr(sorted((a, item[a]) for a in attrs)))
