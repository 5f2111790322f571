"""The real validators: ``cdk synth`` and ``terraform validate`` on the generated outputs.

Opt-in (``--deploy-tools`` or ``SINGLETABLE_DEPLOY_TOOLS=1``); deselected otherwise,
because the tools are a large install the default suite does not make. A missing tool
fails these tests, it never skips them. ``bash scripts/deploy-tools`` installs the CDK
(npm ``aws-cdk``, PyPI ``aws-cdk-lib`` into ``.deploy-tools/``) and runs them; by hand::

    SINGLETABLE_CDK_DIR=DIR python3 -m pytest tests/tooling/definitions --deploy-tools

where DIR holds ``node_modules/.bin/cdk`` and ``py/`` (``pip install --target DIR/py``).

Terraform needs ``terraform`` on the PATH and the hashicorp/aws provider, either from the
registry or from a local mirror named by ``SINGLETABLE_TF_PLUGINS`` (a directory laid out
as ``registry.terraform.io/hashicorp/aws/<version>/<platform>/``). The full table has a
native GSI, written with ``key_schema``, so the provider must be 6.29.0 or later (the
output's ``required_providers`` says so: an older one fails ``terraform init``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from singletable import examples
from singletable.tooling.definitions.cdk import cdk_module
from singletable.tooling.definitions.schema import cloudformation_template, to_json
from singletable.tooling.definitions.terraform import terraform_config
from tests.schema_models import full_table

pytestmark = pytest.mark.deploy_tools

APP = """\
import aws_cdk as cdk
from tables_cdk import add_tables

app = cdk.App()
add_tables(cdk.Stack(app, "Tables"))
app.synth()
"""


def test_cdk_synth(tmp_path: Path) -> None:
    cdk_dir = Path(os.environ.get("SINGLETABLE_CDK_DIR", ""))
    cdk = cdk_dir / "node_modules" / ".bin" / "cdk"
    assert cdk.is_file(), "set SINGLETABLE_CDK_DIR to an npm prefix holding aws-cdk"
    tables = [examples.demo, full_table()]
    (tmp_path / "tables_cdk.py").write_text(cdk_module(tables), encoding="utf-8")
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    (tmp_path / "cdk.json").write_text(json.dumps({"app": f"{sys.executable} app.py"}))
    env = {
        **os.environ,
        "PYTHONPATH": f"{cdk_dir / 'py'}:{tmp_path}",
        "CDK_DISABLE_CLI_TELEMETRY": "true",
    }
    done = subprocess.run(
        [str(cdk), "synth", "--no-notices", "--no-version-reporting", "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    template = json.loads((tmp_path / "cdk.out" / "Tables.template.json").read_text())
    synthesized = {
        r["Properties"]["TableName"]: r["Properties"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::DynamoDB::GlobalTable"
    }
    ours = cloudformation_template(tables)["Resources"].values()
    for resource in ours:
        props = resource["Properties"]
        got = synthesized.pop(props["TableName"])
        # The GlobalTable the CDK synthesised declares the same keys and indexes as our
        # AWS::DynamoDB::Table (attribute order may differ; capacity is shaped otherwise).
        assert sorted(got["AttributeDefinitions"], key=str) == sorted(
            props["AttributeDefinitions"], key=str
        )
        assert got["KeySchema"] == props["KeySchema"]
        for arg in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
            assert {
                i["IndexName"]: (i["KeySchema"], i["Projection"]) for i in got.get(arg, [])
            } == {i["IndexName"]: (i["KeySchema"], i["Projection"]) for i in props.get(arg, [])}
        assert got.get("TimeToLiveSpecification") == props.get("TimeToLiveSpecification")
    assert not synthesized


def test_terraform_validate(tmp_path: Path) -> None:
    terraform = shutil.which("terraform")
    assert terraform is not None, "terraform is not on the PATH"
    env = {**os.environ, "TF_IN_AUTOMATION": "1"}
    plugins = os.environ.get("SINGLETABLE_TF_PLUGINS")
    if plugins:
        rc = tmp_path / "terraformrc"
        rc.write_text(
            "provider_installation {\n  filesystem_mirror {\n"
            f"    path = {json.dumps(plugins)}\n  }}\n}}\n"
        )
        env["TF_CLI_CONFIG_FILE"] = str(rc)
    work = tmp_path / "module"
    work.mkdir()
    (work / "tables.tf.json").write_text(
        to_json(terraform_config([examples.demo, full_table()])), encoding="utf-8"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [terraform, *args, "-no-color"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )

    init = run("init", "-backend=false", "-input=false")
    assert init.returncode == 0, init.stdout + init.stderr
    done = run("validate", "-json")
    assert json.loads(done.stdout)["valid"] is True, done.stdout
    # And it really checks: an argument the provider does not know fails.
    config = terraform_config(full_table())
    config["resource"]["aws_dynamodb_table"]["orders_prod"]["hash_keys"] = "PK"
    (work / "tables.tf.json").write_text(to_json(config), encoding="utf-8")
    assert json.loads(run("validate", "-json").stdout)["valid"] is False
