"""docs/deploy.md shows each output of its example model; this test writes and checks them.

The outputs live in docs_src/deploy/ and the page includes them, so they cannot go stale:
a model or writer change fails here until ``SINGLETABLE_REGEN=1`` rewrites them (review
the diff). The check-deployed output is the report against a hand-deployed variant.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest

import singletable as st
from docs_src.deploy import model
from singletable.cli import main
from singletable.tooling.migrations.drift import Deployed, drift

HERE = Path(__file__).parents[2] / "docs_src" / "deploy"
REGEN = os.environ.get("SINGLETABLE_REGEN") == "1"
MODEL = "docs_src.deploy.model:shop"


def run(*argv: str) -> str:
    out = io.StringIO()
    assert main(list(argv), out=out) == 0
    return out.getvalue()


def drift_report() -> str:
    # The table as someone deployed it by hand: no GSI1, provisioned, no TTL, no stream.
    deployed = st.Table("shop", billing_mode="PROVISIONED", throughput=st.Throughput(5, 5))
    request = st.create_table_request(deployed)
    live = {**request, "BillingModeSummary": {"BillingMode": "PROVISIONED"}}
    backups = {"PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"}}
    return drift(model.shop, Deployed(live, {"TimeToLiveStatus": "DISABLED"}, backups)).to_text()


OUTPUTS: dict[str, Callable[[], str]] = {
    "cloudformation.yaml": lambda: run("synth", MODEL, "--format", "yaml"),
    "create_table.json": lambda: run("synth", MODEL, "--format", "create-table"),
    "tables_cdk.py.txt": lambda: run("synth", MODEL, "--format", "cdk"),
    "tables.tf.json": lambda: run("synth", MODEL, "--format", "terraform"),
    "workbench.json": lambda: run(
        "workbench", "export", MODEL, "--items", "docs_src.deploy.model:sample"
    ),
    "check_deployed.txt": drift_report,
}


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_the_page_shows_what_the_commands_write(name: str) -> None:
    text = OUTPUTS[name]()
    path = HERE / name
    if REGEN:
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text, f"{name} differs; SINGLETABLE_REGEN=1"


def test_the_page_includes_every_output() -> None:
    page = (Path(__file__).parents[2] / "docs" / "deploy.md").read_text(encoding="utf-8")
    for name in [*OUTPUTS, "model.py"]:
        assert f'--8<-- "docs_src/deploy/{name}"' in page, name


def test_the_workbench_model_imports_back(tmp_path: Path) -> None:
    entities = tmp_path / "entities.py"
    run("workbench", "import", str(HERE / "workbench.json"), "-o", str(entities))
    source = entities.read_text()
    assert 'sk="ORDER#{placed}#LINE#{n}"' in source
    assert 'indexes={"GSI1": st.IndexKeys(pk="STATUS#{status}", sk="{placed}")}' in source
