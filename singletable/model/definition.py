"""The table definition as DynamoDB's CreateTable request, derived from the model."""

from __future__ import annotations

from typing import Any

from singletable.model.plan import native_key_types
from singletable.model.table import GSI, LSI, NativeGSI, Table


def key_schema(pk: str, sk: str | None) -> list[dict[str, str]]:
    """DynamoDB's KeySchema list for a partition key and an optional sort key."""
    schema = [{"AttributeName": pk, "KeyType": "HASH"}]
    if sk is not None:
        schema.append({"AttributeName": sk, "KeyType": "RANGE"})
    return schema


def native_key_schema(index: NativeGSI) -> list[dict[str, str]]:
    """A native GSI's KeySchema: every partition part (HASH), then every sort part (RANGE).

    The order of the elements is the order of the parts: DynamoDB hashes the partition
    parts together and sorts by the sort parts left to right.
    """
    return [{"AttributeName": p.attribute, "KeyType": "HASH"} for p in index.pk] + [
        {"AttributeName": p.attribute, "KeyType": "RANGE"} for p in index.sk
    ]


def attribute_definitions(table: Table) -> dict[str, str]:
    """Every key attribute of the table and its indexes (native parts too), with its type.

    Raises:
        ModelDefinitionError: A native part's type is neither declared nor stored by a
            registered entity.
    """
    return {**table.key_attributes(), **native_key_types(table)}


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


def create_table_request(table: Table) -> dict[str, Any]:
    """The boto3 ``create_table`` keyword arguments for ``table``.

    AttributeDefinitions lists key attributes only (DynamoDB refuses others).
    """
    request: dict[str, Any] = {
        "TableName": table.name,
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": kind}
            for name, kind in attribute_definitions(table).items()
        ],
        "KeySchema": key_schema(table.pk, table.sk),
        "BillingMode": table.billing_mode,
    }
    if table.throughput is not None:
        request["ProvisionedThroughput"] = {
            "ReadCapacityUnits": table.throughput.read,
            "WriteCapacityUnits": table.throughput.write,
        }
    gsis = []
    lsis = []
    for index in [*table.indexes.values(), *table.native_indexes.values()]:
        if isinstance(index, (GSI, NativeGSI)):
            gsis.append(gsi_request(table, index))
        elif isinstance(index, LSI):
            lsis.append(
                {
                    "IndexName": index.name,
                    "KeySchema": key_schema(table.pk, index.sk),
                    "Projection": index_projection(table, index),
                }
            )
    if gsis:
        request["GlobalSecondaryIndexes"] = gsis
    if lsis:
        request["LocalSecondaryIndexes"] = lsis
    if table.stream is not None:
        request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": table.stream}
    if table.sse:
        request["SSESpecification"] = {"Enabled": True, "SSEType": "KMS"}
    if table.deletion_protection:
        request["DeletionProtectionEnabled"] = True
    if table.tags:
        request["Tags"] = [{"Key": k, "Value": v} for k, v in sorted(table.tags.items())]
    return request


def gsi_request(table: Table, index: GSI | NativeGSI) -> dict[str, Any]:
    """One entry of CreateTable's ``GlobalSecondaryIndexes`` (and of an index creation)."""
    entry: dict[str, Any] = {
        "IndexName": index.name,
        "KeySchema": (
            native_key_schema(index)
            if isinstance(index, NativeGSI)
            else key_schema(index.pk, index.sk)
        ),
        "Projection": index_projection(table, index),
    }
    if table.billing_mode == "PROVISIONED":
        throughput = index.throughput or table.throughput
        assert throughput is not None
        entry["ProvisionedThroughput"] = {
            "ReadCapacityUnits": throughput.read,
            "WriteCapacityUnits": throughput.write,
        }
    return entry


# -- CloudFormation ---------------------------------------------------------------------

#: The template format version CloudFormation accepts (the only one there is).
