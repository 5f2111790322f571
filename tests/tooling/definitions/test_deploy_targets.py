"""CDK and Terraform outputs: structure checked always, from the same definition as CFN.

* CDK: the generated module is parsed (it must be valid Python) and its ``TableV2``
  arguments are compared with the CloudFormation resource of the same table.
  ``test_deploy_tools.py`` runs ``cdk synth`` on it for real (opt-in).
* Terraform: the ``.tf.json`` resource is checked against the ``aws_dynamodb_table``
  schema of the AWS provider, committed in ``tests/expected/aws_dynamodb_table.schema.json``
  (extracted from hashicorp/aws 5.100.0 with ``terraform providers schema -json`` and
  trimmed to names, types, required and nesting): every argument and block must exist
  there with the right type and nesting, and every required argument must be present.
  A GSI's ``key_schema`` (provider >= 6.29.0, for multi-attribute keys) is layered on from
  ``aws_dynamodb_table.gsi_key_schema.json``, written from the provider's CHANGELOG and
  docs, not extracted from a binary (none was reachable): see the note in that file.
  ``test_deploy_tools.py`` runs ``terraform validate`` for real (opt-in).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as hs

import singletable as st
from singletable import examples
from singletable.model.definition import IndexDefinition, KeyAttribute, table_definition
from singletable.tooling.definitions.cdk import cdk_module, py_str
from singletable.tooling.definitions.schema import cloudformation_resource, to_json
from singletable.tooling.definitions.terraform import terraform_config
from tests.schema_models import full_table
from tests.tooling.definitions.test_schema import check_expected

EXPECTED_DIR = Path(__file__).parents[2] / "expected"
SCHEMA = json.loads((EXPECTED_DIR / "aws_dynamodb_table.schema.json").read_text())
_KEY_SCHEMA = json.loads((EXPECTED_DIR / "aws_dynamodb_table.gsi_key_schema.json").read_text())
_GSI = SCHEMA["block"]["block_types"]["global_secondary_index"]["block"]
_GSI["attributes"].update(_KEY_SCHEMA["attributes"])
_GSI["block_types"].update(_KEY_SCHEMA["block_types"])
TABLES = [examples.demo, full_table(), st.Table("t", sk=None)]


def test_committed_outputs() -> None:
    check_expected("full.cdk.py.txt", cdk_module(full_table()))
    check_expected("full.tf.json", to_json(terraform_config(full_table())))


# -- CDK ----------------------------------------------------------------------------------


def _call_kwargs(node: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in node.keywords if k.arg is not None}


def _attr(node: ast.expr) -> tuple[str, str]:
    assert isinstance(node, ast.Call)
    kw = _call_kwargs(node)
    name = ast.literal_eval(kw["name"])
    type_node = kw["type"]
    assert isinstance(type_node, ast.Attribute)
    return name, {"STRING": "S", "NUMBER": "N", "BINARY": "B"}[type_node.attr]


def _tables_v2(source: str) -> list[dict[str, ast.expr]]:
    calls = [
        n
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "TableV2"
    ]
    return [_call_kwargs(c) for c in calls]


def _cdk_as_cfn_keys(kw: dict[str, ast.expr]) -> dict[str, Any]:
    """The key schema, index keys and settings a TableV2 call declares, in CFN's terms."""
    out: dict[str, Any] = {"TableName": ast.literal_eval(kw["table_name"])}
    keys = [("HASH", "partition_key"), ("RANGE", "sort_key")]
    out["KeySchema"] = [
        {"AttributeName": _attr(kw[arg])[0], "KeyType": role} for role, arg in keys if arg in kw
    ]
    indexes = {}
    for arg in ("global_secondary_indexes", "local_secondary_indexes"):
        if arg not in kw:
            continue
        node = kw[arg]
        assert isinstance(node, ast.List)
        for call in node.elts:
            assert isinstance(call, ast.Call)
            ikw = _call_kwargs(call)
            schema = [
                {"AttributeName": _attr(ikw[a])[0], "KeyType": role} for role, a in keys if a in ikw
            ]
            # A multi-attribute GSI key: partition_keys / sort_keys lists, in order.
            for role, a in (("HASH", "partition_keys"), ("RANGE", "sort_keys")):
                if a in ikw:
                    parts = ikw[a]
                    assert isinstance(parts, ast.List)
                    schema += [{"AttributeName": _attr(p)[0], "KeyType": role} for p in parts.elts]
            roles = [k["KeyType"] for k in schema]
            assert roles == sorted(roles), "HASH parts before RANGE parts"
            if arg == "local_secondary_indexes":
                schema.insert(0, out["KeySchema"][0])
            projection = ikw["projection_type"]
            assert isinstance(projection, ast.Attribute)
            entry: dict[str, Any] = {"ProjectionType": projection.attr}
            if "non_key_attributes" in ikw:
                entry["NonKeyAttributes"] = ast.literal_eval(ikw["non_key_attributes"])
            indexes[ast.literal_eval(ikw["index_name"])] = (schema, entry)
    out["indexes"] = indexes
    out["ttl"] = (
        ast.literal_eval(kw["time_to_live_attribute"]) if "time_to_live_attribute" in kw else None
    )
    return out


def _cfn_keys(table: st.Table) -> dict[str, Any]:
    props = cloudformation_resource(table)["Properties"]
    indexes = {
        i["IndexName"]: (i["KeySchema"], i["Projection"])
        for arg in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
        for i in props.get(arg, [])
    }
    ttl = props.get("TimeToLiveSpecification", {}).get("AttributeName")
    return {
        "TableName": props["TableName"],
        "KeySchema": props["KeySchema"],
        "indexes": indexes,
        "ttl": ttl,
    }


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_cdk_declares_what_cloudformation_declares(table: st.Table) -> None:
    (kw,) = _tables_v2(cdk_module(table))
    assert _cdk_as_cfn_keys(kw) == _cfn_keys(table)


def test_cdk_settings_of_the_full_table() -> None:
    source = cdk_module(full_table())
    compile(source, "tables_cdk.py", "exec")
    for text in (
        "dynamodb.Capacity.fixed(5)",
        "dynamodb.Capacity.autoscaled(min_capacity=5, max_capacity=5)",
        "dynamo_stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES",
        "point_in_time_recovery_enabled=True",
        "deletion_protection=True",
        "encryption=dynamodb.TableEncryptionV2.aws_managed_key()",
        'CfnTag(key="env", value="prod")',
        "removal_policy=RemovalPolicy.RETAIN",
    ):
        assert text in source


def test_multi_attribute_gsi_keys_are_rendered_as_lists() -> None:
    # The neutral definition holds index keys as parts, so a GSI whose key has several
    # attributes needs nothing new from the writers that support it.
    d = table_definition(st.Table("t"))
    gsi = IndexDefinition(
        "ByRegion",
        "GSI",
        (
            KeyAttribute("region", "S", "HASH"),
            KeyAttribute("tier", "N", "HASH"),
            KeyAttribute("day", "S", "RANGE"),
        ),
        "ALL",
    )
    d = type(d)(
        **{
            **d.__dict__,
            "indexes": (gsi,),
            "attributes": (*d.attributes, ("region", "S"), ("tier", "N"), ("day", "S")),
        }
    )
    source = cdk_module(d)
    assert 'partition_keys=[dynamodb.Attribute(name="region"' in source
    assert 'dynamodb.Attribute(name="tier", type=dynamodb.AttributeType.NUMBER)]' in source
    assert 'sort_key=dynamodb.Attribute(name="day"' in source
    request = st.create_table_request(d)
    assert request["GlobalSecondaryIndexes"][0]["KeySchema"] == [
        {"AttributeName": "region", "KeyType": "HASH"},
        {"AttributeName": "tier", "KeyType": "HASH"},
        {"AttributeName": "day", "KeyType": "RANGE"},
    ]
    config = terraform_config(d)
    assert config["terraform"]["required_providers"]["aws"]["version"] == ">= 6.29.0"
    (gsi_block,) = config["resource"]["aws_dynamodb_table"]["t"]["global_secondary_index"]
    assert "hash_key" not in gsi_block
    assert "range_key" not in gsi_block
    assert gsi_block["key_schema"] == [
        {"attribute_name": "region", "key_type": "HASH"},
        {"attribute_name": "tier", "key_type": "HASH"},
        {"attribute_name": "day", "key_type": "RANGE"},
    ]
    # Only a GSI may have several attributes in a role: a table key may not.
    two_hash = (KeyAttribute("a", "S", "HASH"), KeyAttribute("b", "S", "HASH"))
    with pytest.raises(st.ModelDefinitionError, match=r"multi-attribute key \(a, b\)"):
        terraform_config(type(d)(**{**d.__dict__, "key": two_hash}))


def test_terraform_keeps_single_attribute_gsis_on_the_old_form() -> None:
    config = terraform_config(examples.demo)
    assert config["terraform"]["required_providers"]["aws"]["version"] == ">= 5.0"
    for res in config["resource"]["aws_dynamodb_table"].values():
        for gsi in res.get("global_secondary_index", []):
            assert "hash_key" in gsi
            assert "key_schema" not in gsi


@given(hs.text(max_size=20))
def test_python_string_literals_read_back(text: str) -> None:
    assert ast.literal_eval(py_str(text)) == text


# -- Terraform: the provider schema check --------------------------------------------------

_TYPES = {"string": str, "number": int, "bool": bool}


def _check_value(kind: Any, value: Any, where: str) -> None:
    if isinstance(kind, str):
        assert isinstance(value, _TYPES[kind]), f"{where}: {value!r} is not a {kind}"
    else:
        container, inner = kind
        assert container in ("list", "set", "map"), f"{where}: unexpected type {kind}"
        items = value.values() if container == "map" else value
        assert isinstance(value, dict if container == "map" else list), where
        for item in items:
            _check_value(inner, item, where)


def check_block(block: dict[str, Any], schema: dict[str, Any], where: str) -> None:
    """``block`` (JSON syntax) against a trimmed provider schema block."""
    attributes, blocks = schema["attributes"], schema["block_types"]
    for name, value in block.items():
        if name in attributes:
            spec = attributes[name]
            assert spec.get("required") or spec.get("optional"), f"{where}.{name} is computed only"
            _check_value(spec["type"], value, f"{where}.{name}")
        elif name in blocks:
            spec = blocks[name]
            many = spec["nesting_mode"] in ("list", "set")
            values = value if many and isinstance(value, list) else [value]
            assert "max_items" not in spec or len(values) <= spec["max_items"], f"{where}.{name}"
            for item in values:
                assert isinstance(item, dict), f"{where}.{name}"
                check_block(item, spec["block"], f"{where}.{name}")
        else:
            assert name == "lifecycle", f"{where}: {name!r} is no argument of aws_dynamodb_table"
    for name, spec in attributes.items():
        assert not spec.get("required") or name in block, f"{where}: {name} is required"


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_terraform_resource_fits_the_provider_schema(table: st.Table) -> None:
    config = terraform_config(table)
    assert config["terraform"]["required_providers"]["aws"]["source"] == "hashicorp/aws"
    for name, resource in config["resource"]["aws_dynamodb_table"].items():
        check_block(resource, SCHEMA["block"], name)
        for gsi in resource.get("global_secondary_index", []):
            check_gsi_key(gsi, f"{name}.{gsi['name']}")


def check_gsi_key(gsi: dict[str, Any], where: str) -> None:
    """The provider's rules on a GSI's key (docs): hash_key XOR key_schema, 1-4 + 0-4."""
    assert ("hash_key" in gsi) != ("key_schema" in gsi), f"{where}: hash_key xor key_schema"
    if "key_schema" in gsi:
        assert "range_key" not in gsi, where
        roles = [k["key_type"] for k in gsi["key_schema"]]
        assert roles == sorted(roles), f"{where}: HASH parts first"  # "HASH" < "RANGE"
        assert 1 <= roles.count("HASH") <= 4, where
        assert roles.count("RANGE") <= 4, where
        assert set(roles) <= {"HASH", "RANGE"}, where


def test_terraform_schema_check_is_really_checking() -> None:
    resource = terraform_config(full_table())["resource"]["aws_dynamodb_table"]["orders_prod"]
    for broken in (
        {**resource, "hash_keys": "PK"},
        {**resource, "ttl": {"attribute_name": "expires", "enabled": "yes"}},
        {k: v for k, v in resource.items() if k != "name"},
    ):
        with pytest.raises(AssertionError):
            check_block(broken, SCHEMA["block"], "orders_prod")
    native = next(g for g in resource["global_secondary_index"] if "key_schema" in g)
    for broken_gsi in (
        {**native, "hash_key": "region"},
        {**native, "key_schema": native["key_schema"][::-1]},
        {**native, "key_schema": [{"attribute_name": "x", "key_type": "HASH"}] * 5},
        {**native, "key_schema": [{"attribute_name": "x", "key_type": "SORT"}]},
    ):
        with pytest.raises(AssertionError):
            check_gsi_key(broken_gsi, "g")
    with pytest.raises(AssertionError):
        check_block(
            {**native, "key_schema": [{"attribute_name": "x"}]},
            SCHEMA["block"]["block_types"]["global_secondary_index"]["block"],
            "g",
        )


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_terraform_declares_what_cloudformation_declares(table: st.Table) -> None:
    (res,) = terraform_config(table)["resource"]["aws_dynamodb_table"].values()
    props = cloudformation_resource(table)["Properties"]
    assert res["name"] == props["TableName"]
    assert [
        {"AttributeName": a["name"], "AttributeType": a["type"]} for a in res["attribute"]
    ] == props["AttributeDefinitions"]
    assert [res["hash_key"], res.get("range_key")] == [
        *(k["AttributeName"] for k in props["KeySchema"]),
        *([None] if len(props["KeySchema"]) == 1 else []),
    ]
    cfn_gsis = {g["IndexName"]: g for g in props.get("GlobalSecondaryIndexes", [])}
    for gsi in res.get("global_secondary_index", []):
        cfn = cfn_gsis.pop(gsi["name"])
        if "key_schema" in gsi:
            assert [
                {"AttributeName": k["attribute_name"], "KeyType": k["key_type"]}
                for k in gsi["key_schema"]
            ] == cfn["KeySchema"]
        else:
            assert [gsi["hash_key"], *([gsi["range_key"]] if "range_key" in gsi else [])] == [
                k["AttributeName"] for k in cfn["KeySchema"]
            ]
        assert gsi["projection_type"] == cfn["Projection"]["ProjectionType"]
        assert gsi.get("non_key_attributes") == cfn["Projection"].get("NonKeyAttributes")
    assert not cfn_gsis
    assert res.get("ttl", {}).get("attribute_name") == props.get("TimeToLiveSpecification", {}).get(
        "AttributeName"
    )


@given(hs.text(alphabet="aZ09_.-", min_size=3, max_size=30))
def test_terraform_resource_names_are_identifiers(name: str) -> None:
    (key,) = terraform_config(st.Table(name))["resource"]["aws_dynamodb_table"]
    assert key[0].isalpha() or key[0] == "_"
    assert all(c.isalnum() or c == "_" for c in key)
