"""Entity queries on a native GSI: key conditions on the parts' own attributes.

A native (multi-attribute) GSI key is the entity's own fields, so a query's key condition
is made of their stored values, not of key text:

* equality on every partition part (DynamoDB hashes them together);
* equality on leading sort parts, left to right with no gap;
* at most one condition (``between``, ``gt``, ``ge``, ``lt``, ``le``, ``begins_with`` on a
  string part) on the sort part right after the last one given.

Anything else is refused before a request is built, naming the rule. `NativeQuery` is an
`EntityQuery` with the same fluent API and terminals (cursors, ``count``, ``params``,
async and lean executors alike); only the key condition and the key attributes differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from singletable.attributes.size import attribute_value_size
from singletable.errors import ItemEncodeError, KeyTooLargeError, QueryError
from singletable.expressions.conditions import Condition, render_condition
from singletable.expressions.paths import Placeholders
from singletable.expressions.projections import render_projection
from singletable.keys.templates import MAX_SORT_KEY_BYTES
from singletable.model.plan import NativeKeyPlan, NativePart, entity_plans
from singletable.operations.bounds import KeyCondition
from singletable.operations.common import key_ref
from singletable.operations.query import EntityQuery, sort_condition
from singletable.types import AttributeValue

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan

__all__ = ["NativeQuery", "native_plan"]

E = TypeVar("E", bound=BaseModel)


def native_plan(plan: EntityPlan, index: str) -> NativeKeyPlan:
    """How ``plan``'s entity feeds native GSI ``index``; refused if it does not store every part.

    Raises:
        QueryError: The entity lacks a field for one of the index's parts.
    """
    native = plan.native_indexes.get(index)
    if native is not None:
        return native
    spec = plan.table.native_indexes[index]
    stored = {f.attribute for f in plan.fields.values()}
    missing = [p.attribute for p in spec.parts if p.attribute not in stored]
    raise QueryError(
        f"{plan.label} is not in native GSI {index!r}: it stores no attribute "
        f"{missing[0]!r} (the index's parts: {', '.join(p.attribute for p in spec.parts)})"
    )


def _dynamodb_order(av: AttributeValue) -> Any:
    """A key value as DynamoDB orders it: numbers by value, strings and binary by bytes."""
    ((kind, value),) = av.items()
    if kind == "N":
        return Decimal(value)
    return value.encode("utf-8") if kind == "S" else bytes(value)


class NativeQuery(EntityQuery[E]):
    """A query for one entity type in one partition of a native GSI.

    Build it with ``Entity.query(index="ByArea", tenant="t1", region="eu", day=12)``:
    every partition part's field, then leading sort parts' fields.
    """

    def __init__(self, plan: EntityPlan, values: Mapping[str, Any], index: str) -> None:
        # EntityQuery's constructor works out template keys; a native key has none.
        super(EntityQuery, self).__init__(plan.table)
        self.plan = plan
        self.native = native_plan(plan, index)
        self._values = dict(values)
        fields = self.native.fields
        unknown = [k for k in values if k not in fields]
        if unknown:
            raise QueryError(
                f"{plan.label}: {unknown[0]!r} is not a part of native GSI {index!r} "
                f"(parts in order: {', '.join(fields)}); use filter() for other fields"
            )
        missing = [p.field for p in self.native.pk if p.field not in values]
        if missing:
            raise QueryError(
                f"{plan.label}: a query on native GSI {index!r} needs equality on every "
                f"partition part ({', '.join(p.field for p in self.native.pk)}); "
                f"{missing[0]!r} is missing"
            )
        self._eq_count = 0
        for part in self.native.sk:
            if part.field not in values:
                break
            self._eq_count += 1
        given_sk = [p.field for p in self.native.sk if p.field in values]
        if len(given_sk) != self._eq_count:
            raise QueryError(
                f"{plan.label}: sort parts of native GSI {index!r} are given left to right "
                f"with no gap ({', '.join(p.field for p in self.native.sk)}); "
                f"{given_sk[-1]!r} was given without {self.native.sk[self._eq_count].field!r}"
            )
        # Encoded now, so a bad value is refused where it is given.
        self._equalities = [
            (part, self._encode(part, values[part.field], "equality"))
            for part in self.native.parts
            if part.field in values
        ]
        self._range_avs: tuple[AttributeValue, ...] = ()
        self._range = None
        self._forward = True
        self._projection = None
        self._counting = False
        self._needs_filter_cache = None

    def _encode(self, part: NativePart, value: Any, what: str) -> AttributeValue:
        label = f"{self.plan.label}: {what} on {part.field!r}"
        if value is None:
            raise QueryError(
                f"{label}: None is never in a native GSI (an item without the attribute is "
                "left out of it); query another index or scan with a filter"
            )
        try:
            value = self.plan.validate_field(part.field, value)
            av = self.plan.fields[part.field].codec.to_av(value)
        except ItemEncodeError as exc:
            raise QueryError(f"{label}: {exc}") from None
        if av is None or part.type not in av:
            raise QueryError(f"{label}: {value!r} is not stored as a {part.type} key value")
        if part.type != "N" and not av[part.type]:
            raise QueryError(
                f"{label}: DynamoDB refuses an empty key value (no item in the index holds one)"
            )
        size = attribute_value_size(av)
        if size > MAX_SORT_KEY_BYTES and part in self.native.sk:
            # DynamoDB Local 3.3.0 refuses it ("Aggregated size of all range keys has
            # exceeded the size limit"); no stored sort part is that large.
            raise KeyTooLargeError(
                f"{label}: the value is {size} bytes; DynamoDB's limit for a sort key value "
                f"is {MAX_SORT_KEY_BYTES} bytes",
                size=size,
                limit=MAX_SORT_KEY_BYTES,
            )
        return av

    # -- the one range condition ---------------------------------------------------------

    def _next_field(self, op: str, kwargs: Mapping[str, Any]) -> tuple[str, Any]:
        index = self.native.index
        if len(kwargs) != 1:
            raise QueryError(f"{op}() takes exactly one field=value, got {sorted(kwargs)}")
        ((name, value),) = kwargs.items()
        if self._range is not None:
            raise QueryError(
                f"{self.plan.label}: only one sort part condition per query on native GSI "
                f"{index!r} (already {self._range[0]}); use filter() for more"
            )
        if self._eq_count >= len(self.native.sk):
            what = "has no sort key" if not self.native.sk else "has every sort part fixed"
            raise QueryError(
                f"{self.plan.label}: native GSI {index!r} {what}; {op}() has nothing to range over"
            )
        expected = self.native.sk[self._eq_count]
        if name != expected.field:
            given = ", ".join(p.field for p in self.native.sk[: self._eq_count]) or "none"
            raise QueryError(
                f"{self.plan.label}: {op}() must be on {expected.field!r}, the sort part of "
                f"native GSI {index!r} right after the ones given ({given}): a condition goes "
                f"on the last sort part given, left to right with no gap; got {name!r}"
            )
        if op == "begins_with" and expected.type != "S":
            raise QueryError(
                f"{self.plan.label}: begins_with({name}=...) needs a string sort part; "
                f"{expected.attribute!r} is {expected.type}"
            )
        return name, value

    def _with_range(self, op: str, value: tuple[Any, ...]) -> EntityQuery[E]:
        part = self.native.sk[self._eq_count]
        args = value[1:]
        if op == "begins_with":
            if not isinstance(args[0], str) or not args[0]:
                raise QueryError(
                    f"{self.plan.label}: begins_with({part.field}=...) takes a non-empty str"
                )
            avs: tuple[AttributeValue, ...] = ({"S": args[0]},)
        else:
            avs = tuple(self._encode(part, v, f"{op}()") for v in args)
        if op == "between" and _dynamodb_order(avs[0]) > _dynamodb_order(avs[1]):
            raise QueryError(
                f"{self.plan.label}: between({part.field}=...): the low bound {args[0]!r} is "
                f"above the high bound {args[1]!r}"
            )
        q = self._copy()
        q._range = (op, value)
        q._range_avs = avs
        return q

    # -- what EntityQuery asks of its key ----------------------------------------------------

    def _key_condition(self) -> KeyCondition | None:
        # No key text: the conditions are on the parts' values (`_request`).
        return None

    def _needs_type_filter(self) -> bool:
        # Every entity that stores the parts is in the index, in any partition.
        return any(
            self.native.index in other.native_indexes
            for other in entity_plans(self.table)
            if other is not self.plan
        )

    def _excluded_key(self) -> str | None:
        return None

    def _index(self) -> str | None:
        return self.native.index

    def _keys_only(self) -> bool:
        return self.native.spec.projection.type == "KEYS_ONLY"

    def _index_noun(self) -> str:
        return f"native GSI {self._index()!r}"

    def _index_key_fields(self) -> Iterable[str]:
        return self.native.fields

    def _why_others_share_it(self) -> str:
        return "other entities store its parts"

    def _request(self, ph: Placeholders) -> dict[str, Any]:
        self._check_keys_only()
        conditions: list[Condition] = [
            key_ref(part.attribute) == av for part, av in self._equalities
        ]
        if self._range is not None:
            part = self.native.sk[self._eq_count]
            op = self._range[0]
            # begins_with takes the text itself; the other operators take the values.
            avs: list[object] = [av["S"] if op == "begins_with" else av for av in self._range_avs]
            conditions.append(sort_condition(key_ref(part.attribute), op, avs))
        request: dict[str, Any] = {
            "TableName": self.table.name,
            "IndexName": self.native.index,
            "KeyConditionExpression": " AND ".join(render_condition(c, ph) for c in conditions),
        }
        if not self._forward:
            request["ScanIndexForward"] = False
        if self._projection is not None and not self._keys_only() and not self._counting:
            attrs = [self.plan.fields[f].attribute for f in self._projection]
            request["ProjectionExpression"] = render_projection(
                list(dict.fromkeys([*attrs, *self._key_attributes(), self.table.entity_attribute])),
                ph,
            )
        return request

    def _start_key_attributes(self) -> list[str]:
        return self._key_attributes()

    # -- cursors: the start key is in this query's partition

    def _partition_av(self) -> tuple[str, dict[str, str]] | None:
        return None

    def _partition_avs(self) -> list[tuple[str, dict[str, str]]]:
        return [(p.attribute, av) for p, av in self._equalities if p in self.native.pk]

    def _identity(self) -> dict[str, Any]:
        return {
            "kind": "entity-query",
            "table": self.table.name,
            "index": self._index(),
            "entity": [self.plan.name, self.plan.version],
            "partition": [repr(av) for p, av in self._equalities if p in self.native.pk],
            "sk": [repr(av) for p, av in self._equalities if p not in self.native.pk],
            "range": None if self._range is None else [self._range[0], *map(repr, self._range_avs)],
            "forward": self._forward,
            "projection": self._projection,
        }

    def _count_request(self) -> dict[str, Any]:
        counting = self._copy()
        counting._counting = True
        request = counting.params()
        request.pop("Limit", None)
        request["Select"] = "COUNT"
        return request
