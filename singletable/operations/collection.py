"""Collections: one partition read in key order, each item decoded into its own entity class."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any, TypeVar, overload

from pydantic import BaseModel

from singletable.errors import QueryError
from singletable.expressions.conditions import render_condition
from singletable.expressions.paths import Placeholders
from singletable.model.pages import PageDecoder, members_page_decoder
from singletable.model.plan import plan_of
from singletable.operations.bounds import partition_key_text
from singletable.operations.common import key_ref
from singletable.operations.native import NativeQuery, native_plan
from singletable.operations.protocol import AsyncExecutor, Executor, Operation, Step
from singletable.operations.reads import BaseQuery, Page, decode_any
from singletable.operations.stream import Folded, consume
from singletable.types import Item

T = TypeVar("T")
E = TypeVar("E", bound=BaseModel)


class CollectionResult(list["BaseModel"]):
    """Items of a collection in key order, plus helpers to group them.

    ``unknown`` holds the raw items that are not of a member entity (name and version) of
    the collection: other entities sharing the partition, other versions of a member, or
    entities no class declares. They are reported, neither decoded into the results nor
    dropped silently, nor failing the read.
    """

    def __init__(self, items: Iterable[BaseModel] = (), unknown: Iterable[Item] = ()) -> None:
        super().__init__(items)
        self.unknown: list[Item] = list(unknown)

    def by_type(self) -> dict[type[BaseModel], list[BaseModel]]:
        """The items grouped by entity class (each group in key order)."""
        groups: dict[type[BaseModel], list[BaseModel]] = {}
        for item in self:
            groups.setdefault(type(item), []).append(item)
        return groups

    def of(self, cls: type[E]) -> list[E]:
        """The items of one entity class, in key order."""
        return [i for i in self if isinstance(i, cls)]


class Collection:
    """Entities that share a partition (same partition key template on the same index).

    ``Collection("activity", Actor, AuditEvent).query(actor_id="u1")`` reads the whole
    item collection in key order, each item of a member decoded into its own class; items
    of any other entity in the partition go to `CollectionResult.unknown` (and
    `Page.unknown`), never into the results.
    """

    def __init__(self, name: str, *entities: type[BaseModel], index: str | None = None) -> None:
        if not entities:
            raise QueryError(f"collection {name!r} needs at least one entity")
        self.name = name
        self.index = index
        self.plans = [plan_of(e) for e in entities]
        #: The stored identifiers (entity name, version text) of the members.
        self.members = frozenset((p.name, str(p.version)) for p in self.plans)
        first = self.plans[0]
        self.table = first.table
        if index is not None and index in self.table.native_indexes:
            # Every entity storing the parts is in a native GSI, under the same parts.
            for plan in self.plans:
                if plan.table is not self.table:
                    raise QueryError(f"collection {name!r}: {plan.label} is on another table")
                native_plan(plan, index)
            self.key_plans = []
            return
        self.key_plans = [p.key_plan(index) for p in self.plans]
        base = self.key_plans[0].pk
        for plan, key_plan in zip(self.plans, self.key_plans, strict=True):
            if plan.table is not self.table:
                raise QueryError(f"collection {name!r}: {plan.label} is on another table")
            if key_plan.pk.describe() != base.describe():
                raise QueryError(
                    f"collection {name!r}: {plan.label} has partition key template "
                    f"{key_plan.pk.source!r}, {first.label} has {base.source!r}; a collection's "
                    "entities must build the same partition key from the same fields"
                )

    @functools.cached_property
    def page_decoder(self) -> PageDecoder | None:
        """The members' page decoder (`singletable.model.pages`), made on first use."""
        return members_page_decoder(self.plans)

    def query(self, **values: Any) -> CollectionQuery:
        """Read the partition given by the partition key fields.

        On a native GSI: every partition part's field, then leading sort parts' fields.
        """
        if not self.key_plans:
            return NativeCollectionQuery(self, values)
        return CollectionQuery(self, values)


class CollectionQuery(BaseQuery["BaseModel"]):
    """A query over one item collection, decoding each item into its own entity class."""

    def __init__(self, collection: Collection, values: Mapping[str, Any]) -> None:
        super().__init__(collection.table)
        self.collection = collection
        self.subject = collection.name
        key_plan = collection.key_plans[0]
        unknown = [
            k for k in values if k not in key_plan.pk.fields and not self._shared_sk_field(k)
        ]
        if unknown:
            raise QueryError(
                f"collection {collection.name!r}: {unknown[0]!r} is not a partition key field "
                f"({', '.join(key_plan.pk.fields)})"
            )
        self.partition = partition_key_text(collection.plans[0], key_plan, values)
        self._values = dict(values)
        self._prefix: str | None = None
        #: The whole shared sort key, when every one of its fields was given.
        self._sk_equals: str | None = None
        self._forward = True
        sk = key_plan.sk
        given = [f for f in (sk.fields if sk else ()) if f in values]
        if sk is not None and given:
            # Shared sort key fields narrow the read like an entity query's: equality on
            # all of them, a segment-boundary prefix on the leading ones.
            if tuple(given) != sk.fields[: len(given)]:
                gap = next(f for f in sk.fields if f not in values)
                raise QueryError(
                    f"collection {collection.name!r}: sort key fields must be given in "
                    f"template order ({sk.source!r}); {given[-1]!r} was given without {gap!r}"
                )
            # A value that cannot be encoded raises KeyEncodeError, as for the partition key.
            if len(given) == len(sk.fields):
                self._sk_equals = sk.format(values)
            else:
                self._prefix = sk.prefix(values, len(given))
            if self._prefix is not None:
                sk.check_size(self._prefix, "the sort key prefix of the given fields")

    def _shared_sk_field(self, name: str) -> bool:
        sources = {kp.sk.source if kp.sk else None for kp in self.collection.key_plans}
        first = self.collection.key_plans[0].sk
        return len(sources) == 1 and first is not None and name in first.fields

    def begins_with(self, **field: str) -> CollectionQuery:
        """Items whose (shared) sort key field starts with a partial value.

        Only for collections whose entities share one sort key template (a file tree's
        folders and files under ``"{path}"``): ``begins_with(path="root/photos/")``.
        """
        if len(field) != 1:
            raise QueryError("begins_with() takes exactly one field=value")
        ((name, partial),) = field.items()
        sk = self.collection.key_plans[0].sk
        if sk is None or not self._shared_sk_field(name) or sk.fields[0] != name:
            raise QueryError(
                f"collection {self.collection.name!r}: begins_with({name}=...) needs every "
                "entity to share one sort key template whose first field is that field"
            )
        if self._prefix is not None or self._sk_equals is not None:
            raise QueryError(
                f"collection {self.collection.name!r}: begins_with({name}=...) cannot be "
                "combined with sort key fields given to query()"
            )
        q = self._copy()
        q._prefix = sk.partial_prefix({}, 0, partial)
        sk.check_size(q._prefix, f"the begins_with({name}=...) prefix")
        return q

    def descending(self) -> CollectionQuery:
        """Read in descending key order."""
        q = self._copy()
        q._forward = False
        return q

    def _index(self) -> str | None:
        return self.collection.index

    def _partition_av(self) -> tuple[str, dict[str, str]] | None:
        key_plan = self.collection.key_plans[0]
        return key_plan.schema.pk, key_plan.pk.attribute_value(self.partition)

    def _request(self, ph: Placeholders) -> dict[str, Any]:
        key_plan = self.collection.key_plans[0]
        schema = key_plan.schema
        parts = [
            render_condition(key_ref(schema.pk) == key_plan.pk.attribute_value(self.partition), ph)
        ]
        if self._sk_equals is not None and schema.sk and key_plan.sk is not None:
            sk_av = key_plan.sk.attribute_value(self._sk_equals)
            parts.append(render_condition(key_ref(schema.sk) == sk_av, ph))
        elif self._prefix and schema.sk:
            parts.append(render_condition(key_ref(schema.sk).begins_with(self._prefix), ph))
        request: dict[str, Any] = {
            "TableName": self.table.name,
            "KeyConditionExpression": " AND ".join(parts),
        }
        if self._index() is not None:
            request["IndexName"] = self._index()
        if not self._forward:
            request["ScanIndexForward"] = False
        return request

    def _identity(self) -> dict[str, Any]:
        return {
            "kind": "collection-query",
            "table": self.table.name,
            "index": self._index(),
            "collection": self.collection.name,
            "partition": self.partition,
            "prefix": self._prefix,
            "sk": self._sk_equals,
            "forward": self._forward,
        }

    def _page_decoder(self) -> Callable[[bytes], dict[str, Any] | None] | None:
        # A member's item of its own version, read whole, is what `decode_any` hands that
        # member's decoder; the page decoder decodes exactly those (`model.pages`).
        return self.collection.page_decoder

    def _decode(self, item: Item) -> BaseModel | None:
        # Only the declared members: any other entity (or version) found in the partition
        # is reported in `unknown`, never returned as if the collection held it.
        name = item.get(self.table.entity_attribute, {}).get("S")
        version = item.get(self.table.version_attribute, {}).get("N")
        if (name, version) not in self.collection.members:
            return None
        return decode_any(self.table, item)

    @overload
    def all(
        self, db: AsyncExecutor, cursor: str | None = None
    ) -> Coroutine[Any, Any, CollectionResult]: ...
    @overload
    def all(self, db: Executor, cursor: str | None = None) -> CollectionResult: ...
    def all(
        self, db: Executor | AsyncExecutor, cursor: str | None = None
    ) -> CollectionResult | Coroutine[Any, Any, CollectionResult]:
        """Every item of the slice, in key order, each decoded into its own class.

        Items of unknown entities are in the result's ``unknown`` (`iter` skips them; use
        `pages` to stream them).
        """
        operation = self.all_operation(cursor)  # validates before db is touched
        return db.execute(operation)

    def all_operation(self, cursor: str | None = None) -> Operation[CollectionResult]:
        """`all` as an operation value (what an executor runs)."""

        def steps() -> Step[CollectionResult]:
            result = CollectionResult()

            def take(page: Page[BaseModel]) -> bool:
                result.extend(page.items)
                result.unknown.extend(page.unknown)
                return True

            yield from consume(self.stream_pages(cursor, cursors=False), take)
            return result

        return Folded(lambda: self.params(cursor), steps)


class NativeCollectionQuery(CollectionQuery):
    """A collection on a native GSI: one partition of it, each item decoded into its class.

    The key condition is a member's `NativeQuery` (equality on every partition part and
    on leading sort parts, the same rules); the results are every member's items.
    """

    def __init__(self, collection: Collection, values: Mapping[str, Any]) -> None:
        BaseQuery.__init__(self, collection.table)
        self.collection = collection
        assert collection.index is not None
        self._key: NativeQuery[BaseModel] = NativeQuery(
            collection.plans[0], values, collection.index
        )
        self._forward = True

    def begins_with(self, **field: str) -> CollectionQuery:
        """Not on a native GSI: give leading sort parts to `Collection.query` instead."""
        raise QueryError(
            f"collection {self.collection.name!r} is on native GSI {self.collection.index!r}: "
            "give the sort parts' values to query(), left to right"
        )

    def _partition_av(self) -> tuple[str, dict[str, str]] | None:
        return None

    def _partition_avs(self) -> list[tuple[str, dict[str, str]]]:
        return self._key._partition_avs()

    def _request(self, ph: Placeholders) -> dict[str, Any]:
        key = self._key if self._forward else self._key.descending()
        request = key._request(ph)
        return request

    def _identity(self) -> dict[str, Any]:
        return {
            **self._key._identity(),
            "kind": "collection-query",
            "collection": self.collection.name,
            "entity": None,
            "forward": self._forward,
        }
