"""Queries and scans: ordered slices of item collections, decoded into typed objects.

A query is built fluently and is pure until it is run: `EntityQuery.params` shows the exact
request. Sort-key conditions are expressed on the typed fields of the sort-key template
and become *key conditions* whose bounds end on segment boundaries:

* equality on the leading fields -> ``begins_with(SK, "EVT#<ts>#")``;
* ``between(ts=(a, b))`` -> every item whose ``ts`` is in ``[a, b]`` whatever its ``seq``;
* ``gt(ts=x)`` excludes every item at exactly ``x``; ``le`` includes them all;
* the entity's literal prefix keeps other entity types out of the read.

Running goes through an executor (`singletable.Connection`, or `singletable.AsyncConnection`
with the same calls awaited): a query is a *sans-I/O* generator that yields `Call` requests
and `Emit` results, so results stream lazily and memory stays flat however large the
partition is.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from pydantic import BaseModel

from singletable.errors import (
    CursorError,
    ExpressionError,
    KeyEncodeError,
    QueryError,
)
from singletable.expressions.tree import (
    Condition,
    FieldRef,
    Placeholders,
    render_condition,
    render_projection,
)
from singletable.keys.ranges import can_produce_key_in
from singletable.keys.templates import MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES
from singletable.model.plan import entity_plan, entity_plans
from singletable.model.unique import is_guard_item
from singletable.operations.common import key_ref
from singletable.operations.cursor import fingerprint, make_cursor, read_cursor
from singletable.operations.protocol import (
    AsyncExecutor,
    Call,
    Executor,
    Operation,
    ReturnCapacity,
    Step,
)
from singletable.operations.stream import (
    AsyncStreamExecutor,
    Emit,
    Folded,
    Stream,
    StreamExecutor,
    consume,
)
from singletable.types import Item

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan, KeyPlan
    from singletable.model.table import Table

T = TypeVar("T")
E = TypeVar("E", bound=BaseModel)


@dataclass
class Page(Generic[T]):
    """One page of results and the cursor that resumes after it (``None`` at the end)."""

    items: list[T]
    cursor: str | None
    #: Items whose entity no class on the table declares (raw low-level items).
    unknown: list[Item] = field(default_factory=list)
    consumed_capacity: float = 0.0


class _KeyCondition:
    # A plain class: a dataclass costs ~0.3 ms of import time to generate (issue 13).
    __slots__ = ("exclude", "op", "values")

    def __init__(
        self,
        op: Literal["eq", "begins_with", "between", "lt", "le", "gt", "ge"],
        values: tuple[str, ...],
        exclude: str | None = None,
    ) -> None:
        self.op = op
        self.values = values
        #: A key that satisfies the key condition but not the requested strict ``<``.
        self.exclude = exclude

    def __repr__(self) -> str:
        # Cursor fingerprints hash this text: it stays the dataclass repr it was, so that
        # cursors handed out before still resume their query.
        return f"_KeyCondition(op={self.op!r}, values={self.values!r}, exclude={self.exclude!r})"


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

    def __init__(self, table: Table) -> None:
        self.table = table
        self._filter: Condition | None = None
        self._limit: int | None = None
        self._page_size: int | None = None
        self._consistent = False
        self._capacity: ReturnCapacity | None = None
        self._secret: bytes | None = None

    def _copy(self: Q) -> Q:
        return copy.copy(self)

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
        if index is not None:
            schema = self.table.key_schema(index)
            attributes += [schema.pk] + ([schema.sk] if schema.sk else [])
        return list(dict.fromkeys(attributes))

    def _partition_av(self) -> tuple[str, dict[str, str]] | None:
        """The partition key attribute and value every start key must have (queries)."""
        return None

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
        types = self.table.key_attributes()
        partition_keys = {s.pk for s in self.table.key_schemas()}
        for name in expected:
            problem = _key_value_problem(key[name], types[name], partition=name in partition_keys)
            if problem:
                raise CursorError(f"cursor was altered: its start key attribute {name!r} {problem}")
        partition = self._partition_av()
        if partition is not None and not _same_key_value(key[partition[0]], partition[1]):
            raise CursorError(
                f"cursor was altered: its start key is in partition {key[partition[0]]!r}, "
                f"not this query's {partition[1]!r}"
            )

    def _gsi_names(self) -> set[str]:
        return {n for n, i in self.table.indexes.items() if i.kind == "GSI"}

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
        while True:
            response = yield Call(self.action, request)
            page: Page[T] = Page([], None)
            page.consumed_capacity = float(
                (response.get("ConsumedCapacity") or {}).get("CapacityUnits", 0.0)
            )
            last_item: Item | None = None
            stopped_early = False
            for item in response.get("Items", []):
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
                value = self._decode(item)
                if value is None:
                    # Uniqueness guards are the table's own bookkeeping, not unknown items.
                    if not is_guard_item(self.table, item):
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
        return self.table.key_schema(self._index()).sk

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


def partition_key_text(plan: EntityPlan, key_plan: KeyPlan, values: Mapping[str, Any]) -> str:
    """The partition key text of ``key_plan`` from field ``values`` (every pk field needed)."""
    missing = [f for f in key_plan.pk.fields if f not in values]
    if missing:
        where = "the table" if key_plan.index is None else f"index {key_plan.index!r}"
        raise QueryError(
            f"{plan.label}: a query on {where} needs the partition key field "
            f"{missing[0]!r} (template {key_plan.pk.source!r})"
        )
    return key_plan.pk.format(values)


def _sort_condition(ref: FieldRef[Any], op: str, values: list[object]) -> Condition:
    first = values[0]
    if op == "eq":
        return ref == first
    if op == "begins_with":
        assert isinstance(first, str)
        return ref.begins_with(first)
    if op == "between":
        return ref.between(first, values[1])
    if op == "lt":
        return ref < first
    if op == "le":
        return ref <= first
    if op == "gt":
        return ref > first
    return ref >= first


class EntityQuery(BaseQuery[E]):
    """A query for one entity type in one partition, on the table or an index.

    Build it with ``Entity.query(**partition_and_leading_sort_fields, index=None)``.
    """

    def __init__(
        self, plan: EntityPlan, values: Mapping[str, Any], index: str | None = None
    ) -> None:
        super().__init__(plan.table)
        self.plan = plan
        self.key_plan = plan.key_plan(index)
        self._values = dict(values)
        unknown = [k for k in values if k not in self.key_plan.fields]
        if unknown:
            raise QueryError(
                f"{plan.label}: {unknown[0]!r} is not a key field of "
                f"{'the table' if index is None else 'index ' + repr(index)} "
                f"(key fields: {', '.join(self.key_plan.fields)}); use filter() for other fields"
            )
        self.partition = partition_key_text(plan, self.key_plan, values)
        sk = self.key_plan.sk
        self._eq_count = 0
        if sk is not None:
            for name in sk.fields:
                if name not in values:
                    break
                self._eq_count += 1
            given_sk = [f for f in sk.fields if f in values]
            if len(given_sk) != self._eq_count:
                gap = sk.fields[self._eq_count]
                raise QueryError(
                    f"{plan.label}: sort key fields must be given in template order "
                    f"({sk.source!r}); {given_sk[-1]!r} was given without {gap!r}"
                )
        self._range: tuple[str, tuple[Any, ...]] | None = None
        self._forward = True
        self._projection: tuple[str, ...] | None = None
        #: Set on the copy that count() sends: it reads no attributes, so neither a
        #: projection nor a KEYS_ONLY index's missing fields matter.
        self._counting = False
        #: (the range it was worked out for, `_needs_type_filter`): see `_type_filtered`.
        self._needs_filter_cache: tuple[object, bool] | None = None
        # Sort key values are encoded now, like the partition key's: a bad one is refused
        # where it is given, with the same error type.
        self._key_condition()

    # -- sort key conditions -----------------------------------------------------------

    def _next_field(self, op: str, kwargs: Mapping[str, Any]) -> tuple[str, Any]:
        sk = self.key_plan.sk
        if sk is None:
            raise QueryError(f"{self.plan.label}: {op}() needs a sort key; this key has none")
        if len(kwargs) != 1:
            raise QueryError(f"{op}() takes exactly one field=value, got {sorted(kwargs)}")
        ((name, value),) = kwargs.items()
        if self._range is not None:
            raise QueryError(
                f"{self.plan.label}: only one sort key condition per query "
                f"(already {self._range[0]}); use filter() for more"
            )
        if self._eq_count >= len(sk.fields):
            raise QueryError(
                f"{self.plan.label}: every sort key field is already fixed; {op}() has nothing "
                "left to range over"
            )
        expected = sk.fields[self._eq_count]
        if name != expected:
            raise QueryError(
                f"{self.plan.label}: {op}() must be on {expected!r}, the next field of the sort "
                f"key template {sk.source!r} after the ones given "
                f"({', '.join(sk.fields[: self._eq_count]) or 'none'}); got {name!r}"
            )
        return name, value

    def _with_range(self, op: str, value: tuple[Any, ...]) -> EntityQuery[E]:
        q = self._copy()
        q._range = (op, value)
        q._key_condition()  # validate (encode) now, not at run time
        return q

    def between(self, **field: tuple[Any, Any]) -> EntityQuery[E]:
        """Items whose field is within ``(low, high)``, both inclusive, whatever follows."""
        name, bounds = self._next_field("between", field)
        if not isinstance(bounds, tuple) or len(bounds) != 2:
            raise QueryError(f"between({name}=...) takes a (low, high) tuple")
        return self._with_range("between", (name, *bounds))

    def gt(self, **field: Any) -> EntityQuery[E]:
        """Items whose field is greater than the value (none equal to it)."""
        return self._with_range("gt", self._next_field("gt", field))

    def ge(self, **field: Any) -> EntityQuery[E]:
        """Items whose field is greater than or equal to the value."""
        return self._with_range("ge", self._next_field("ge", field))

    def lt(self, **field: Any) -> EntityQuery[E]:
        """Items whose field is less than the value."""
        return self._with_range("lt", self._next_field("lt", field))

    def le(self, **field: Any) -> EntityQuery[E]:
        """Items whose field is less than or equal to the value."""
        return self._with_range("le", self._next_field("le", field))

    def begins_with(self, **field: str) -> EntityQuery[E]:
        """Items whose field starts with a partial value (e.g. ``ts="2026-06"``)."""
        return self._with_range("begins_with", self._next_field("begins_with", field))

    def descending(self) -> EntityQuery[E]:
        """Read in descending key order (``ScanIndexForward=False``)."""
        q = self._copy()
        q._forward = False
        return q

    def ascending(self) -> EntityQuery[E]:
        """Read in ascending key order (the default)."""
        q = self._copy()
        q._forward = True
        return q

    def project(self, *fields: str) -> EntityQuery[Any]:
        """Read only these fields: results become dicts of decoded values."""
        for name in fields:
            if name not in self.plan.fields:
                raise ExpressionError(f"{self.plan.label}: cannot project unknown field {name!r}")
        q = self._copy()
        q._projection = tuple(fields)
        return q

    # -- key condition -----------------------------------------------------------------

    def _key_condition(self) -> _KeyCondition | None:
        """The sort key condition sent, every operand a valid, sendable key value.

        DynamoDB refuses an empty string and text over the sort key limit (1,024 bytes)
        as a key condition operand. An empty bound (the first field of a template that
        starts with a field, at an empty value) is rewritten to the same selection;
        an oversized one is refused, naming the condition and the limit.
        """
        condition = self._key_condition_unchecked()
        if condition is None or "" not in condition.values:
            pass
        elif condition.op in ("ge", "begins_with"):
            return None  # every key is >= "" and starts with ""
        elif condition.op == "between":
            condition = _KeyCondition("le", condition.values[1:], condition.exclude)
        elif condition.op == "lt":
            # No key is below "": no non-empty key is below "\x00" either.
            condition = _KeyCondition("lt", ("\x00",), condition.exclude)
        sk = self.key_plan.sk
        if condition is not None and sk is not None and sk.key_type == "S":
            if self._range is None:
                what = "the sort key condition"
            else:
                op, args = self._range
                what = f"the bound of {op}({args[0]}=...)"
            for value in condition.values:
                sk.check_size(value, what)
        return condition

    def _key_condition_unchecked(self) -> _KeyCondition | None:  # noqa: C901 - one branch per sort-key operator and bound shape
        sk = self.key_plan.sk
        if sk is None:
            return None
        values = self._values
        count = self._eq_count
        try:
            if count == len(sk.fields):
                return _KeyCondition("eq", (sk.format(values),))
            prefix = sk.prefix(values, count)
            if self._range is None:
                return _KeyCondition("begins_with", (prefix,)) if prefix else None
            op, args = self._range
            name = sk.fields[count]
            if sk.key_type == "N":
                # DynamoDB compares a Number sort key numerically: the bounds are the
                # numbers themselves, never key text with a delimiter sentinel.
                if op == "begins_with":
                    raise QueryError(
                        f"{self.plan.label}: begins_with({name}=...) needs a string sort key; "
                        f"{sk.attribute!r} is a Number"
                    )
                numbers = tuple(sk.format({name: v}) for v in args[1:])
                if op == "between" and Decimal(numbers[0]) > Decimal(numbers[1]):
                    raise QueryError(
                        f"{self.plan.label}: between({name}=...): the low bound {args[1]!r} is "
                        f"above the high bound {args[2]!r}"
                    )
                return _KeyCondition(op, numbers)  # type: ignore[arg-type]
            sentinel = sk.upper_sentinel
            upper = prefix[:-1] + sentinel if prefix else None
            if op == "begins_with":
                partial = args[1]
                if not isinstance(partial, str):
                    raise KeyEncodeError(
                        f"{self.plan.label}: begins_with({name}=...) takes a str, got {partial!r}"
                    )
                return _KeyCondition("begins_with", (sk.partial_prefix(values, count, partial),))

            def bound(value: Any) -> str:
                return sk.bound({**values, name: value}, count + 1)

            if op == "between":
                low, high = bound(args[1]), bound(args[2])
                if low > high:
                    raise QueryError(
                        f"{self.plan.label}: between({name}=...): the low bound {args[1]!r} is "
                        f"above the high bound {args[2]!r}"
                    )
                return _KeyCondition("between", (low, high + sentinel))
            value = bound(args[1])
            if op == "ge":
                return (
                    _KeyCondition("between", (value, upper))
                    if upper
                    else _KeyCondition("ge", (value,))
                )
            if op == "gt":
                low = value + sentinel
                return (
                    _KeyCondition("between", (low, upper)) if upper else _KeyCondition("gt", (low,))
                )
            if op == "le":
                high = value + sentinel
                return (
                    _KeyCondition("between", (prefix, high))
                    if prefix
                    else _KeyCondition("lt", (high,))
                )
            # lt: keys below ``value`` within the prefix. DynamoDB has no "between,
            # exclusive", so the exact key ``value`` (at most one item) is read and dropped.
            if prefix:
                return _KeyCondition("between", (prefix, value), exclude=value)
            return _KeyCondition("lt", (value,))
        except KeyEncodeError:
            # A value that cannot be encoded stays a KeyEncodeError (KeyTooLargeError
            # included), the type partition key values raise too.
            raise

    def _needs_type_filter(self) -> bool:
        """Whether another entity type can have keys in the range this query reads.

        Decided on the range actually read (this partition, the sort key condition with
        its prefix and bounds), not on the templates alone: ``"K#{n}#A"`` and
        ``"K#{n}#B"`` never make equal keys, but ``begins_with(SK, "K#")`` reads both.
        """
        mine = self.key_plan
        condition = self._key_condition()
        op, values = (None, ()) if condition is None else (condition.op, condition.values)
        partition = (self.partition,)
        for other in entity_plans(self.table):
            if other is self.plan:
                continue
            theirs = other.indexes.get(mine.index) if mine.index else other.primary
            if theirs is None or not can_produce_key_in(theirs.pk, "eq", partition):
                continue
            if theirs.sk is None or can_produce_key_in(theirs.sk, op, values):
                return True
        return False

    def _type_filtered(self) -> bool:
        """`_needs_type_filter`, worked out once per query value (it is asked per item)."""
        cached = self._needs_filter_cache
        if cached is None or cached[0] is not self._range:
            cached = self._needs_filter_cache = (self._range, self._needs_type_filter())
        return cached[1]

    def _excluded_key(self) -> str | None:
        condition = self._key_condition()
        return condition.exclude if condition else None

    def _index(self) -> str | None:
        return self.key_plan.index

    def _partition_av(self) -> tuple[str, dict[str, str]] | None:
        return self.key_plan.schema.pk, self.key_plan.pk.attribute_value(self.partition)

    def _check_keys_only(self) -> None:
        if not self._keys_only():
            return
        recoverable = {*self.plan.primary.fields, *self.key_plan.fields}
        wanted = self._projection if self._projection is not None else tuple(self.plan.fields)
        lost = [f for f in wanted if f not in recoverable]
        if lost:
            raise QueryError(
                f"{self.plan.label}: index {self._index()!r} projects KEYS_ONLY, so field "
                f"{lost[0]!r} is not in its items; use .project(...) with key fields only "
                f"({', '.join(sorted(recoverable))}), then read full items by key"
            )

    def _request(self, ph: Placeholders) -> dict[str, Any]:
        if self._keys_only() and self._needs_type_filter():
            # The type filter reads the entity attribute, which a KEYS_ONLY index does not
            # copy: DynamoDB would drop every item and the query would silently be empty.
            raise QueryError(
                f"{self.plan.label}: index {self._index()!r} projects KEYS_ONLY and other "
                "entity types can have keys in this range, so its items cannot be told "
                f"apart (the entity attribute {self.table.entity_attribute!r} is not in the "
                "index); give the index an INCLUDE or ALL projection, which carries it"
            )
        if not self._counting:
            self._check_keys_only()
        schema = self.key_plan.schema
        pk_ref = key_ref(schema.pk)
        parts = [render_condition(pk_ref == self.key_plan.pk.attribute_value(self.partition), ph)]
        condition = self._key_condition()
        if condition is not None:
            assert schema.sk is not None
            assert self.key_plan.sk is not None
            ref = key_ref(schema.sk)
            sk_type = self.key_plan.sk.key_type
            avs: list[object] = [v if sk_type == "S" else {sk_type: v} for v in condition.values]
            parts.append(render_condition(_sort_condition(ref, condition.op, avs), ph))
        request: dict[str, Any] = {
            "TableName": self.table.name,
            "KeyConditionExpression": " AND ".join(parts),
        }
        if self._index() is not None:
            request["IndexName"] = self._index()
        if not self._forward:
            request["ScanIndexForward"] = False
        # A KEYS_ONLY index holds nothing but keys (asking a GSI for more is an error):
        # the projected fields are parsed from those keys instead.
        if self._projection is not None and not self._keys_only() and not self._counting:
            attrs = [self.plan.fields[f].attribute for f in self._projection]
            keys = list(self._start_key_attributes())
            request["ProjectionExpression"] = render_projection(
                list(dict.fromkeys([*attrs, *keys, self.table.entity_attribute])), ph
            )
        return request

    def _effective_filter(self) -> Condition | None:
        # Other entity types can share the key range: keep them out of the results (the
        # same filter must be in the request and in the cursor's fingerprint).
        if not self._needs_type_filter():
            return self._filter
        type_filter = key_ref(self.table.entity_attribute) == self.plan.name
        return type_filter if self._filter is None else type_filter & self._filter

    def _start_key_attributes(self) -> list[str]:
        attrs = [self.table.pk] + ([self.table.sk] if self.table.sk else [])
        if self._index() is not None:
            schema = self.key_plan.schema
            attrs += [schema.pk] + ([schema.sk] if schema.sk else [])
        return attrs

    def _identity(self) -> dict[str, Any]:
        return {
            "kind": "entity-query",
            "table": self.table.name,
            "index": self._index(),
            "entity": [self.plan.name, self.plan.version],
            "partition": self.partition,
            "sk": repr(self._key_condition()),
            "forward": self._forward,
            "projection": self._projection,
        }

    def _keys_only(self) -> bool:
        index = self._index()
        spec = self.table.indexes.get(index) if index is not None else None
        return spec is not None and spec.projection.type == "KEYS_ONLY"

    def _decode(self, item: Item) -> Any:
        name = item.get(self.table.entity_attribute, {}).get("S")
        if name is None and self._keys_only() and not self._type_filtered():
            # A KEYS_ONLY index copies no identifier, but no other entity can have keys
            # in this range: the item is ours, and its fields come from its keys.
            name = self.plan.name
        if name != self.plan.name or not same_version(self.plan, item):
            return None
        if self._projection is not None:
            result = {}
            for f in self._projection:
                plan = self.plan.fields[f]
                av = item.get(plan.attribute)
                if av is not None:
                    result[f] = plan.codec.from_av(av)
            if len(result) < len(self._projection):
                recovered = self.plan.fields_from_keys(item)
                result.update({f: recovered[f] for f in self._projection if f in recovered})
            return result
        return self.plan.from_item(item)

    @overload
    def count(self, db: AsyncExecutor) -> Coroutine[Any, Any, int]: ...
    @overload
    def count(self, db: Executor) -> int: ...
    def count(self, db: Executor | AsyncExecutor) -> int | Coroutine[Any, Any, int]:
        """How many items match (``Select=COUNT``; billed like reading them)."""
        operation = self.count_operation()  # validates before db is touched
        return db.execute(operation)

    def count_operation(self) -> Operation[int]:
        """`count` as an operation value."""

        def steps() -> Step[int]:
            total = [0]

            def add(count: int) -> bool:
                total[0] += count
                return True

            yield from consume(self._count_stream(), add)
            return total[0]

        return Folded(self._count_request, steps)

    def _count_request(self) -> dict[str, Any]:
        # DynamoDB refuses a ProjectionExpression with Select=COUNT: count the query
        # without the projection (same key condition and filter).
        counting = self._copy()
        counting._counting = True
        request = counting.params()
        request.pop("Limit", None)
        excluded = self._excluded_key()
        if excluded is None:
            request["Select"] = "COUNT"
        else:
            # The exact key that a strict "<" must not count has to be seen to be dropped.
            ph = Placeholders()
            request["ProjectionExpression"] = render_projection([self.key_plan.schema.sk or ""], ph)
            request.setdefault("ExpressionAttributeNames", {}).update(
                {k.replace("#n", "#p"): v for k, v in ph.names.items()}
            )
            request["ProjectionExpression"] = request["ProjectionExpression"].replace("#n", "#p")
        return request

    def _count_stream(self) -> Stream[int]:
        request = self._count_request()
        excluded = self._excluded_key()
        while True:
            response = yield Call("query", request)
            if excluded is None:
                yield Emit(int(response.get("Count", 0)))
            else:
                sk = self.key_plan.schema.sk or ""
                yield Emit(
                    sum(1 for i in response.get("Items", []) if i.get(sk, {}).get("S") != excluded)
                )
            last = response.get("LastEvaluatedKey")
            if last is None:
                return
            request = {**request, "ExclusiveStartKey": last}


def decode_any(table: Table, item: Item) -> BaseModel | None:
    """Decode an item into the entity class its identifier names; ``None`` if none does."""
    name = item.get(table.entity_attribute, {}).get("S")
    version = item.get(table.version_attribute, {}).get("N")
    if name is None or version is None:
        return None
    try:
        plan = entity_plan(table, name, int(version))
    except ValueError:
        return None
    return None if plan is None else plan.from_item(item)
