"""The table definition as Terraform: ``aws_dynamodb_table`` resources in ``.tf.json``.

Written in Terraform's JSON syntax rather than HCL: JSON is a first-class Terraform
syntax (a ``*.tf.json`` file sits beside ``*.tf`` files in a module), it needs no HCL
writer of our own with its quoting and escaping rules, and the output is plain data that
the tests compare and read back. Rendered from the same `TableDefinition` as the
CloudFormation template and the CreateTable request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from singletable.errors import ModelDefinitionError
from singletable.model.definition import IndexDefinition, KeyAttribute, TableDefinition
from singletable.model.table import Table
from singletable.tooling.definitions.schema import definitions

#: The AWS provider versions whose ``aws_dynamodb_table`` takes every argument written here.
AWS_PROVIDER_VERSION = ">= 5.0"
#: The same when a GSI has a multi-attribute key: the ``key_schema`` block of
#: ``global_secondary_index`` first shipped in hashicorp/aws 6.29.0 (provider CHANGELOG).
AWS_PROVIDER_VERSION_KEY_SCHEMA = ">= 6.29.0"


def resource_name(table: TableDefinition) -> str:
    """The Terraform resource name of a table: its name with ``_`` for other characters."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", table.name)
    return name if re.match(r"[A-Za-z_]", name) else "t_" + name


def _one(parts: tuple[KeyAttribute, ...], where: str) -> str:
    # The table key and an LSI name one attribute per role (hash_key, range_key); only a
    # GSI takes several (key_schema), and DynamoDB allows several nowhere else.
    if len(parts) > 1:
        names = ", ".join(p.name for p in parts)
        raise ModelDefinitionError(
            f"{where}: a multi-attribute key ({names}) is only allowed on a GSI"
        )
    return parts[0].name


def _multi_attribute(index: IndexDefinition) -> bool:
    """Whether an index's key has several attributes in one role (a native GSI's key)."""
    return any(len(index.parts(role)) > 1 for role in ("HASH", "RANGE"))


def _index(d: TableDefinition, index: IndexDefinition) -> dict[str, Any]:
    where = f"table {d.name!r}, index {index.name!r}"
    block: dict[str, Any] = {"name": index.name}
    if index.kind == "GSI" and _multi_attribute(index):
        # Provider 6.29+: key_schema blocks, HASH parts then RANGE parts, in order; they
        # exclude hash_key/range_key in the same block. A single-attribute GSI keeps
        # hash_key/range_key (deprecated in 6.x, still valid): its output stays
        # deployable with provider 5.x and an existing index sees no change.
        block["key_schema"] = [{"attribute_name": p.name, "key_type": p.role} for p in index.key]
    else:
        if index.kind == "GSI":
            block["hash_key"] = _one(index.parts("HASH"), where)
        if index.parts("RANGE"):
            block["range_key"] = _one(index.parts("RANGE"), where)
    block["projection_type"] = index.projection
    if index.non_key_attributes:
        block["non_key_attributes"] = list(index.non_key_attributes)
    if index.throughput is not None:
        block["read_capacity"] = index.throughput.read
        block["write_capacity"] = index.throughput.write
    return block


def terraform_resource(table: Table | TableDefinition) -> dict[str, Any]:
    """The arguments of one ``aws_dynamodb_table`` resource (JSON syntax)."""
    d = definitions(table)[0]
    where = f"table {d.name!r}"
    res: dict[str, Any] = {
        "name": d.name,
        "billing_mode": d.billing_mode,
        "hash_key": _one(d.parts("HASH"), where),
    }
    if d.parts("RANGE"):
        res["range_key"] = _one(d.parts("RANGE"), where)
    if d.throughput is not None:
        res["read_capacity"] = d.throughput.read
        res["write_capacity"] = d.throughput.write
    res["attribute"] = [{"name": name, "type": kind} for name, kind in d.attributes]
    gsis = [_index(d, i) for i in d.of_kind("GSI")]
    lsis = [_index(d, i) for i in d.of_kind("LSI")]
    if gsis:
        res["global_secondary_index"] = gsis
    if lsis:
        res["local_secondary_index"] = lsis
    if d.ttl_attribute is not None:
        res["ttl"] = {"attribute_name": d.ttl_attribute, "enabled": True}
    if d.stream is not None:
        res["stream_enabled"] = True
        res["stream_view_type"] = d.stream
    if d.point_in_time_recovery:
        res["point_in_time_recovery"] = {"enabled": True}
    if d.deletion_protection:
        res["deletion_protection_enabled"] = True
    if d.sse:
        # Without kms_key_arn: the AWS managed key, as CloudFormation's SSEType KMS.
        res["server_side_encryption"] = {"enabled": True}
    if d.tags:
        res["tags"] = dict(d.tags)
    # CloudFormation's DeletionPolicy Retain: a plan that would destroy the table fails.
    res["lifecycle"] = {"prevent_destroy": True}
    return res


def terraform_config(
    tables: Table | TableDefinition | Sequence[Table | TableDefinition],
) -> dict[str, Any]:
    """A ``.tf.json`` document: the AWS provider requirement and one resource per table.

    Raises:
        ModelDefinitionError: Two tables share a resource name, or a table key or an LSI
            has several attributes in one role.
    """
    resources: dict[str, Any] = {}
    version = AWS_PROVIDER_VERSION
    for d in definitions(tables):
        if any(_multi_attribute(i) for i in d.of_kind("GSI")):
            version = AWS_PROVIDER_VERSION_KEY_SCHEMA
        name = resource_name(d)
        if name in resources:
            raise ModelDefinitionError(
                f"tables {d.name!r} and {resources[name]['name']!r} both map to the "
                f"Terraform resource name {name!r}; rename one of them"
            )
        resources[name] = terraform_resource(d)
    return {
        "//": "DynamoDB tables generated by singletable: regenerate, do not edit",
        "terraform": {
            "required_providers": {"aws": {"source": "hashicorp/aws", "version": version}}
        },
        "resource": {"aws_dynamodb_table": resources},
    }
