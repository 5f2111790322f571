"""NoSQL Workbench data models out of a singletable model: tables, facets, sample data.

NoSQL Workbench (AWS's desktop modeller) imports a JSON document, ``Version`` ``3.0`` of
its format, that holds per table: the key attributes, the other attributes with their
types, the GSIs, the *facets* (one access pattern each: a name, a friendly alias for the
partition and sort key, the attributes it shows) and sample items in DynamoDB JSON. We
write one facet per entity, whose key aliases are the entity's key templates
(``ACTOR#{actor_id}``), so a reviewer sees the key design and `workbench_import` can turn
the facet back into an entity class.

The table itself comes from the same `TableDefinition` as every other output. What the
format has no place for (LSIs, TTL, streams, an entity's GSI key templates) is recorded in
the model's description instead, one line each (``singletable: {"table": ..., ...}``).
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import types
import typing
import uuid
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ValidationError

from singletable.errors import ModelDefinitionError
from singletable.model.definition import TableDefinition, table_definition
from singletable.model.plan import EntityPlan, entity_plans, plan_of
from singletable.model.table import Table

#: The version of Workbench's model format written here (the one its exports carry).
FORMAT_VERSION = "3.0"

#: Starts each line of the model's description that records what the format cannot hold.
NOTE_PREFIX = "singletable: "

#: The first generated sample item's timestamps (`sample_items`); deterministic output.
SAMPLE_T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def _key(parts: Sequence[Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        role = "PartitionKey" if part.role == "HASH" else "SortKey"
        if role in out:
            # Workbench's KeyAttributes hold one attribute per role (PartitionKey, SortKey),
            # so a native GSI's multi-attribute key has no form there.
            names = ", ".join(p.name for p in parts if p.role == part.role)
            raise ModelDefinitionError(
                f"{where}: its multi-attribute key ({names}) cannot be written as a NoSQL "
                "Workbench model (one partition and one sort key attribute per index); "
                "use `singletable synth` (CloudFormation, CDK or Terraform) for this table"
            )
        out[role] = {"AttributeName": part.name, "AttributeType": part.type}
    return out


def _type_of(annotation: Any) -> str:
    """The DynamoDB type a field of this annotation is stored as (Workbench's type names)."""
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return _type_of(args[0])
    if origin is typing.Annotated:
        return _type_of(args[0])
    if origin in (set, frozenset):
        inner = _type_of(args[0]) if args else "S"
        return {"S": "SS", "N": "NS", "B": "BS"}.get(inner, "L")
    if origin in (list, tuple):
        return "L"
    if origin in (dict, Mapping):
        return "M"
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            # Members are stored by value: numbers as N, anything else as S.
            numeric = all(isinstance(m.value, int | float) for m in annotation)
            return "N" if numeric else "S"
        if issubclass(annotation, bool):
            return "BOOL"
        if issubclass(annotation, (int, float, Decimal)):
            return "N"
        if issubclass(annotation, bytes):
            return "B"
        if issubclass(annotation, BaseModel):
            return "M"
    return "S"


def _facet(plan: EntityPlan, gsi_keys: Mapping[str, list[str]]) -> dict[str, Any]:
    aliases = {"PartitionKeyAlias": plan.primary.pk.source}
    if plan.primary.sk is not None:
        aliases["SortKeyAlias"] = plan.primary.sk.source
    attributes = [f.attribute for f in plan.fields.values()]
    for index in plan.indexes:
        attributes += [a for a in gsi_keys.get(index, []) if a not in attributes]
    table = plan.table
    if plan.ttl_field is not None and table.ttl_attribute not in (None, *attributes):
        attributes.append(str(table.ttl_attribute))
    attributes += [table.entity_attribute, table.version_attribute]
    return {
        "FacetName": plan.name if plan.version == 1 else f"{plan.name}_v{plan.version}",
        "KeyAttributeAlias": aliases,
        "TableData": [],
        "NonKeyAttributes": attributes,
        "DataAccess": {"MySql": {}},
    }


def _not_written(d: TableDefinition, plans: Sequence[EntityPlan]) -> list[dict[str, Any]]:
    """What the table holds that a Workbench model has no place for, as note records."""
    notes: list[dict[str, Any]] = [
        {"table": d.name, "lsi": i.name, "sk": i.parts("RANGE")[0].name} for i in d.of_kind("LSI")
    ]
    for setting, value in (
        ("ttl_attribute", d.ttl_attribute),
        ("stream", d.stream),
        ("point_in_time_recovery", d.point_in_time_recovery or None),
    ):
        if value is not None:
            notes.append({"table": d.name, setting: value})
    for plan in plans:
        for index, keys in plan.indexes.items():
            note = {"table": d.name, "entity": plan.name, "index": index, "pk": keys.pk.source}
            if keys.sk is not None:
                note["sk"] = keys.sk.source
            notes.append(note)
    return notes


def _table_model(
    table: Table, items: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    d = table_definition(table)
    plans = entity_plans(table)
    key_names = {p.name for p in d.key}
    gsi_keys = {i.name: [p.name for p in i.key] for i in d.of_kind("GSI")}
    non_key: dict[str, str] = {}
    for name, kind in d.attributes:
        if name not in key_names:
            non_key[name] = kind
    for plan in plans:
        for f in plan.fields.values():
            non_key.setdefault(f.attribute, _type_of(f.annotation))
    if d.ttl_attribute is not None:
        non_key.setdefault(d.ttl_attribute, "N")
    non_key.setdefault(table.entity_attribute, "S")
    non_key.setdefault(table.version_attribute, "N")
    model: dict[str, Any] = {
        "TableName": d.name,
        "KeyAttributes": _key(d.key, f"table {d.name!r}"),
        "NonKeyAttributes": [{"AttributeName": n, "AttributeType": t} for n, t in non_key.items()],
        "TableFacets": [_facet(p, gsi_keys) for p in plans],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": i.name,
                "KeyAttributes": _key(i.key, f"table {d.name!r}, native GSI {i.name!r}"),
                "Projection": {
                    "ProjectionType": i.projection,
                    **(
                        {"NonKeyAttributes": list(i.non_key_attributes)}
                        if i.non_key_attributes
                        else {}
                    ),
                },
            }
            for i in d.of_kind("GSI")
        ],
        "TableData": [dict(item) for item in items],
        "DataAccess": {"MySql": {}},
        "BillingMode": d.billing_mode,
    }
    if d.throughput is not None:
        model["ProvisionedCapacitySettings"] = {
            "ProvisionedThroughput": {
                "ReadCapacityUnits": d.throughput.read,
                "WriteCapacityUnits": d.throughput.write,
            }
        }
    return model, _not_written(d, plans)


def workbench_model(
    tables: Table | Sequence[Table],
    *,
    items: Iterable[BaseModel] = (),
    name: str | None = None,
    created: dt.datetime = SAMPLE_T0,
) -> dict[str, Any]:
    """The NoSQL Workbench data model (format 3.0) of ``tables``.

    Args:
        tables: One table or several, with their registered entities.
        items: Entity instances written as each table's sample data (stored form).
        name: The model's name (default: the table names).
        created: The model's creation and modification date (a fixed default, so that the
            output is deterministic).

    Raises:
        ModelDefinitionError: An item's entity is not stored in one of ``tables``, or a key
            has several attributes.
    """
    many = [tables] if isinstance(tables, Table) else list(tables)
    by_table: dict[str, list[Mapping[str, Any]]] = {t.name: [] for t in many}
    for obj in items:
        plan = plan_of(type(obj))
        if plan.table.name not in by_table:
            raise ModelDefinitionError(
                f"sample item of {plan.name} is stored in table {plan.table.name!r}, which "
                "is not in the model"
            )
        by_table[plan.table.name].append(plan.to_item(obj))
    models: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for table in many:
        model, table_notes = _table_model(table, by_table[table.name])
        models.append(model)
        notes += table_notes
    # One line per note, each a JSON record after NOTE_PREFIX: readable in Workbench, and
    # read back by `workbench_import` (an entity's GSI templates, the TTL attribute).
    description = "\n".join(
        [
            "Generated by singletable; facet key aliases are the entities' key templates.",
            *(NOTE_PREFIX + json.dumps(note, ensure_ascii=False) for note in notes),
        ]
    )
    stamp = created.strftime("%b %d, %Y, %I:%M %p")
    return {
        "ModelName": name or ", ".join(t.name for t in many),
        "ModelMetadata": {
            "Author": "singletable",
            "DateCreated": stamp,
            "DateLastModified": stamp,
            "Description": description,
            "AWSService": "Amazon DynamoDB",
            "Version": FORMAT_VERSION,
        },
        "DataModel": models,
    }


# -- generated sample items ------------------------------------------------------------------


def _sample_value(annotation: Any, field: str, n: int) -> Any:
    """A value of ``annotation`` for the ``n``-th sample item (deterministic)."""
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, types.UnionType) or origin is typing.Annotated:
        return _sample_value(args[0], field, n)
    if origin is typing.Literal:
        return args[n % len(args)]
    if origin in (list, tuple, set, frozenset, dict, Mapping):
        return origin() if origin is not Mapping else {}
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            members = list(annotation)
            return members[n % len(members)]
        for kind, value in (
            (bool, n % 2 == 0),
            (int, n + 1),
            (float, n + 0.5),
            (Decimal, Decimal(n * 10 + 5) / 10),
            (dt.datetime, SAMPLE_T0 + dt.timedelta(hours=n)),
            (dt.date, SAMPLE_T0.date() + dt.timedelta(days=n)),
            (uuid.UUID, uuid.uuid5(uuid.NAMESPACE_OID, f"{field}/{n}")),
            (bytes, f"{field}-{n}".encode()),
            (str, f"{field}-{n + 1}"),
        ):
            if issubclass(annotation, kind):
                return value
    raise ModelDefinitionError(
        f"field {field!r}: no sample value for {annotation!r}; give the items instead"
    )


def _sample(plan: EntityPlan, n: int, prefix: str) -> BaseModel:
    values = {
        f.name: _sample_value(f.annotation, prefix + f.name, n)
        for f in plan.fields.values()
        if f.required
    }
    try:
        return plan.model(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ModelDefinitionError(
            f"entity {plan.name}: generated sample values are not valid "
            f"({first['loc']}: {first['msg']}); give the items instead"
        ) from None


def sample_items(tables: Table | Sequence[Table], count: int) -> list[BaseModel]:
    """``count`` generated instances of every entity of ``tables`` (required fields only).

    Entities share field values where they share field names (``ACTOR#actor_id-1`` holds
    the actor and its events, as a collection would); an item whose key an earlier one
    took (two entities with the same templates) gets text values of its own instead.

    Raises:
        ModelDefinitionError: A required field's type has no sample value (nested models,
            constrained values); name the field.
    """
    many = [tables] if isinstance(tables, Table) else list(tables)
    out: list[BaseModel] = []
    for table in many:
        taken: set[str] = set()
        for plan in entity_plans(table):
            for n in range(count):
                obj = _sample(plan, n, "")
                key = json.dumps(plan.key(obj), sort_keys=True)
                if key in taken:
                    obj = _sample(plan, n, plan.name.lower() + "-")
                    key = json.dumps(plan.key(obj), sort_keys=True)
                taken.add(key)
                out.append(obj)
    return out
