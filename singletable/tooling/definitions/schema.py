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

from singletable.errors import ModelDefinitionError
from singletable.model.definition import (
    TableDefinition,
    index_entries,
    key_schema_of,
    table_definition,
    throughput_of,
)
from singletable.model.table import Table

CFN_FORMAT_VERSION = "2010-09-09"


def logical_id(table: Table | TableDefinition) -> str:
    """The CloudFormation logical id of ``table``'s resource: its name in CamelCase.

    Logical ids must be alphanumeric, so ``"singletable-demo"`` becomes
    ``"SingletableDemoTable"``.
    """
    words = re.split(r"[^A-Za-z0-9]+", table.name)
    stem = "".join(w[:1].upper() + w[1:] for w in words if w)
    if not stem or not stem[0].isalpha():
        stem = "T" + stem
    return stem + "Table"


def cloudformation_resource(table: Table | TableDefinition) -> dict[str, Any]:
    """The ``AWS::DynamoDB::Table`` resource (``Type``, policies and ``Properties``).

    Both deletion policies are ``Retain``: a stack update that replaces or removes the
    table must never take the data with it; delete a retained table by hand.
    """
    d = table_definition(table) if isinstance(table, Table) else table
    props: dict[str, Any] = {
        "TableName": d.name,
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": kind} for name, kind in d.attributes
        ],
        "KeySchema": key_schema_of(d.key),
        "BillingMode": d.billing_mode,
    }
    if d.throughput is not None:
        props["ProvisionedThroughput"] = throughput_of(d.throughput)
    gsis, lsis = index_entries(d, "GSI"), index_entries(d, "LSI")
    if gsis:
        props["GlobalSecondaryIndexes"] = gsis
    if lsis:
        props["LocalSecondaryIndexes"] = lsis
    if d.ttl_attribute is not None:
        props["TimeToLiveSpecification"] = {"AttributeName": d.ttl_attribute, "Enabled": True}
    if d.stream is not None:
        # CloudFormation enables the stream by the presence of a view type (no StreamEnabled).
        props["StreamSpecification"] = {"StreamViewType": d.stream}
    if d.point_in_time_recovery:
        props["PointInTimeRecoverySpecification"] = {"PointInTimeRecoveryEnabled": True}
    if d.deletion_protection:
        props["DeletionProtectionEnabled"] = True
    if d.sse:
        props["SSESpecification"] = {"SSEEnabled": True, "SSEType": "KMS"}
    if d.tags:
        props["Tags"] = [{"Key": k, "Value": v} for k, v in d.tags]
    return {
        "Type": "AWS::DynamoDB::Table",
        "DeletionPolicy": "Retain",
        "UpdateReplacePolicy": "Retain",
        "Properties": props,
    }


def definitions(
    tables: Table | TableDefinition | Sequence[Table | TableDefinition],
) -> list[TableDefinition]:
    """The definitions of one table or several, as every writer takes them.

    Raises:
        ModelDefinitionError: No table, or two tables share a name or a logical id (which
            CloudFormation and the CDK both use to name the resource).
    """
    many = [tables] if isinstance(tables, (Table, TableDefinition)) else list(tables)
    defs = [table_definition(t) if isinstance(t, Table) else t for t in many]
    if not defs:
        raise ModelDefinitionError("no table to define")
    seen: dict[str, str] = {}
    for d in defs:
        rid = logical_id(d)
        if rid in seen:
            raise ModelDefinitionError(
                f"tables {d.name!r} and {seen[rid]!r} both map to the logical id {rid!r}; "
                "rename one of them"
            )
        seen[rid] = d.name
    return defs


def cloudformation_template(
    tables: Table | TableDefinition | Sequence[Table | TableDefinition],
    *,
    description: str | None = None,
) -> dict[str, Any]:
    """A complete CloudFormation template declaring ``tables``, with name/ARN outputs.

    Args:
        tables: One table or several (or their definitions).
        description: The template's ``Description`` (default: names the tables).

    Raises:
        ModelDefinitionError: Two tables share a name or a logical id.
    """
    defs = definitions(tables)
    resources: dict[str, Any] = {}
    outputs: dict[str, Any] = {}
    for d in defs:
        rid = logical_id(d)
        resources[rid] = cloudformation_resource(d)
        outputs[f"{rid}Name"] = {"Value": {"Ref": rid}}
        outputs[f"{rid}Arn"] = {"Value": {"Fn::GetAtt": [rid, "Arn"]}}
        if d.stream is not None:
            outputs[f"{rid}StreamArn"] = {"Value": {"Fn::GetAtt": [rid, "StreamArn"]}}
    names = ", ".join(d.name for d in defs)
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
            raise ModelDefinitionError(f"cannot write float {value!r} as portable YAML")
        return text
    if not isinstance(value, str):
        raise ModelDefinitionError(f"cannot write {type(value).__name__} {value!r} as YAML")
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
