"""What the browser shows, computed from the compiled plans: pure, no I/O, no web framework.

Every list on a page comes from a plan: the tables' registered `EntityPlan`s, their
`KeyPlan`s and key templates, the `Collection`s declared next to the entities, the lint
and the migration planner. Nothing here keeps its own list of entities or fields.

Form values arrive as text and are validated as the model's fields validate them
(`EntityPlan.validate_field`), so a query built from a form is exactly the query the
API would build from typed values.
"""

from __future__ import annotations

import json
import re
import sys
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

from singletable.attributes.size import MAX_NESTING
from singletable.entity import Entity
from singletable.errors import ItemEncodeError, QueryError, SingleTableError
from singletable.keys.templates import FieldSegment, KeyTemplate
from singletable.model.plan import EntityPlan, FieldPlan, KeyPlan, entity_plans, native_key_types
from singletable.model.table import GSI, KeyPart, Table
from singletable.operations.collection import Collection, CollectionQuery
from singletable.operations.query import EntityQuery
from singletable.tooling.cost.lint import lint_model
from singletable.types import Item

__all__ = [
    "OPERATORS",
    "Cell",
    "Column",
    "FormField",
    "InputError",
    "Row",
    "Source",
    "build_query",
    "collections_of",
    "display",
    "model_overview",
    "rows_from_items",
    "sources",
]

#: Sort-key conditions an entity query takes, as the form offers them.
OPERATORS: dict[str, str] = {
    "": "no condition",
    "between": "between (inclusive)",
    "gt": ">",
    "ge": ">=",
    "lt": "<",
    "le": "<=",
    "begins_with": "begins_with",
}

#: Results per page when the form does not say.
DEFAULT_PAGE_SIZE = 10
MAX_PAGE_SIZE = 200

_SCALAR_TYPES = frozenset({"S", "N", "B", "BOOL", "NULL"})
# A form value nested deeper than DynamoDB stores (`MAX_NESTING` below the item) is refused
# before it is parsed: Python's JSON parser and pydantic recurse, and a value thousands of
# levels deep would exhaust the stack instead of naming the field.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")
_EXAMPLE_TIME = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)


class InputError(QueryError):
    """A browser form value that does not fit its field (names the field and the rule)."""


# -- sources: what can be queried -----------------------------------------------------


@dataclass(frozen=True)
class FormField:
    """One typed input of a query form, derived from a key template segment."""

    name: str
    type_label: str
    input_type: str
    choices: tuple[str, ...] = ()
    placeholder: str = ""


@dataclass(frozen=True)
class Source:
    """A queryable partition shape: one entity on the table or an index, or a collection."""

    id: str
    label: str
    table: Table
    index: str | None
    plans: tuple[EntityPlan, ...]
    key_plan: KeyPlan
    collection: Collection | None = None

    @property
    def kind(self) -> str:
        """``"entity"`` or ``"collection"``."""
        return "entity" if self.collection is None else "collection"

    @property
    def pk_fields(self) -> tuple[FormField, ...]:
        """Inputs for the partition key template's fields."""
        return tuple(_form_field(self.plans[0], s) for s in _field_segments(self.key_plan.pk))

    @property
    def sk_fields(self) -> tuple[FormField, ...]:
        """Inputs for the sort key fields a condition can use (a collection: shared ones)."""
        sk = self.shared_sk
        return (
            () if sk is None else tuple(_form_field(self.plans[0], s) for s in _field_segments(sk))
        )

    @property
    def shared_sk(self) -> KeyTemplate | None:
        """The sort key template every entity of the source builds, if they share one."""
        sks = [self._key_plan(p).sk for p in self.plans]
        first = sks[0]
        if first is None or any(s is None or s.source != first.source for s in sks):
            return None
        return first

    @property
    def operators(self) -> dict[str, str]:
        """The sort-key conditions this source supports."""
        if self.shared_sk is None:
            return {"": OPERATORS[""]}
        if self.collection is not None:
            return {"": OPERATORS[""], "begins_with": OPERATORS["begins_with"]}
        return dict(OPERATORS)

    def _key_plan(self, plan: EntityPlan) -> KeyPlan:
        return plan.key_plan(self.index)

    def describe_keys(self) -> list[tuple[str, str, str | None]]:
        """``(entity, pk template, sk template)`` for every entity of the source."""
        result = []
        for plan in self.plans:
            kp = self._key_plan(plan)
            result.append((plan.name, kp.pk.source, kp.sk.source if kp.sk else None))
        return result


def _field_segments(template: KeyTemplate) -> list[FieldSegment]:
    return [s for s in template.segments if isinstance(s, FieldSegment)]


def _type_label(annotation: Any) -> str:
    name = getattr(annotation, "__name__", None)
    if name is not None and not getattr(annotation, "__args__", None):
        return str(name)
    return str(annotation).replace("typing.", "").replace("datetime.", "")


def _form_field(plan: EntityPlan, segment: FieldSegment) -> FormField:
    params = segment.codec.params()
    kind = str(params.get("kind"))
    type_label = _type_label(plan.fields[segment.name].annotation)
    if kind in ("enum", "literal"):
        return FormField(
            segment.name, type_label, "select", tuple(str(v) for v in params["values"])
        )
    if kind == "bool":
        return FormField(segment.name, type_label, "select", ("true", "false"))
    placeholder = {
        "datetime": "2026-06-23T08:00:00Z",
        "date": "2026-06-23",
        "int": "integer",
        "fixed_int": "integer",
        "decimal": "decimal, e.g. -4.25",
        "float": "number",
        "uuid": "UUID",
    }.get(kind, "text")
    return FormField(
        segment.name, type_label, "date" if kind == "date" else "text", (), placeholder
    )


def collections_of(tables: Sequence[Table], modules: Iterable[object] = ()) -> list[Collection]:
    """The `Collection` objects on ``tables`` declared in the entities' modules (and ``modules``).

    Collections are plain module-level values next to the entity classes, so the modules
    that define the registered entities are where they are found.
    """
    table_ids = {id(t) for t in tables}
    seen: dict[int, Collection] = {}
    names = {p.model.__module__ for t in tables for p in entity_plans(t)}
    scanned = [sys.modules[n] for n in sorted(names) if n in sys.modules]
    for module in [*scanned, *modules]:
        for value in vars(module).values():
            if isinstance(value, Collection) and id(value.table) in table_ids:
                seen.setdefault(id(value), value)
    return list(seen.values())


def sources(tables: Sequence[Table], collections: Sequence[Collection] = ()) -> list[Source]:
    """Every queryable source, in table and registration order.

    Each entity on the table and on each index it feeds, then each collection; ids are
    unique.
    """
    result: list[Source] = []
    for table in tables:
        for plan in entity_plans(table):
            for key_plan in (plan.primary, *plan.indexes.values()):
                where = "" if key_plan.index is None else f" on {key_plan.index}"
                ident = f"{table.name}/{plan.name}@{plan.version}"
                if key_plan.index is not None:
                    ident += f"/{key_plan.index}"
                result.append(
                    Source(
                        id=ident,
                        label=f"{plan.name}{where}",
                        table=table,
                        index=key_plan.index,
                        plans=(plan,),
                        key_plan=key_plan,
                    )
                )
    names: set[str] = set()
    for collection in collections:
        ident = f"{collection.table.name}/collection/{collection.name}"
        while ident in names:
            ident += "_"
        names.add(ident)
        where = "" if collection.index is None else f" on {collection.index}"
        result.append(
            Source(
                id=ident,
                label=f"collection {collection.name}{where}",
                table=collection.table,
                index=collection.index,
                plans=tuple(collection.plans),
                key_plan=collection.key_plans[0],
                collection=collection,
            )
        )
    return result


# -- forms -> queries -----------------------------------------------------------------


def _parse_value(plan: EntityPlan, name: str, text: str, *, partial: bool = False) -> Any:
    """A form value validated as the model field ``name`` (a partial prefix stays text)."""
    if partial:
        return text
    try:
        return plan.validate_field(name, text)
    except ItemEncodeError as exc:
        raise InputError(str(exc)) from None


def _page_size(form: Mapping[str, str]) -> int:
    text = form.get("limit", "").strip() or str(DEFAULT_PAGE_SIZE)
    try:
        size = int(text)
    except ValueError:
        raise InputError(f"page size: not an integer: {text!r}") from None
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise InputError(f"page size must be between 1 and {MAX_PAGE_SIZE}, got {size}")
    return size


def build_query(
    source: Source, form: Mapping[str, str], *, descending: bool = False
) -> EntityQuery[Any] | CollectionQuery:
    """The query a filled-in form describes, with the API's own builders.

    Form keys: ``pk.<field>`` for every partition key field (required), ``eq.<field>``
    for leading sort key fields (optional, in template order), ``op`` with ``v1``/``v2``
    for a condition on the next sort key field, ``limit`` for the page size.

    Raises:
        InputError: A value does not validate, or a partition key field is missing.
        QueryError: The query API refuses the combination (named as it says).
    """
    plan = source.plans[0]
    values: dict[str, Any] = {}
    for ff in source.pk_fields:
        text = form.get(f"pk.{ff.name}", "")
        if text == "":
            raise InputError(f"partition key field {ff.name!r} ({ff.type_label}) is required")
        values[ff.name] = _parse_value(plan, ff.name, text)
    sk_fields = [ff.name for ff in source.sk_fields]
    for name in sk_fields:
        text = form.get(f"eq.{name}", "")
        if text != "":
            values[name] = _parse_value(plan, name, text)
    op = form.get("op", "")
    if op not in source.operators:
        raise InputError(f"{source.label}: sort key condition {op!r} is not offered here")
    # The condition applies to the first sort key field not fixed by equality.
    free = [n for n in sk_fields if n not in values]
    size = _page_size(form)
    query: EntityQuery[Any] | CollectionQuery
    if source.collection is not None:
        collection_query = source.collection.query(**values)
        if op == "begins_with":
            if not free:
                raise InputError("begins_with: every sort key field is already given")
            collection_query = collection_query.begins_with(**{free[0]: form.get("v1", "")})
        query = collection_query
    else:
        entity_query: EntityQuery[Any] = EntityQuery(plan, values, source.index)
        if op:
            if not free:
                raise InputError(f"{op}: every sort key field is already given by equality")
            name = free[0]
            v1 = _parse_value(plan, name, form.get("v1", ""), partial=op == "begins_with")
            if op == "between":
                v2 = _parse_value(plan, name, form.get("v2", ""))
                entity_query = entity_query.between(**{name: (v1, v2)})
            else:
                entity_query = getattr(entity_query, op)(**{name: v1})
        query = entity_query
    query = query.limit(size).capacity("TOTAL")
    return query.descending() if descending else query


# -- rows -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One field of a source's legend: its name and its type on each entity that has it.

    The result rows list each entity's own fields; the legend above them gives the types
    once for the whole source.
    """

    name: str
    types: tuple[tuple[str, str], ...]

    @property
    def type_label(self) -> str:
        """``"datetime"`` or ``"AuditEvent: int, Other: str"`` when the types differ."""
        labels = {t for _, t in self.types}
        if len(labels) == 1:
            return labels.pop()
        return ", ".join(f"{e}: {t}" for e, t in self.types)


@dataclass(frozen=True)
class Cell:
    """One field of a result row: its name, its type on the row's entity, its value as text.

    ``missing`` marks ``None``: the row shows the field, dimmed, rather than leave it out.
    """

    name: str
    type_label: str
    text: str
    missing: bool = False


@dataclass
class Row:
    """One item of a result, in key order; ``entity`` is ``None`` for an unknown item.

    ``cells`` are the row's own entity's fields (a collection row never carries another
    entity's columns), partition key fields left out (they are fixed for the page).
    """

    position: int
    sort_key: str
    partition_key: str
    entity: str | None
    cells: list[Cell]
    raw: str = ""
    #: Why an unknown item is unknown (the identifier it carries).
    note: str = ""
    item_query: dict[str, str] = field(default_factory=dict)


def columns_for(source: Source) -> list[Column]:
    """The union of the entities' fields (the legend), partition key fields left out."""
    pk = {ff.name for ff in source.pk_fields}
    types: dict[str, list[tuple[str, str]]] = {}
    for plan in source.plans:
        for name, fp in plan.fields.items():
            if name not in pk:
                types.setdefault(name, []).append((plan.name, _type_label(fp.annotation)))
    return [Column(name, tuple(t)) for name, t in types.items()]


def display(value: Any) -> str:
    """A field value as plain text (escaped later by the template engine, never here)."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (date, Decimal, uuid.UUID)):
        return str(value)
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        data = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return json.dumps(data, default=str, ensure_ascii=False, sort_keys=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "value") and hasattr(type(value), "__members__"):  # an Enum member
        return str(value.value)
    return str(value)


def _key_text(av: Mapping[str, Any] | None) -> str:
    if not av:
        return ""
    ((_, value),) = av.items()
    return str(value)


def in_key_order(
    source: Source,
    decoded: Sequence[Any],
    unknown: Sequence[Item],
    read: Sequence[Item],
) -> list[Any]:
    """The decoded results and the unknown items merged back into the order DynamoDB read them.

    ``read`` is every item the responses held, in order; ``unknown`` holds some of those
    very objects. An item read but neither decoded nor unknown (the exact key a strict
    ``<`` reads and drops, items past the limit) is left out.
    """
    schema = source.key_plan.schema
    attributes = [a for a in (schema.pk, schema.sk) if a is not None]
    unknown_ids = {id(u) for u in unknown}
    pending = list(decoded)
    result: list[Any] = []
    for item in read:
        if id(item) in unknown_ids:
            result.append(item)
            continue
        if not pending:
            continue
        stored = pending[0].plan().to_item(pending[0])
        if all(_same_key(stored.get(a), item.get(a)) for a in attributes):
            result.append(pending.pop(0))
    # Should the keys ever fail to line up, show the rest rather than hide it.
    result.extend(pending)
    return result


def _same_key(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    if a == b:
        return True
    if a and b and "N" in a and "N" in b:
        return bool(Decimal(a["N"]) == Decimal(b["N"]))
    return False


def raw_json(item: Mapping[str, Any]) -> str:
    """A low-level item as indented JSON (for unknown items and the request panes)."""
    return json.dumps(item, indent=2, default=str, ensure_ascii=False, sort_keys=True)


def rows_from_items(source: Source, items: Sequence[Entity | Item], start: int = 0) -> list[Row]:
    """Result rows in the order given: decoded entities, and raw items marked unknown."""
    schema = source.key_plan.schema
    fixed = {ff.name for ff in source.pk_fields}
    rows: list[Row] = []
    for offset, value in enumerate(items):
        position = start + offset + 1
        if isinstance(value, Entity):
            plan = value.plan()
            item = plan.to_item(value)
            values = value.__dict__
            cells = [
                Cell(
                    name,
                    _type_label(fp.annotation),
                    "" if values[name] is None else display(values[name]),
                    values[name] is None,
                )
                for name, fp in plan.fields.items()
                if name not in fixed
            ]
            key_query = {f"k.{f}": display(values[f]) for f in plan.primary.fields}
            rows.append(
                Row(
                    position,
                    _key_text(item.get(schema.sk)) if schema.sk else "",
                    _key_text(item.get(schema.pk)),
                    plan.name,
                    cells,
                    item_query={"entity": f"{plan.table.name}/{plan.name}@{plan.version}"}
                    | key_query,
                )
            )
        else:
            rows.append(
                Row(
                    position,
                    _key_text(value.get(schema.sk)) if schema.sk else "",
                    _key_text(value.get(schema.pk)),
                    None,
                    [],
                    raw=raw_json(value),
                    note=unknown_label(source.table, value),
                )
            )
    return rows


def unknown_label(table: Table, item: Mapping[str, Any]) -> str:
    """How an unknown item is named: the identifier it carries, or that it has none."""
    name = item.get(table.entity_attribute, {}).get("S")
    version = item.get(table.version_attribute, {}).get("N")
    if name is None:
        return f"unknown: no {table.entity_attribute!r} attribute"
    return f"unknown: {name}@{version} is declared by no class on {table.name!r}"


# -- the model page -------------------------------------------------------------------


def _example_value(plan: EntityPlan, name: str, segment: FieldSegment) -> Any:
    params = segment.codec.params()
    kind = params.get("kind")
    if kind in ("enum", "literal"):
        first = params["values"][0]
        enum_cls = getattr(segment.codec, "enum_cls", None)
        return enum_cls(first) if enum_cls is not None else first
    examples: dict[str, Any] = {
        "str": f"{name}-1",
        "int": 42,
        "fixed_int": 42,
        "decimal": Decimal("-4.25"),
        "float": 21.5,
        "bool": True,
        "datetime": _EXAMPLE_TIME,
        "date": _EXAMPLE_TIME.date(),
        "uuid": uuid.UUID(int=1),
    }
    return examples.get(str(kind), f"{name}-1")


def example_key(plan: EntityPlan, template: KeyTemplate) -> str:
    """The key a template builds from one example value per field (shows its encoding)."""
    values = {s.name: _example_value(plan, s.name, s) for s in _field_segments(template)}
    try:
        return template.format(values)
    except SingleTableError as exc:
        return f"(no example: {exc})"


def _field_row(fp: FieldPlan, plan: EntityPlan) -> dict[str, Any]:
    roles = []
    for kp in (plan.primary, *plan.indexes.values()):
        if fp.name in kp.fields:
            roles.append(kp.index or "table key")
    return {
        "name": fp.name,
        "type": _type_label(fp.annotation),
        "stored": fp.codec.params().get("type", ""),
        "required": fp.required,
        "keys": roles,
        "version": fp.name == plan.version_field,
    }


def model_overview(tables: Sequence[Table], all_sources: Sequence[Source]) -> list[dict[str, Any]]:
    """The model page's data, per table.

    Keys, indexes and who feeds them, entities with their templates and example keys,
    collections and hot-partition lint warnings.
    """
    pages = []
    for table in tables:
        plans = list(entity_plans(table))
        pages.append(
            {
                "name": table.name,
                "pk": table.pk,
                "sk": table.sk,
                "delimiter": table.delimiter,
                "indexes": [_index_row(table, name, plans) for name in table.indexes]
                + [_native_row(table, name, plans) for name in table.native_indexes],
                "entities": [_entity_row(table, plan) for plan in plans],
                "collections": [
                    {
                        "name": s.collection.name,
                        "index": s.index,
                        "entities": [p.name for p in s.plans],
                        "pk": s.key_plan.pk.source,
                        "sk": s.shared_sk.source if s.shared_sk else None,
                        "source": s.id,
                    }
                    for s in all_sources
                    if s.collection is not None and s.table is table
                ],
                "lint": [w.message() for w in lint_model([table])],
            }
        )
    return pages


def _index_row(table: Table, name: str, plans: Sequence[EntityPlan]) -> dict[str, Any]:
    """One index of the model page: its keys, projection and the entities that feed it."""
    spec = table.indexes[name]
    schema = table.key_schema(name)
    feeders = []
    for p in plans:
        if name in p.indexes:
            sk = p.indexes[name].sk
            feeders.append((p.name, p.indexes[name].pk.source, sk.source if sk else None))
    return {
        "name": name,
        "kind": "GSI" if isinstance(spec, GSI) else "LSI",
        "pk": schema.pk,
        "sk": schema.sk,
        "projection": spec.projection.type
        + (f" {', '.join(spec.projection.attributes)}" if spec.projection.attributes else ""),
        "entities": feeders,
    }


def _native_row(table: Table, name: str, plans: Sequence[EntityPlan]) -> dict[str, Any]:
    """A native GSI of the model page: its typed parts, and who is in it and when not."""
    spec = table.native_indexes[name]
    types = native_key_types(table, unknown_ok=True)

    def parts(role: Sequence[KeyPart]) -> str:
        return ", ".join(f"{p.attribute} ({types.get(p.attribute, '?')})" for p in role)

    feeders = []
    for p in plans:
        native = p.native_indexes.get(name)
        if native is not None:
            optional = sorted(native.optional_fields)
            when = f"out while {' or '.join(optional)} is None" if optional else "always in it"
            feeders.append((p.name, when, None))
    return {
        "name": name,
        "kind": "native GSI",
        "pk": parts(spec.pk),
        "sk": parts(spec.sk) or None,
        "projection": spec.projection.type
        + (f" {', '.join(spec.projection.attributes)}" if spec.projection.attributes else ""),
        "entities": feeders,
    }


def _entity_row(table: Table, plan: EntityPlan) -> dict[str, Any]:
    """One entity of the model page: its key templates with example keys, its fields."""
    keys = []
    for kp in (plan.primary, *plan.indexes.values()):
        keys.append(
            {
                "index": kp.index or "table",
                "pk_attribute": kp.schema.pk,
                "pk": kp.pk.source,
                "pk_example": example_key(plan, kp.pk),
                "sk_attribute": kp.schema.sk,
                "sk": kp.sk.source if kp.sk else None,
                "sk_example": example_key(plan, kp.sk) if kp.sk else None,
                "sparse": sorted(kp.optional_fields),
            }
        )
    return {
        "name": plan.name,
        "version": plan.version,
        "cls": f"{plan.model.__module__}.{plan.model.__qualname__}",
        "doc": (plan.model.__doc__ or "").strip().split("\n")[0],
        "keys": keys,
        "fields": [_field_row(fp, plan) for fp in plan.fields.values()],
        "source": f"{table.name}/{plan.name}@{plan.version}",
    }


# -- the item page and its edit form --------------------------------------------------


def parse_field_text(plan: EntityPlan, name: str, text: str) -> Any:
    """A field value from the text the item form shows (`display`'s inverse).

    Empty text is ``None`` for an optional field; lists, maps and sets are JSON.

    Raises:
        InputError: The text does not validate as the field (names entity and field).
    """
    fp = plan.fields[name]
    if text == "" and fp.nullable:
        return None
    value: Any = text
    if fp.codec.kind not in _SCALAR_TYPES:
        depth = json_nesting(text)
        if depth > MAX_NESTING:
            raise InputError(
                f"{plan.name}.{name}: the value nests {depth} levels deep; DynamoDB allows "
                f"{MAX_NESTING} below the item"
            )
        try:
            value = json.loads(text)
        except ValueError as exc:
            # Not only JSONDecodeError: an integer literal past Python's digit limit (4,300)
            # raises a plain ValueError from inside the parser.
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise InputError(f"{plan.name}.{name}: not valid JSON ({why})") from None
    try:
        return plan.validate_field(name, value)
    except ItemEncodeError as exc:
        raise InputError(str(exc)) from None


def json_nesting(text: str) -> int:
    """How deeply JSON text nests lists and objects (brackets inside strings do not count).

    Counted without parsing, so that a value too deep to parse is refused, not parsed.
    """
    depth = deepest = 0
    for bracket in _JSON_BRACKET.findall(_JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def editable_fields(plan: EntityPlan) -> list[str]:
    """Fields the item form may change: not the primary key, not the version or stamps."""
    fixed = {
        *plan.primary.fields,
        plan.version_field,
        plan.created_at_field,
        plan.updated_at_field,
    }
    return [name for name in plan.fields if name not in fixed]


def item_fields(obj: Entity) -> list[dict[str, Any]]:
    """Every field of an item as the item page lists it (name, type, text, editable)."""
    plan = obj.plan()
    editable = set(editable_fields(plan))
    values = obj.__dict__
    return [
        {
            "name": name,
            "type": _type_label(fp.annotation),
            "text": "" if values[name] is None else display(values[name]),
            "missing": values[name] is None,
            "editable": name in editable,
        }
        for name, fp in plan.fields.items()
    ]
