"""The table definition derived from the model: `TableDefinition` and the CreateTable request.

`table_definition` turns a `Table` into one neutral value; the CreateTable request here and
the writers of `singletable.tooling.definitions` (CloudFormation, CDK, Terraform) render
that value, never the `Table`, so every target describes the same table.
"""

from __future__ import annotations

from typing import Any, Literal

from singletable.model.plan import native_key_types
from singletable.model.table import (
    GSI,
    LSI,
    BillingMode,
    KeyType,
    NativeGSI,
    StreamView,
    Table,
    Throughput,
)
from singletable.types import frozen_dataclass


def index_projection(table: Table, index: GSI | LSI | NativeGSI) -> dict[str, Any]:
    """The ``Projection`` of an index as DynamoDB gets it.

    An ``INCLUDE`` projection also carries the entity and version attributes: without
    them an item read from the index cannot be told apart from other entities' items,
    and entity queries on the index would find nothing.
    """
    projection = index.projection.to_dict()
    if index.projection.type == "INCLUDE":
        extra = [table.entity_attribute, table.version_attribute]
        attrs = list(index.projection.attributes)
        projection["NonKeyAttributes"] = attrs + [a for a in extra if a not in attrs]
    return projection


@frozen_dataclass
class KeyAttribute:
    """One attribute of a key: its name, DynamoDB type and role (``HASH`` or ``RANGE``).

    (Not `singletable.KeyPart`, which declares a native GSI's part on the model.)
    """

    name: str
    type: KeyType
    role: Literal["HASH", "RANGE"]


@frozen_dataclass
class IndexDefinition:
    """One index as every writer renders it (see `TableDefinition`).

    ``key`` is a tuple of parts, HASH parts first: one HASH and at most one RANGE part for
    a template index, up to four of each, in order, for a native (multi-attribute) GSI.
    ``non_key_attributes`` already carries the bookkeeping attributes (`index_projection`).
    """

    name: str
    kind: Literal["GSI", "LSI"]
    key: tuple[KeyAttribute, ...]
    projection: Literal["ALL", "KEYS_ONLY", "INCLUDE"]
    non_key_attributes: tuple[str, ...] = ()
    #: Provisioned capacity of a GSI of a PROVISIONED table (its own, else the table's).
    throughput: Throughput | None = None

    def parts(self, role: Literal["HASH", "RANGE"]) -> tuple[KeyAttribute, ...]:
        """The key parts of one role, in order."""
        return tuple(p for p in self.key if p.role == role)


@frozen_dataclass
class TableDefinition:
    """The physical table as a neutral value, rendered by every definition writer.

    CreateTable, CloudFormation, the CDK and Terraform writers all render this value and
    never read the `Table` itself, so their outputs cannot disagree.
    """

    name: str
    key: tuple[KeyAttribute, ...]
    #: Every key attribute of the table and its indexes, with its type, in first-use order.
    attributes: tuple[tuple[str, KeyType], ...]
    billing_mode: BillingMode
    throughput: Throughput | None
    indexes: tuple[IndexDefinition, ...]
    ttl_attribute: str | None
    stream: StreamView | None
    point_in_time_recovery: bool
    deletion_protection: bool
    sse: bool
    #: Sorted by key, so that every output lists them alike.
    tags: tuple[tuple[str, str], ...]

    def parts(self, role: Literal["HASH", "RANGE"]) -> tuple[KeyAttribute, ...]:
        """The table's key parts of one role."""
        return tuple(p for p in self.key if p.role == role)

    def of_kind(self, kind: Literal["GSI", "LSI"]) -> tuple[IndexDefinition, ...]:
        """The indexes of one kind, in declaration order."""
        return tuple(i for i in self.indexes if i.kind == kind)


def _key(pk: str, pk_type: KeyType, sk: str | None, sk_type: KeyType) -> tuple[KeyAttribute, ...]:
    parts = [KeyAttribute(pk, pk_type, "HASH")]
    if sk is not None:
        parts.append(KeyAttribute(sk, sk_type, "RANGE"))
    return tuple(parts)


def _index_definition(
    table: Table, index: GSI | LSI | NativeGSI, part_types: dict[str, KeyType]
) -> IndexDefinition:
    projection = index_projection(table, index)
    if isinstance(index, NativeGSI):
        key = tuple(KeyAttribute(p.attribute, part_types[p.attribute], "HASH") for p in index.pk)
        key += tuple(KeyAttribute(p.attribute, part_types[p.attribute], "RANGE") for p in index.sk)
        throughput = (
            (index.throughput or table.throughput) if table.billing_mode == "PROVISIONED" else None
        )
    elif isinstance(index, GSI):
        key = _key(index.pk, index.pk_type, index.sk, index.sk_type)
        throughput = (
            (index.throughput or table.throughput) if table.billing_mode == "PROVISIONED" else None
        )
    else:
        key = _key(table.pk, table.pk_type, index.sk, index.sk_type)
        throughput = None
    return IndexDefinition(
        name=index.name,
        kind=index.kind,
        key=key,
        projection=projection["ProjectionType"],
        non_key_attributes=tuple(projection.get("NonKeyAttributes", ())),
        throughput=throughput,
    )


def attribute_definitions(table: Table) -> dict[str, KeyType]:
    """Every key attribute of the table and its indexes (native parts too), with its type.

    Raises:
        ModelDefinitionError: A native part's type is neither declared nor stored by a
            registered entity.
    """
    return {**table.key_attributes(), **native_key_types(table)}


def table_definition(table: Table) -> TableDefinition:
    """The neutral definition of ``table`` that every definition writer renders.

    Raises:
        ModelDefinitionError: A native GSI part's type is neither declared nor stored by
            a registered entity.
    """
    attributes = attribute_definitions(table)
    indexes = [*table.indexes.values(), *table.native_indexes.values()]
    return TableDefinition(
        name=table.name,
        key=_key(table.pk, table.pk_type, table.sk, table.sk_type),
        attributes=tuple(attributes.items()),
        billing_mode=table.billing_mode,
        throughput=table.throughput,
        indexes=tuple(_index_definition(table, i, attributes) for i in indexes),
        ttl_attribute=table.ttl_attribute,
        stream=table.stream,
        point_in_time_recovery=table.point_in_time_recovery,
        deletion_protection=table.deletion_protection,
        sse=table.sse,
        tags=tuple(sorted(table.tags.items())),
    )


def key_schema_of(parts: tuple[KeyAttribute, ...]) -> list[dict[str, str]]:
    """DynamoDB's KeySchema list for key parts."""
    return [{"AttributeName": p.name, "KeyType": p.role} for p in parts]


def throughput_of(throughput: Throughput) -> dict[str, int]:
    """DynamoDB's ``ProvisionedThroughput`` structure."""
    return {"ReadCapacityUnits": throughput.read, "WriteCapacityUnits": throughput.write}


def projection_of(index: IndexDefinition) -> dict[str, Any]:
    """DynamoDB's ``Projection`` structure of an index definition."""
    projection: dict[str, Any] = {"ProjectionType": index.projection}
    if index.non_key_attributes:
        projection["NonKeyAttributes"] = list(index.non_key_attributes)
    return projection


def index_entries(definition: TableDefinition, kind: Literal["GSI", "LSI"]) -> list[dict[str, Any]]:
    """The ``GlobalSecondaryIndexes`` / ``LocalSecondaryIndexes`` entries of one kind.

    CreateTable and CloudFormation share this shape.
    """
    return [index_entry(index) for index in definition.of_kind(kind)]


def index_entry(index: IndexDefinition) -> dict[str, Any]:
    """One index as CreateTable, UpdateTable's ``Create`` and CloudFormation take it."""
    entry: dict[str, Any] = {
        "IndexName": index.name,
        "KeySchema": key_schema_of(index.key),
        "Projection": projection_of(index),
    }
    if index.throughput is not None:
        entry["ProvisionedThroughput"] = throughput_of(index.throughput)
    return entry


def gsi_request(table: Table, index: GSI | NativeGSI) -> dict[str, Any]:
    """The ``GlobalSecondaryIndexes`` entry of one GSI of ``table`` (an index creation's too)."""
    return index_entry(_index_definition(table, index, attribute_definitions(table)))


def key_and_index_properties(d: TableDefinition) -> dict[str, Any]:
    """What CreateTable and CloudFormation's table properties spell alike.

    The name, attribute definitions, key schema, billing and throughput, and the indexes;
    the settings (stream, SSE, TTL...) each spell their own way.
    """
    properties: dict[str, Any] = {
        "TableName": d.name,
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": kind} for name, kind in d.attributes
        ],
        "KeySchema": key_schema_of(d.key),
        "BillingMode": d.billing_mode,
    }
    if d.throughput is not None:
        properties["ProvisionedThroughput"] = throughput_of(d.throughput)
    gsis, lsis = index_entries(d, "GSI"), index_entries(d, "LSI")
    if gsis:
        properties["GlobalSecondaryIndexes"] = gsis
    if lsis:
        properties["LocalSecondaryIndexes"] = lsis
    return properties


def create_table_request(table: Table | TableDefinition) -> dict[str, Any]:
    """The boto3 ``create_table`` keyword arguments for ``table``.

    AttributeDefinitions lists key attributes only (DynamoDB refuses others).
    """
    d = table_definition(table) if isinstance(table, Table) else table
    request = key_and_index_properties(d)
    if d.stream is not None:
        request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": d.stream}
    if d.sse:
        request["SSESpecification"] = {"Enabled": True, "SSEType": "KMS"}
    if d.deletion_protection:
        request["DeletionProtectionEnabled"] = True
    if d.tags:
        request["Tags"] = [{"Key": k, "Value": v} for k, v in d.tags]
    return request
