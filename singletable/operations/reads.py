"""What every read of an item collection shares: options, paging, cursors, terminals.

`BaseQuery` holds the options (filter, limit, page size, consistency, capacity, signed
cursors), builds the request of each page, checks the start key a cursor resumes from,
streams pages lazily as a *sans-I/O* generator (`Call` requests, `Emit` results) and
folds that stream into the terminals (``all``, ``first``, ``page``...). Entity queries,
collection queries and scans are its subclasses; they provide the request and decoding.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from dataclasses import field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from pydantic import BaseModel

from singletable.errors import CursorError, QueryError
from singletable.expressions.conditions import Condition, render_condition
from singletable.expressions.paths import Placeholders
from singletable.keys.templates import MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES
from singletable.model.collector import collector_held_off
from singletable.model.jobs import is_reserved_item
from singletable.model.plan import item_plan, native_key_types
from singletable.operations.cursor import fingerprint, make_cursor, read_cursor
from singletable.operations.protocol import (
    AsyncExecutor,
    Call,
    Executor,
    Operation,
    ReturnCapacity,
    Step,
    consumed_units,
    shallow_copy,
)
from singletable.operations.stream import (
    AsyncStreamExecutor,
    Emit,
    Folded,
    Stream,
    StreamExecutor,
    consume,
)
from singletable.types import Item, mutable_dataclass

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan
    from singletable.model.table import Table


T = TypeVar("T")


@mutable_dataclass
class Page(Generic[T]):
    """One page of results and the cursor that resumes after it (``None`` at the end)."""

    items: list[T]
    cursor: str | None
    #: Items whose entity no class on the table declares (raw low-level items).
    unknown: list[Item] = field(default_factory=list)
    consumed_capacity: float = 0.0


def _same_key_value(a: Any, b: Any) -> bool:
    """Whether two key AttributeValues are equal, numbers by value.

    DynamoDB normalises the numbers of the keys it returns (``"1.50"`` -> ``"1.5"``).
    """
    if a == b:
        return True
    if isinstance(a, dict) and isinstance(b, dict) and "N" in a and "N" in b:
        try:
            return bool(Decimal(a["N"]) == Decimal(b["N"]))
        except (ArithmeticError, ValueError, TypeError):
            return False
    return False


def _key_value_problem(av: Any, key_type: str, *, partition: bool) -> str | None:
    """What makes ``av`` unacceptable as a value of a key attribute of ``key_type``."""
    if not isinstance(av, dict) or len(av) != 1:
        return f"is not an attribute value: {av!r}"
    ((kind, value),) = av.items()
    if kind != key_type:
        return f"must be of type {key_type}, got {kind}"
    limit = MAX_PARTITION_KEY_BYTES if partition else MAX_SORT_KEY_BYTES
    if kind == "N":
        try:
            number = Decimal(value)
        except (ArithmeticError, ValueError, TypeError):
            return f"must hold a number, got {value!r}"
        if not number.is_finite() or (
            number and not Decimal("1E-130") <= abs(number) < Decimal("1E126")
        ):
            return f"must hold a number DynamoDB can store, got {value!r}"
        return None
    if not value:
        return "is empty; DynamoDB refuses empty key values"
    size = len(value.encode("utf-8", "surrogatepass")) if kind == "S" else len(value)
    if size > limit:
        return f"is {size} bytes, over DynamoDB's key limit of {limit} bytes"
    return None


def same_version(plan: EntityPlan, item: Item) -> bool:
    """Whether ``item`` was written by this version of the entity.

    Another registered version of the same entity name (a model being migrated) passes
    the type filter, which tests the name only; decoding it with this version's class
    would silently misread it. Items without a version (a KEYS_ONLY index) pass.
    """
    version = item.get(plan.table.version_attribute, {}).get("N")
    return version is None or version == str(plan.version)


class BaseQuery(Generic[T]):
    """Options shared by entity queries, collection queries and scans."""

    #: The entity or collection read, for telemetry (``None``: any).
    subject: str | None = None

    def __init__(self, table: Table) -> None:
        self.table = table
        self._filter: Condition | None = None
        self._limit: int | None = None
        self._page_size: int | None = None
        self._consistent = False
        self._capacity: ReturnCapacity | None = None
        self._secret: bytes | None = None

    def _copy(self: Q) -> Q:
        return shallow_copy(self)

    def filter(self: Q, condition: Condition) -> Q:
        """Add a FilterExpression (applied after the read, billed for what was read)."""
        q = self._copy()
        q._filter = condition if q._filter is None else q._filter & condition
        return q

    def limit(self: Q, n: int) -> Q:
        """Return at most ``n`` results in all."""
        if n < 1:
            raise QueryError(f"limit must be at least 1, got {n}")
        q = self._copy()
        q._limit = n
        return q

    def page_size(self: Q, n: int) -> Q:
        """Read at most ``n`` items per request (DynamoDB's ``Limit``)."""
        if n < 1:
            raise QueryError(f"page_size must be at least 1, got {n}")
        q = self._copy()
        q._page_size = n
        return q

    def consistent(self: Q, value: bool = True) -> Q:
        """Strongly consistent reads (not available on GSIs)."""
        q = self._copy()
        q._consistent = value
        return q

    def capacity(self: Q, mode: ReturnCapacity = "TOTAL") -> Q:
        """Ask DynamoDB to report consumed capacity on every page."""
        q = self._copy()
        q._capacity = mode
        return q

    def signed(self: Q, secret: bytes | str) -> Q:
        """Sign cursors with HMAC-SHA256 and refuse unsigned or altered ones."""
        q = self._copy()
        q._secret = secret.encode("utf-8") if isinstance(secret, str) else secret
        return q

    # -- to be provided by subclasses ------------------------------------------------

    def _request(self, ph: Placeholders) -> dict[str, Any]:
        raise NotImplementedError

    def _identity(self) -> dict[str, Any]:
        raise NotImplementedError

    def _decode(self, item: Item) -> T | None:
        """The result for one item, or ``None`` when it is not one (see `Page.unknown`)."""
        raise NotImplementedError

    def _item_decoder(self) -> Callable[[Item], T | None]:
        """`_decode` as the page loop calls it: a subclass may hand a faster equal function."""
        return self._decode

    def _page_decoder(self) -> Callable[[bytes], dict[str, Any] | None] | None:
        """A decoder of whole response bodies (`singletable.model.pages`), if any.

        Its pages hold entities, and the attribute-value dicts of the items left to
        `_item_decoder`; `stream_pages` hands it to the transport only when no item is
        skipped or counted against a limit, which need every item's attributes.
        """
        return None

    def _excluded_key(self) -> str | None:
        return None

    def _index(self) -> str | None:
        return None

    def _effective_filter(self) -> Condition | None:
        """The FilterExpression actually sent (the user's, plus any the query adds)."""
        return self._filter

    action = "query"

    # -- requests ----------------------------------------------------------------------

    def params(self, cursor: str | None = None) -> dict[str, Any]:
        """The exact request of the first page (or of the page ``cursor`` resumes)."""
        ph = Placeholders()
        request = self._request(ph)
        filter_ = self._effective_filter()
        if filter_ is not None:
            request["FilterExpression"] = render_condition(filter_, ph)
        ph.apply(request)
        if self._consistent:
            if self._index() is not None and self._index() in self._gsi_names():
                raise QueryError(f"GSI {self._index()!r} does not support consistent reads")
            request["ConsistentRead"] = True
        page = self._page_size
        if self._limit is not None and filter_ is None and self._excluded_key() is None:
            # Without a filter every item read is a result: read no more than needed.
            page = min(page or self._limit, self._limit)
        if page is not None:
            request["Limit"] = page
        if self._capacity is not None:
            request["ReturnConsumedCapacity"] = self._capacity
        if cursor is not None:
            start_key = read_cursor(cursor, self._fingerprint(), secret=self._secret)
            self._check_start_key(start_key)
            request["ExclusiveStartKey"] = start_key
        return request

    def _key_attributes(self) -> list[str]:
        """The attributes of an ``ExclusiveStartKey`` for this read (table and index keys)."""
        attributes = [self.table.pk] + ([self.table.sk] if self.table.sk else [])
        index = self._index()
        native = self.table.native_indexes.get(index) if index is not None else None
        if native is not None:
            attributes += [p.attribute for p in native.parts]
        elif index is not None:
            schema = self.table.key_schema(index)
            attributes += [schema.pk] + ([schema.sk] if schema.sk else [])
        return list(dict.fromkeys(attributes))

    def _partition_av(self) -> tuple[str, dict[str, str]] | None:
        """The partition key attribute and value every start key must have (queries)."""
        return None

    def _partition_avs(self) -> list[tuple[str, dict[str, str]]]:
        """Every partition key attribute and value a start key must have (native: several)."""
        partition = self._partition_av()
        return [] if partition is None else [partition]

    def _key_types(self) -> dict[str, tuple[str, bool]]:
        """Each key attribute's type, and whether it is a partition key (its size limit)."""
        partition_keys = {s.pk for s in self.table.key_schemas()}
        types: dict[str, tuple[str, bool]] = {
            a: (t, a in partition_keys) for a, t in self.table.key_attributes().items()
        }
        index = self._index()
        native = self.table.native_indexes.get(index) if index is not None else None
        if native is not None:
            stored = native_key_types(self.table, unknown_ok=True)
            for part in native.parts:
                types[part.attribute] = (stored.get(part.attribute, "S"), part in native.pk)
        return types

    def _check_start_key(self, key: Item) -> None:
        # An unsigned cursor can be edited: at least make sure its start key has the
        # full shape of this read's keys (names, types, values DynamoDB accepts as keys)
        # and lies in this query's partition.
        expected = self._key_attributes()
        if sorted(key) != sorted(expected):
            raise CursorError(
                f"cursor was altered: its start key has attributes {sorted(key)}, "
                f"this read's keys have {sorted(expected)}"
            )
        types = self._key_types()
        for name in expected:
            kind, partition_key = types[name]
            problem = _key_value_problem(key[name], kind, partition=partition_key)
            if problem:
                raise CursorError(f"cursor was altered: its start key attribute {name!r} {problem}")
        for attribute, value in self._partition_avs():
            if not _same_key_value(key[attribute], value):
                raise CursorError(
                    f"cursor was altered: its start key is in partition {key[attribute]!r}, "
                    f"not this query's {value!r}"
                )

    def _gsi_names(self) -> set[str]:
        return {n for n, i in self.table.indexes.items() if i.kind == "GSI"} | set(
            self.table.native_indexes
        )

    def _fingerprint(self) -> dict[str, str]:
        identity = self._identity()
        identity["filter"] = None
        filter_ = self._effective_filter()
        if filter_ is not None:
            ph = Placeholders()
            identity["filter"] = [render_condition(filter_, ph), ph.names, ph.values]
        return fingerprint(identity)

    def _start_key(self, item: Item) -> Item:
        """The ``ExclusiveStartKey`` that resumes right after ``item``."""
        return {a: item[a] for a in self._key_attributes() if a in item}

    # -- streaming ---------------------------------------------------------------------

    def stream_pages(self, cursor: str | None = None, *, cursors: bool = True) -> Stream[Page[T]]:
        """A stream of pages (one per DynamoDB response, honouring `limit`).

        With ``cursors=False`` pages carry no resume cursor (``Page.cursor`` is ``None``),
        which spares hashing the query and encoding a cursor when nobody will resume.
        """
        request = self.params(cursor)
        remaining = self._limit
        excluded = self._excluded_key()
        sk_attribute = self._sort_attribute()
        query_fp: dict[str, str] | None = None  # computed when the first cursor is made
        decode = self._item_decoder()
        decode_body = self._page_decoder() if remaining is None and excluded is None else None
        while True:
            response = yield Call(
                self.action, request, subject=self.subject, decode_body=decode_body
            )
            page: Page[T] = Page([], None)
            page.consumed_capacity = consumed_units(response)
            last_item: Item | None = None
            stopped_early = False
            # The page's entities are built with the collector held off (no wait
            # inside: the page is here): 20 1,000-item AuditEvent queries, callgrind,
            # 62,262 -> 60,126 instructions an item (benchmarks/README.md, "Issue 24,
            # round 12").
            with collector_held_off():
                for item in response.get("Items", []):
                    if item.__class__ is not dict:
                        page.items.append(item)  # decoded with the body (`_page_decoder`)
                        continue
                    if remaining is not None and remaining <= 0:
                        stopped_early = True
                        break
                    last_item = item
                    if (
                        excluded is not None
                        and sk_attribute
                        and item.get(sk_attribute, {}).get("S") == excluded
                    ):
                        continue
                    value = decode(item)
                    if value is None:
                        # Uniqueness guards and job items are the table's own bookkeeping,
                        # not unknown items.
                        if not is_reserved_item(self.table, item):
                            page.unknown.append(item)
                        continue
                    page.items.append(value)
                    if remaining is not None:
                        remaining -= 1
            last_key = response.get("LastEvaluatedKey")
            more = last_key is not None or stopped_early
            finished = remaining is not None and remaining <= 0
            if finished and last_item is not None:
                # Resume after the last item handed out, not after DynamoDB's page.
                last_key = self._start_key(last_item)
            if cursors and more and last_key is not None:
                if query_fp is None:
                    query_fp = self._fingerprint()
                page.cursor = make_cursor(query_fp, last_key, secret=self._secret)
            yield Emit(page)
            if not more or last_key is None or finished:
                return
            request = {**request, "ExclusiveStartKey": last_key}
            if (
                remaining is not None
                and "Limit" in request
                and self._effective_filter() is None
                and excluded is None
            ):
                request["Limit"] = min(request["Limit"], remaining)

    def stream_items(self, cursor: str | None = None) -> Stream[T]:
        """A stream of results, lazily fetched page by page."""
        pages = self.stream_pages(cursor, cursors=False)
        sent: Any = None
        while True:
            try:
                out = pages.send(sent)
            except StopIteration:
                return
            if isinstance(out, Emit):
                for value in out.value.items:
                    yield Emit(value)
                sent = None
            else:
                sent = yield out

    def _sort_attribute(self) -> str | None:
        index = self._index()
        if index is not None and index in self.table.native_indexes:
            return None  # no key text: no key excluded by its text either
        return self.table.key_schema(index).sk

    # -- terminals (overloaded on the executor's kind; each defined once) ---------------
    #
    # ``all``/``first``/``count``/``page`` are `Folded` operations (a stream folded into one
    # result by pure steps), so a synchronous and an asyncio executor run the same code;
    # ``iter``/``pages`` hand the stream to the executor, which yields lazily.

    @overload
    def iter(self, db: AsyncStreamExecutor, cursor: str | None = None) -> AsyncIterator[T]: ...
    @overload
    def iter(self, db: StreamExecutor, cursor: str | None = None) -> Iterator[T]: ...
    def iter(
        self, db: StreamExecutor | AsyncStreamExecutor, cursor: str | None = None
    ) -> Iterator[T] | AsyncIterator[T]:
        """Every result, fetching pages lazily (``async for`` with an async executor).

        No request is sent past the page the consumer stops in.
        """
        return db.stream(self.stream_items(cursor))

    @overload
    def all(self, db: AsyncExecutor, cursor: str | None = None) -> Coroutine[Any, Any, list[T]]: ...
    @overload
    def all(self, db: Executor, cursor: str | None = None) -> list[T]: ...
    def all(
        self, db: Executor | AsyncExecutor, cursor: str | None = None
    ) -> list[T] | Coroutine[Any, Any, list[T]]:
        """Every result, as a list."""
        operation = self.all_operation(cursor)  # validates before db is touched
        return db.execute(operation)

    def all_operation(self, cursor: str | None = None) -> Operation[list[T]]:
        """`all` as an operation value (what an executor runs)."""

        def steps() -> Step[list[T]]:
            items: list[T] = []

            def take(page: Page[T]) -> bool:
                items.extend(page.items)
                return True

            yield from consume(self.stream_pages(cursor, cursors=False), take)
            return items

        return Folded(lambda: self.params(cursor), steps)

    @overload
    def first(self, db: AsyncExecutor) -> Coroutine[Any, Any, T | None]: ...
    @overload
    def first(self, db: Executor) -> T | None: ...
    def first(self, db: Executor | AsyncExecutor) -> T | Coroutine[Any, Any, T | None] | None:
        """The first result, or ``None``."""
        operation = self.first_operation()  # validates before db is touched
        return db.execute(operation)

    def first_operation(self) -> Operation[T | None]:
        """`first` as an operation value: reads pages until one result is found."""
        one = self.limit(1)

        def steps() -> Step[T | None]:
            found: list[T] = []

            def take(page: Page[T]) -> bool:
                found.extend(page.items[:1])
                return not found

            yield from consume(one.stream_pages(cursors=False), take)
            return found[0] if found else None

        return Folded(one.params, steps)

    @overload
    def pages(
        self, db: AsyncStreamExecutor, cursor: str | None = None
    ) -> AsyncIterator[Page[T]]: ...
    @overload
    def pages(self, db: StreamExecutor, cursor: str | None = None) -> Iterator[Page[T]]: ...
    def pages(
        self, db: StreamExecutor | AsyncStreamExecutor, cursor: str | None = None
    ) -> Iterator[Page[T]] | AsyncIterator[Page[T]]:
        """Iterate page by page (each with its resume cursor)."""
        return db.stream(self.stream_pages(cursor))

    @overload
    def page(
        self, db: AsyncExecutor, cursor: str | None = None
    ) -> Coroutine[Any, Any, Page[T]]: ...
    @overload
    def page(self, db: Executor, cursor: str | None = None) -> Page[T]: ...
    def page(
        self, db: Executor | AsyncExecutor, cursor: str | None = None
    ) -> Page[T] | Coroutine[Any, Any, Page[T]]:
        """One page of up to `limit` results and the cursor to the next one.

        Needs `limit` (the page length); reads as many DynamoDB pages as it takes.
        """
        operation = self.page_operation(cursor)  # validates before db is touched
        return db.execute(operation)

    def page_operation(self, cursor: str | None = None) -> Operation[Page[T]]:
        """`page` as an operation value."""
        if self._limit is None:
            raise QueryError("page() needs limit(n): the number of results per page")

        def steps() -> Step[Page[T]]:
            result: Page[T] = Page([], None)

            def take(page: Page[T]) -> bool:
                result.items.extend(page.items)
                result.unknown.extend(page.unknown)
                result.consumed_capacity += page.consumed_capacity
                result.cursor = page.cursor
                return True

            yield from consume(self.stream_pages(cursor), take)
            return result

        return Folded(lambda: self.params(cursor), steps)


Q = TypeVar("Q", bound=BaseQuery[Any])


def decode_any(table: Table, item: Item) -> BaseModel | None:
    """Decode an item into the entity class its identifier names; ``None`` if none does."""
    plan = item_plan(table, item)
    return None if plan is None else plan.from_item(item)
