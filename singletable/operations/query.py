"""Entity queries: one entity type in one partition, on the table or an index.

A query is built fluently and is pure until it is run: `EntityQuery.params` shows the exact
request. Sort-key conditions are expressed on the typed fields of the sort-key template
and become *key conditions* whose bounds end on segment boundaries (see `bounds`); when
other entity types can have keys in the range read, a filter on the entity attribute
keeps them out of the results.

Running goes through an executor (`singletable.Connection`, or `singletable.AsyncConnection`
with the same calls awaited): a query is a *sans-I/O* generator (`reads.BaseQuery`) that
yields `Call` requests and `Emit` results, so results stream lazily and memory stays flat
however large the partition is.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, overload

from pydantic import BaseModel

from singletable.errors import ExpressionError, QueryError
from singletable.expressions.conditions import Condition, render_condition
from singletable.expressions.fields import FieldRef
from singletable.expressions.paths import Placeholders
from singletable.expressions.projections import render_projection
from singletable.keys.ranges import can_produce_key_in
from singletable.model.pages import page_decoder
from singletable.model.plan import entity_plans
from singletable.operations.bounds import (
    KeyCondition,
    SortRange,
    partition_key_text,
    sort_key_condition,
)
from singletable.operations.common import key_ref
from singletable.operations.protocol import AsyncExecutor, Call, Executor, Operation, Step
from singletable.operations.reads import BaseQuery, same_version
from singletable.operations.stream import Emit, Folded, Stream, consume
from singletable.types import Item

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan

E = TypeVar("E", bound=BaseModel)


def sort_condition(ref: FieldRef[Any], op: str, values: list[object]) -> Condition:
    """The key condition ``op`` on ``ref`` with its operands (a begins_with takes text)."""
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
        self.subject = plan.name
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
        self._range: SortRange | None = None
        self._forward = True
        self._projection: tuple[str, ...] | None = None
        #: Set on the copy that count() sends: it reads no attributes, so neither a
        #: projection nor a KEYS_ONLY index's missing fields matter.
        self._counting = False
        #: (the range it was worked out for, `_needs_type_filter`): see `_type_filtered`.
        self._needs_filter_cache: tuple[object, bool] | None = None
        #: (the range it was worked out for, `_key_condition`).
        self._key_condition_cache: tuple[object, KeyCondition | None] | None = None
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

    def _key_condition(self) -> KeyCondition | None:
        """The sort key condition sent (see `sort_key_condition`), once per query value.

        Only the range changes from one query value to the next (the key values are
        given once, to the constructor), and building a request asks for the condition
        three times (benchmarks/README.md, "Building operations").
        """
        cached = self._key_condition_cache
        if cached is None or cached[0] is not self._range:
            condition = sort_key_condition(
                self.plan.label, self.key_plan.sk, self._values, self._eq_count, self._range
            )
            cached = self._key_condition_cache = (self._range, condition)
        return cached[1]

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

    def _index_noun(self) -> str:
        """How messages name the index read (a native GSI says so)."""
        return f"index {self._index()!r}"

    def _index_key_fields(self) -> Iterable[str]:
        """The fields the index's own key holds (a KEYS_ONLY item carries them)."""
        return self.key_plan.fields

    def _why_others_share_it(self) -> str:
        """Why other entities' items can be in the range read (for the KEYS_ONLY refusal)."""
        return "other entity types can have keys in this range"

    def _check_keys_only(self) -> None:
        """Refuse, before sending, a KEYS_ONLY read that cannot give what was asked."""
        if not self._keys_only():
            return
        if self._needs_type_filter():
            # The type filter reads the entity attribute, which a KEYS_ONLY index does not
            # copy: DynamoDB would drop every item and the query would silently be empty.
            raise QueryError(
                f"{self.plan.label}: {self._index_noun()} projects KEYS_ONLY and "
                f"{self._why_others_share_it()}, so its items cannot be told apart (the "
                f"entity attribute {self.table.entity_attribute!r} is not in the index); "
                "give the index an INCLUDE or ALL projection, which carries it"
            )
        if self._counting:
            return
        recoverable = {*self.plan.primary.fields, *self._index_key_fields()}
        wanted = self._projection if self._projection is not None else tuple(self.plan.fields)
        lost = [f for f in wanted if f not in recoverable]
        if lost:
            raise QueryError(
                f"{self.plan.label}: {self._index_noun()} projects KEYS_ONLY, so field "
                f"{lost[0]!r} is not in its items; use .project(...) with key fields only "
                f"({', '.join(sorted(recoverable))}), then read full items by key"
            )

    def _request(self, ph: Placeholders) -> dict[str, Any]:
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
            parts.append(render_condition(sort_condition(ref, condition.op, avs), ph))
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

    def _page_decoder(self) -> Callable[[bytes], dict[str, Any] | None] | None:
        # An item of the plan's version, read whole, is what `_item_decoder` hands the
        # plan's decoder; the page decoder decodes exactly those (`model.pages`).
        return None if self._projection is not None else page_decoder(self.plan)

    def _item_decoder(self) -> Callable[[Item], Any]:
        """`_decode` with the common case first: an item this entity's version wrote, read whole.

        Two dict lookups decide it and the plan's generated decoder gets the item; every
        other item (another entity, another version, no identifier, a projection) takes
        `_decode`. Equal to `_decode` item for item; it spares three calls an item (4.4%
        of a 1,000-item lean query's instructions, callgrind; benchmarks/README.md).
        """
        if self._projection is not None:
            return self._decode
        plan, slow = self.plan, self._decode
        entity, version = self.table.entity_attribute, self.table.version_attribute
        name, number = plan.name, str(plan.version)

        def decode(item: Item) -> Any:
            et = item.get(entity)
            if et is not None and et.get("S") == name:
                ev = item.get(version)
                if ev is None or ev.get("N") == number:
                    # (The decoder is looked up per item: it replaces itself on first use.)
                    return plan._item_decoder(item)
            return slow(item)

        return decode

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
            response = yield Call("query", request, subject=self.subject)
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
