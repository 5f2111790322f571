"""Table definitions: CloudFormation (JSON and YAML, checked by cfn-lint) and create_table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as hs

import singletable as st
from singletable import examples
from singletable.tooling.definitions.schema import (
    cloudformation_template,
    logical_id,
    to_json,
    to_yaml,
)
from tests.schema_models import full_table

EXPECTED = Path(__file__).parents[2] / "expected"
# SINGLETABLE_REGEN=1 rewrites the expected files (review the diff before committing).
REGEN = os.environ.get("SINGLETABLE_REGEN") == "1"


def cfn_lint(*paths: str) -> subprocess.CompletedProcess[str]:
    # The console script: cfnlint has no ``__main__``. Prefer the one beside this Python.
    exe = shutil.which("cfn-lint", path=str(Path(sys.executable).parent)) or shutil.which(
        "cfn-lint"
    )
    assert exe is not None, "cfn-lint is a test dependency: pip install cfn-lint"
    return subprocess.run([exe, *paths], capture_output=True, text=True, check=False)


def check_expected(name: str, text: str) -> None:
    path = EXPECTED / name
    if REGEN:
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text, (
        f"{name} differs; SINGLETABLE_REGEN=1 to update"
    )


ARTEFACTS = {
    "demo.cfn.json": lambda: to_json(cloudformation_template(examples.demo)),
    "demo.cfn.yaml": lambda: to_yaml(cloudformation_template(examples.demo)),
    "demo.create_table.json": lambda: to_json(st.create_table_request(examples.demo)),
    "full.cfn.json": lambda: to_json(cloudformation_template(full_table())),
    "full.cfn.yaml": lambda: to_yaml(cloudformation_template(full_table())),
}


@pytest.mark.parametrize("name", sorted(ARTEFACTS))
def test_generated_artefacts_match_committed_files(name: str) -> None:
    check_expected(name, ARTEFACTS[name]())


def test_cfn_lint_accepts_generated_templates(tmp_path: Path) -> None:
    paths = []
    for name in ("demo.cfn.json", "demo.cfn.yaml", "full.cfn.json", "full.cfn.yaml"):
        path = tmp_path / name.replace(".cfn", "")
        path.write_text(ARTEFACTS[name](), encoding="utf-8")
        paths.append(str(path))
    done = cfn_lint(*paths)
    assert done.returncode == 0, done.stdout + done.stderr


def test_cfn_lint_is_really_checking(tmp_path: Path) -> None:
    # Guards the test above: a broken template must fail it.
    template = cloudformation_template(full_table())
    del template["Resources"]["OrdersProdTable"]["Properties"]["KeySchema"]
    path = tmp_path / "broken.json"
    path.write_text(to_json(template), encoding="utf-8")
    done = cfn_lint(str(path))
    assert done.returncode != 0
    assert "KeySchema" in done.stdout


def test_full_table_properties() -> None:
    resource = cloudformation_template(full_table())["Resources"]["OrdersProdTable"]
    props = resource["Properties"]
    assert resource["DeletionPolicy"] == "Retain"
    assert [a["AttributeName"] for a in props["AttributeDefinitions"]] == [
        "PK",
        "SK",
        "GSI1PK",
        "GSI1SK",
        "GSI2PK",
        "LSI1SK",
        "region",
        "tier",
        "placed",
        "seq",
        "tag",
    ]
    assert props["ProvisionedThroughput"] == {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
    gsis = {g["IndexName"]: g for g in props["GlobalSecondaryIndexes"]}
    assert gsis["ByStatus"]["ProvisionedThroughput"] == {
        "ReadCapacityUnits": 2,
        "WriteCapacityUnits": 1,
    }
    assert gsis["ByCustomer"]["Projection"] == {
        "ProjectionType": "INCLUDE",
        # The bookkeeping attributes ride along, or entity queries on the index find nothing.
        "NonKeyAttributes": ["total", "status", "_et", "_ev"],
    }
    # A native GSI: every partition part (HASH), then every sort part (RANGE), in order.
    assert [(k["AttributeName"], k["KeyType"]) for k in gsis["ByRegion"]["KeySchema"]] == [
        ("region", "HASH"),
        ("tier", "HASH"),
        ("placed", "RANGE"),
        ("seq", "RANGE"),
        ("tag", "RANGE"),
    ]
    assert props["LocalSecondaryIndexes"][0]["KeySchema"][0]["AttributeName"] == "PK"
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expires", "Enabled": True}
    assert props["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["DeletionProtectionEnabled"] is True
    assert props["SSESpecification"] == {"SSEEnabled": True, "SSEType": "KMS"}
    assert props["Tags"] == [{"Key": "env", "Value": "prod"}, {"Key": "team", "Value": "core"}]


def test_minimal_table_omits_optional_properties() -> None:
    props = cloudformation_template(st.Table("t"))["Resources"]["TTable"]["Properties"]
    assert sorted(props) == ["AttributeDefinitions", "BillingMode", "KeySchema", "TableName"]


def test_yaml_reads_back_as_the_json_template() -> None:
    for table in (examples.demo, full_table()):
        template = cloudformation_template(table)
        assert yaml.safe_load(to_yaml(template)) == template
        assert json.loads(to_json(template)) == template


TRICKY = [
    "yes",
    "No",
    "ON",
    "y",
    "null",
    "~",
    "1",
    "-1",
    "1.5",
    "1e3",
    "0x10",
    ".inf",
    "NaN",
    "2010-09-09",
    "a: b",
    "a:",
    "#x",
    "x #y",
    "- x",
    "",
    " lead",
    "trail ",
    "é",
    "tab\t",
    "multi\nline",
    "'q'",
    '"dq"',
    "a::b",
    "@x",
    "*x",
    "&x",
    "!Ref x",
    "%x",
    "{}",
    "[]",
    "?",
    "|",
    ">",
    "\u2028",
    "\x00",
]


@pytest.mark.parametrize("text", TRICKY)
def test_yaml_scalars_read_back_exactly(text: str) -> None:
    data = {text: [text, {text: text}], "k": text}
    assert yaml.safe_load(to_yaml(data)) == data


json_values = hs.recursive(
    hs.none() | hs.booleans() | hs.integers() | hs.text(),
    lambda inner: hs.lists(inner, max_size=3) | hs.dictionaries(hs.text(), inner, max_size=3),
    max_leaves=10,
)


@given(json_values)
def test_yaml_round_trips_json_shaped_data(value: Any) -> None:
    assert yaml.safe_load(to_yaml(value)) == value


def test_yaml_floats() -> None:
    assert yaml.safe_load(to_yaml({"a": [1.5, -0.25, 3.0]})) == {"a": [1.5, -0.25, 3.0]}


def test_yaml_refuses_non_json_values() -> None:
    with pytest.raises(TypeError, match="cannot write set"):
        to_yaml({"a": {1, 2}})
    with pytest.raises(TypeError, match="cannot write float 1e\\+20"):
        to_yaml([1e20])


def test_logical_ids_are_alphanumeric_and_clashes_are_refused() -> None:
    assert logical_id(st.Table("singletable-demo")) == "SingletableDemoTable"
    assert logical_id(st.Table("9lives")) == "T9livesTable"
    with pytest.raises(st.ModelDefinitionError, match=r"'my\.table'.*'MyTableTable'"):
        cloudformation_template([st.Table("my-table"), st.Table("my.table")])


def test_yaml_keys_beyond_the_implicit_key_limit_use_the_explicit_form() -> None:
    # YAML refuses implicit keys over 1024 characters (hypothesis found the case).
    data = {"k" * 2000: {"nested": ["v" * 1500]}, "short": {"é" * 1100: 1}}
    text = to_yaml(data)
    assert "? " in text
    assert yaml.safe_load(text) == data
