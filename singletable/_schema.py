"""Table definitions generated from the model: ``create_table`` and CloudFormation.

Everything here is pure: a `Table` in, JSON-shaped data (or its JSON / YAML text) out.
YAML is written by a small emitter of our own rather than PyYAML, so that
``singletable synth --format yaml`` needs no extra dependency and its output is stable
byte for byte (the tests compare it with committed files and read it back with PyYAML).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from singletable._errors import ModelDefinitionError
from singletable._table import GSI, LSI, Table


def _key_schema(pk: str, sk: str | None) -> list[dict[str, str]]:
    schema = [{"AttributeName": pk, "KeyType": "HASH"}]
    if sk is not None:
        schema.append({"AttributeName": sk, "KeyType": "RANGE"})
    return schema


def index_projection(table: Table, index: GSI | LSI) -> dict[str, Any]:
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
            for name, kind in table.key_attributes().items()
        ],
        "KeySchema": _key_schema(table.pk, table.sk),
        "BillingMode": table.billing_mode,
    }
    if table.throughput is not None:
        request["ProvisionedThroughput"] = {
            "ReadCapacityUnits": table.throughput.read,
            "WriteCapacityUnits": table.throughput.write,
        }
    gsis = []
    lsis = []
    for index in table.indexes.values():
        if isinstance(index, GSI):
            entry: dict[str, Any] = {
                "IndexName": index.name,
                "KeySchema": _key_schema(index.pk, index.sk),
                "Projection": index_projection(table, index),
            }
            if table.billing_mode == "PROVISIONED":
                throughput = index.throughput or table.throughput
                assert throughput is not None
                entry["ProvisionedThroughput"] = {
                    "ReadCapacityUnits": throughput.read,
                    "WriteCapacityUnits": throughput.write,
                }
            gsis.append(entry)
        elif isinstance(index, LSI):
            lsis.append(
                {
                    "IndexName": index.name,
                    "KeySchema": _key_schema(table.pk, index.sk),
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


# -- CloudFormation ---------------------------------------------------------------------

#: The template format version CloudFormation accepts (the only one there is).
CFN_FORMAT_VERSION = "2010-09-09"


def logical_id(table: Table) -> str:
    """The CloudFormation logical id of ``table``'s resource: its name in CamelCase.

    Logical ids must be alphanumeric, so ``"singletable-demo"`` becomes
    ``"SingletableDemoTable"``.
    """
    words = re.split(r"[^A-Za-z0-9]+", table.name)
    stem = "".join(w[:1].upper() + w[1:] for w in words if w)
    if not stem or not stem[0].isalpha():
        stem = "T" + stem
    return stem + "Table"


def cloudformation_resource(table: Table) -> dict[str, Any]:
    """The ``AWS::DynamoDB::Table`` resource (``Type``, policies and ``Properties``).

    Both deletion policies are ``Retain``: a stack update that replaces or removes the
    table must never take the data with it; delete a retained table by hand.
    """
    request = create_table_request(table)
    props: dict[str, Any] = {
        "TableName": request["TableName"],
        "AttributeDefinitions": request["AttributeDefinitions"],
        "KeySchema": request["KeySchema"],
        "BillingMode": request["BillingMode"],
    }
    for name in ("ProvisionedThroughput", "GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        if name in request:
            props[name] = request[name]
    if table.ttl_attribute is not None:
        props["TimeToLiveSpecification"] = {"AttributeName": table.ttl_attribute, "Enabled": True}
    if table.stream is not None:
        # CloudFormation enables the stream by the presence of a view type (no StreamEnabled).
        props["StreamSpecification"] = {"StreamViewType": table.stream}
    if table.point_in_time_recovery:
        props["PointInTimeRecoverySpecification"] = {"PointInTimeRecoveryEnabled": True}
    if table.deletion_protection:
        props["DeletionProtectionEnabled"] = True
    if table.sse:
        props["SSESpecification"] = {"SSEEnabled": True, "SSEType": "KMS"}
    if table.tags:
        props["Tags"] = request["Tags"]
    return {
        "Type": "AWS::DynamoDB::Table",
        "DeletionPolicy": "Retain",
        "UpdateReplacePolicy": "Retain",
        "Properties": props,
    }


def cloudformation_template(
    tables: Table | Sequence[Table], *, description: str | None = None
) -> dict[str, Any]:
    """A complete CloudFormation template declaring ``tables``, with name/ARN outputs.

    Args:
        tables: One table or several.
        description: The template's ``Description`` (default: names the tables).

    Raises:
        ModelDefinitionError: Two tables share a name or a logical id.
    """
    tables = [tables] if isinstance(tables, Table) else list(tables)
    resources: dict[str, Any] = {}
    outputs: dict[str, Any] = {}
    for table in tables:
        rid = logical_id(table)
        if rid in resources:
            raise ModelDefinitionError(
                f"tables {table.name!r} and another table both map to the CloudFormation "
                f"logical id {rid!r}; rename one of them"
            )
        resources[rid] = cloudformation_resource(table)
        outputs[f"{rid}Name"] = {"Value": {"Ref": rid}}
        outputs[f"{rid}Arn"] = {"Value": {"Fn::GetAtt": [rid, "Arn"]}}
        if table.stream is not None:
            outputs[f"{rid}StreamArn"] = {"Value": {"Fn::GetAtt": [rid, "StreamArn"]}}
    names = ", ".join(t.name for t in tables)
    return {
        "AWSTemplateFormatVersion": CFN_FORMAT_VERSION,
        "Description": description or f"DynamoDB tables generated by singletable: {names}",
        "Resources": resources,
        "Outputs": outputs,
    }


def to_json(data: Any) -> str:
    """``data`` as indented JSON with a trailing newline (key order as given)."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# -- YAML -------------------------------------------------------------------------------
# A small emitter for JSON-shaped data (dict / list / str / int / float / bool / None),
# so that YAML output needs no runtime dependency and is byte-for-byte deterministic.
# Strings that could be read back as anything but the same string are double-quoted,
# with every character outside printable ASCII escaped.

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]*")
# Words YAML 1.1 or 1.2 resolves to booleans or null; they must be quoted.
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"})


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        # PyYAML (YAML 1.1) reads 1e+20 and 1.0e+20 as strings, and nan/inf differ by
        # loader: only plain decimal notation means the same float everywhere.
        if "e" in text or "n" in text:
            raise TypeError(f"cannot write float {value!r} as portable YAML")
        return text
    if not isinstance(value, str):
        raise TypeError(f"cannot write {type(value).__name__} {value!r} as YAML")
    plain = (
        _PLAIN.fullmatch(value) is not None
        and value.lower() not in _YAML_WORDS
        and not value.endswith(":")
        and ": " not in value
        and "::" not in value
    )
    return value if plain else _yaml_quoted(value)


def _yaml_quoted(text: str) -> str:
    # A YAML double-quoted scalar with only printable ASCII inside. Not json.dumps: JSON
    # writes astral characters as surrogate pairs, which YAML loaders refuse.
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_YAML_IMPLICIT_KEY_LIMIT = 1000


def _yaml_lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return [pad + "{}"]
        lines: list[str] = []
        for key, item in value.items():
            scalar = _yaml_scalar(str(key))
            head = f"{pad}{scalar}:"
            if len(scalar) > _YAML_IMPLICIT_KEY_LIMIT:
                # YAML limits implicit keys to 1024 characters; longer keys need the
                # explicit "? key" form, with the value on its own ":" line.
                lines.append(f"{pad}? {scalar}")
                head = f"{pad}:"
            if isinstance(item, (dict, list)) and item:
                lines.append(head)
                # Lists under a key are indented too: easier to read, and still valid.
                lines.extend(_yaml_lines(item, indent + 2))
            else:
                lines.append(f"{head} {_yaml_inline(item)}")
        return lines
    if isinstance(value, list):
        if not value:
            return [pad + "[]"]
        lines = []
        for item in value:
            if isinstance(item, (dict, list)) and item:
                inner = _yaml_lines(item, indent + 2)
                # The first line of the item goes on the dash's line.
                lines.append(f"{pad}- {inner[0][indent + 2 :]}")
                lines.extend(inner[1:])
            else:
                lines.append(f"{pad}- {_yaml_inline(item)}")
        return lines
    return [pad + _yaml_scalar(value)]


def _yaml_inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _yaml_scalar(value)


def to_yaml(data: Any) -> str:
    """``data`` (JSON-shaped) as block-style YAML with a trailing newline.

    The output is deterministic (key order as given) and reads back, with any YAML 1.1
    or 1.2 loader, as exactly ``data``. CloudFormation short-form tags (``!Ref``) are
    not used: intrinsic functions stay in their long JSON form (``Ref:``, ``Fn::GetAtt:``).
    """
    return "\n".join(_yaml_lines(data, 0)) + "\n"
