"""Batch reads and writes: split at DynamoDB's limits, unprocessed items retried with backoff."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from singletable.errors import (
    BatchGetIncompleteError,
    BatchWriteIncompleteError,
    RequestLimitError,
    ServiceError,
    TextEncodeError,
)
from singletable.model.plan import plan_of
from singletable.model.wire import WireEncoder, item_from_wire, key_identity, wire_encoder
from singletable.operations.common import (
    describe_key,
    request_capacity,
    split_key_values,
    stamp_times,
    utc_now,
)
from singletable.operations.limits import check_request_text
from singletable.operations.protocol import Call, Operation, ReturnCapacity, Sleep, Step
from singletable.types import Item, mutable_dataclass

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


def _put_plan(model: type[BaseModel], *, unchecked_versions: bool = False) -> EntityPlan:
    """The plan of a class whose instances a batch write puts, refused if it cannot."""
    plan = plan_of(model)
    if plan.version_field is not None and not unchecked_versions:
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


@mutable_dataclass
class BatchWriteResult:
    """What a batch write did: items put and keys deleted, and the calls it took."""

    put: int = 0
    deleted: int = 0
    calls: int = 0
    retries: int = 0


#: What a batch write was given for one request: an entity instance to put, or the
#: ``(plan, key values)`` pair of a delete.
_Origin = Any


class BatchWrite(Operation[BatchWriteResult]):
    """Put and delete many items: 25 per call, unprocessed items retried with backoff.

    Raises `BatchWriteIncompleteError` (a `RequestLimitError`) if items are still
    unprocessed after ``max_attempts``, or if a call fails (persistent throttling, a
    service error) part-way: the error holds exactly the puts and deletes done and not
    done. Nothing is dropped silently.

    Entities with optimistic locking are refused, since BatchWriteItem takes no condition
    to check their version, unless ``unchecked_versions=True`` says the caller knows no
    one else writes those keys (the first import of a load into an empty table): each is
    then written with the version it carries (0 becomes 1, as a first put writes), over
    whatever is stored.
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
        unchecked_versions: bool = False,
    ) -> None:
        self._requests: list[tuple[str, dict[str, Any]]] | None = None
        #: The writes as the wire carries them (puts as item JSON), when every item has
        #: a wire form; built by the validating pass.
        self._wire: list[tuple[str, Any]] | None = None
        #: What was given for each request, by key identity, in the requests' order.
        self._origins: dict[tuple[Any, ...], _Origin] = {}
        self._key_attributes: dict[str, tuple[str, ...]] = {}
        now = utc_now()
        plans: dict[type[BaseModel], EntityPlan] = {}  # each class checked once
        #: (plan, the item to store, the object given): the object is what a caller resends.
        self._puts: list[tuple[EntityPlan, BaseModel, BaseModel]] = []
        for obj in puts:
            plan = plans.get(type(obj))
            if plan is None:
                plan = plans[type(obj)] = _put_plan(
                    type(obj), unchecked_versions=unchecked_versions
                )
            stamped = obj
            if plan.version_field is not None and not getattr(obj, plan.version_field):
                # Never stored: version 1, as the first put would write.
                stamped = obj.model_copy(update={plan.version_field: 1})
            if plan.updated_at_field is not None or plan.created_at_field is not None:
                stamped = stamp_times(plan, stamped, now)
            self._puts.append((plan, stamped, obj))
        self._deletes: list[tuple[EntityPlan, Item, Mapping[str, Any]]] = []
        for plan, key in deletes:
            _refuse_unique(plan, "delete")
            key_item = plan.key_from_values(split_key_values(plan, key, what="batch delete"))
            self._deletes.append((plan, key_item, key))
        self.n_put = len(self._puts)
        self.n_delete = len(self._deletes)
        # Bad input is refused here, before the first call. The wire pass checks what
        # to_item checks while it serialises each item; anything it does not take (a
        # refused item, bad text, a key given twice) is left to the dict pass, which
        # raises the error with its place in the batch.
        if not self._validate_wire():
            self._requests = self._build_requests()
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.capacity = capacity

    @property
    def requests(self) -> list[tuple[str, dict[str, Any]]]:
        """Every write as ``(table name, PutRequest or DeleteRequest)``, in order."""
        if self._requests is None:
            # Validated by the wire pass: built as dicts only when asked for (boto3, params).
            assert self._wire is not None
            self._requests = [
                (table, {"PutRequest": {"Item": item_from_wire(write)}})
                if write.__class__ is bytes
                else (table, write)
                for table, write in self._wire
            ]
        return self._requests

    def _build_requests(self) -> list[tuple[str, dict[str, Any]]]:
        """The writes as dicts, checked and recorded as they are added (the dict pass)."""
        requests: list[tuple[str, dict[str, Any]]] = []
        for plan, stamped, obj in self._puts:
            try:
                item = plan.to_item(stamped)
            except TextEncodeError as exc:
                # Which write of the batch holds the text (its key field names itself).
                index = sum(1 for table, _ in requests if table == plan.table.name)
                where = f"RequestItems[{plan.table.name!r}][{index}]"
                raise TextEncodeError(f"{self.action}: {where}: {exc}", where=where) from None
            request = (plan.table.name, {"PutRequest": {"Item": item}})
            self._add(plan, plan.key_of_item(item), obj)
            requests.append(request)
        for plan, key_item, key in self._deletes:
            self._add(plan, key_item, (plan, key))
            requests.append((plan.table.name, {"DeleteRequest": {"Key": key_item}}))
        # Every write's text at once, before the first call: a chunk's own check would
        # refuse bad text in a later chunk only after the earlier ones were written.
        check_request_text(self.action, {"RequestItems": self._by_table(requests)})
        return requests

    def _validate_wire(self) -> bool:
        """The validating pass on the wire form: False to leave the batch to the dict pass."""
        wire: list[tuple[str, Any]] = []
        origins = self._origins
        # What a plan gives every one of its items, looked up when the plan changes (a
        # batch is mostly runs of one class): 2.1 -> 1.5 µs an item over its encoding
        # (benchmarks/README.md, "Lean batch writes").
        last: EntityPlan | None = None
        encoder: WireEncoder | None = None
        name = ""
        for plan, stamped, obj in self._puts:
            if plan is not last:
                last, encoder, table = plan, wire_encoder(plan), plan.table
                name = table.name
                self._key_attributes[name] = (
                    (table.pk,) if table.sk is None else (table.pk, table.sk)
                )
            try:
                encoded = None if encoder is None else encoder(stamped)
            except Exception:  # the dict pass raises it again, placed in the batch
                encoded = None
            if encoded is None:
                return self._abandon_wire()
            # A key given twice leaves the count unchanged: one hash and lookup an
            # item, not two (an "in" test first).
            count = len(origins)
            origins[encoded[0]] = obj
            if len(origins) == count:
                return self._abandon_wire()
            wire.append((name, encoded[1]))
        for plan, key_item, key in self._deletes:
            ident = key_identity(plan.table.name, key_item)
            if ident in self._origins:
                return self._abandon_wire()
            self._origins[ident] = (plan, key)
            self._key_attributes[plan.table.name] = tuple(key_item)
            wire.append((plan.table.name, {"DeleteRequest": {"Key": key_item}}))
        keys = wire[len(self._puts) :]  # the deletes' keys: every put is item text
        try:
            check_request_text(self.action, {"RequestItems": self._by_table(keys)})
        except TextEncodeError:
            return self._abandon_wire()
        self._wire = wire
        return True

    def _abandon_wire(self) -> bool:
        self._origins.clear()
        self._key_attributes.clear()
        return False

    def _add(self, plan: EntityPlan, key: Item, origin: _Origin) -> None:
        ident = key_identity(plan.table.name, key)
        if ident in self._origins:
            raise RequestLimitError(
                f"{plan.label}: the same key ({describe_key(key)}) appears twice in one batch "
                "write (DynamoDB rejects the whole batch); write it once"
            )
        self._origins[ident] = origin
        self._key_attributes[plan.table.name] = tuple(key)

    @staticmethod
    def _by_table(writes: list[tuple[str, dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
        items: dict[str, list[dict[str, Any]]] = {}
        for table, write in writes:
            items.setdefault(table, []).append(write)
        return items

    def _chunk_params(self, chunk: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        request: dict[str, Any] = {"RequestItems": self._by_table(chunk)}
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

    def _request_ident(self, table: str, write: Mapping[str, Any]) -> tuple[Any, ...]:
        item = (
            write["PutRequest"]["Item"] if "PutRequest" in write else write["DeleteRequest"]["Key"]
        )
        return key_identity(table, {a: item[a] for a in self._key_attributes[table]})

    def _idents(self, request_items: Mapping[str, list[dict[str, Any]]]) -> list[tuple[Any, ...]]:
        return [self._request_ident(t, w) for t, writes in request_items.items() for w in writes]

    def steps(self) -> Step[BatchWriteResult]:
        """Send each chunk; resend unprocessed items with exponential backoff and jitter."""
        return self._send(self.requests, list)

    def wire_steps(self, fragment: Callable[[bytes], Any]) -> Step[BatchWriteResult]:
        """`steps`, each put's item sent as the JSON text the validating pass made.

        Only when the dict form was never asked for: a caller may have added to it.
        """
        wire = self._wire
        if wire is None or self._requests is not None:
            return self.steps()

        def build(chunk: list[tuple[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
            return [
                (
                    table,
                    {"PutRequest": {"Item": fragment(write)}}
                    if write.__class__ is bytes
                    else write,
                )
                for table, write in chunk
            ]

        return self._send(wire, build)

    def _send(
        self,
        writes: list[tuple[str, Any]],
        build: Callable[[list[tuple[str, Any]]], list[tuple[str, dict[str, Any]]]],
    ) -> Step[BatchWriteResult]:
        result = BatchWriteResult(put=self.n_put, deleted=self.n_delete)
        # One identity per request, in the requests' order (_add records both together).
        idents = list(self._origins)
        for start in range(0, len(writes), MAX_BATCH_WRITE):
            end = start + MAX_BATCH_WRITE
            request = self._chunk_params(build(writes[start:end]))
            # The requests of this chunk not yet known to be written. With every later
            # chunk's, they are what an error reports unwritten: gathered then, not kept
            # as a set updated on every answer. (With one insertion a put in the wire
            # pass and origins without an (is_put, origin) pair: 51.1k -> 48.1k
            # instructions an AuditEvent; callgrind, benchmarks/README.md, "Lean batch
            # writes".)
            sent = idents[start:end]
            attempt = 0
            while True:
                try:
                    # A chunk's text was checked with the others (in __init__); a resend
                    # holds what DynamoDB returned, which is checked as any request is.
                    response = yield Call(self.action, request, text_checked=attempt == 0)
                except ServiceError as exc:
                    pending = {*sent, *idents[end:]}
                    raise self._incomplete(pending, cause=exc, attempts=attempt + 1) from exc
                result.calls += 1
                unprocessed = response.get("UnprocessedItems")
                left = set(self._idents(unprocessed)) if unprocessed else None
                if not left:
                    break
                sent = list(left)
                attempt += 1
                if attempt >= self.max_attempts:
                    raise self._incomplete({*sent, *idents[end:]}, cause=None, attempts=attempt)
                result.retries += 1
                yield Sleep(_backoff(attempt, self.backoff_base, self.backoff_cap))
                request = {**request, "RequestItems": unprocessed}
        return result

    def _incomplete(
        self, pending: set[tuple[Any, ...]], *, cause: ServiceError | None, attempts: int
    ) -> BatchWriteIncompleteError:
        done: tuple[list[_Origin], list[_Origin]] = ([], [])
        undone: tuple[list[_Origin], list[_Origin]] = ([], [])
        for ident, origin in self._origins.items():
            # A put's origin is the entity, a delete's its (plan, key values) pair.
            is_put = isinstance(origin, BaseModel)
            (undone if ident in pending else done)[0 if is_put else 1].append(origin)
        total = len(self._origins)
        not_written = len(pending)
        why = (
            f"still unprocessed after {attempts} attempts (throttled)"
            if cause is None
            else f"not written: a call failed with {cause.code}: {cause.message}"
        )
        return BatchWriteIncompleteError(
            f"batch write: {not_written} of {total} writes ({len(undone[0])} puts, "
            f"{len(undone[1])} deletes) {why}; {total - not_written} were written. Nothing "
            "was dropped: resend e.unwritten_puts / e.unwritten_deletes",
            written_puts=done[0],
            written_deletes=done[1],
            unwritten_puts=undone[0],
            unwritten_deletes=undone[1],
            cause=cause,
        )


class BatchGet(Operation["list[BaseModel]"]):
    """Read many items by key: 100 keys per call, unprocessed keys retried with backoff.

    Returns the items found, in the order their keys were given (missing keys are
    skipped). Rather than return a partial result it raises `BatchGetIncompleteError`
    (a `RequestLimitError`), which holds the items read and exactly the keys not read.
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
        self._given: dict[tuple[Any, ...], tuple[EntityPlan, Mapping[str, Any]]] = {}
        self._key_attributes: dict[str, tuple[str, ...]] = {}
        for plan, values in keys:
            key = plan.key_from_values(split_key_values(plan, values, what="batch get"))
            ident = key_identity(plan.table.name, key)
            if ident in self._given:
                raise RequestLimitError(
                    f"{plan.label}: the same key ({describe_key(key)}) appears twice in one "
                    "batch get (DynamoDB rejects the whole batch); ask once"
                )
            self._given[ident] = (plan, values)
            self._key_attributes[plan.table.name] = tuple(key)
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
        found: dict[tuple[Any, ...], Item] = {}
        # Every key not yet answered (found or known missing), unsent chunks included.
        pending = set(self._given)
        for request in self.chunks():
            attempt = 0
            while True:
                try:
                    response = yield Call(self.action, request)
                except ServiceError as exc:
                    raise self._incomplete(found, pending, cause=exc, attempts=attempt + 1) from exc
                for table, items in (response.get("Responses") or {}).items():
                    for item in items:
                        found[self._item_ident(table, item)] = item
                unprocessed = response.get("UnprocessedKeys") or {}
                left = {
                    key_identity(table, key)
                    for table, entry in unprocessed.items()
                    for key in entry.get("Keys", [])
                }
                for table, entry in request["RequestItems"].items():
                    for key in entry["Keys"]:
                        if key_identity(table, key) not in left:
                            pending.discard(key_identity(table, key))
                if not left:
                    break
                attempt += 1
                if attempt >= self.max_attempts:
                    raise self._incomplete(found, pending, cause=None, attempts=attempt)
                yield Sleep(_backoff(attempt, self.backoff_base, self.backoff_cap))
                request = {**request, "RequestItems": unprocessed}
        return self._decode(found)

    def _decode(self, found: Mapping[tuple[Any, ...], Item]) -> list[BaseModel]:
        result = []
        for plan, key in self.keys:
            item = found.get(key_identity(plan.table.name, key))
            if item is not None:
                result.append(plan.from_item(item))
        return result

    def _incomplete(
        self,
        found: Mapping[tuple[Any, ...], Item],
        pending: set[tuple[Any, ...]],
        *,
        cause: ServiceError | None,
        attempts: int,
    ) -> BatchGetIncompleteError:
        unread = [given for ident, given in self._given.items() if ident in pending]
        why = (
            f"still unprocessed after {attempts} attempts (throttled)"
            if cause is None
            else f"not read: a call failed with {cause.code}: {cause.message}"
        )
        return BatchGetIncompleteError(
            f"batch get: {len(unread)} of {len(self._given)} keys {why}; no partial result "
            "is returned: e.found holds the items read, e.unread_keys the keys to ask again",
            found=self._decode(found),
            unread_keys=unread,
            cause=cause,
        )

    def _item_ident(self, table: str, item: Item) -> tuple[Any, ...]:
        return key_identity(table, {a: item[a] for a in self._key_attributes[table]})
