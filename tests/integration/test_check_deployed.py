"""check-deployed: the live table against the model, on moto and DynamoDB Local."""

from __future__ import annotations

import io
from typing import Any

import pytest

import singletable as st
from singletable.cli import main
from singletable.cli.codes import ExitCode
from singletable.tooling.migrations.drift import check_deployed
from singletable.tooling.migrations.planner import ChangeClass
from tests.integration._executors import connect


def model(name: str) -> st.Table:
    return st.Table(
        name,
        indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), st.LSI("LSI1", sk="LSI1SK")],
        ttl_attribute="expires",
        stream="NEW_IMAGE",
    )


def deployed_otherwise(name: str) -> st.Table:
    """The model as someone deployed it by hand: no GSI1, provisioned, TTL never switched on."""
    return st.Table(
        name,
        indexes=[st.LSI("LSI1", sk="LSI1SK")],
        billing_mode="PROVISIONED",
        throughput=st.Throughput(5, 5),
        stream="NEW_IMAGE",
    )


def test_a_table_deployed_from_the_model_has_no_drift(
    dynamodb_client: Any, table_name: str
) -> None:
    db = connect(dynamodb_client)
    db.create_table(model(table_name))
    report = check_deployed(db, model(table_name))
    assert report.changes == (), report.to_text()
    assert "No drift" in report.to_text()


def test_drift_is_named_and_classified(dynamodb_client: Any, table_name: str) -> None:
    db = connect(dynamodb_client)
    db.create_table(deployed_otherwise(table_name))
    report = check_deployed(db, model(table_name))
    found = {c.subject: c.kind for c in report.changes}
    assert found == {
        "GSI GSI1 missing": ChangeClass.ONLINE_INDEX,
        "setting billing_mode": ChangeClass.SAFE,
        "setting throughput": ChangeClass.SAFE,
        "setting ttl_attribute": ChangeClass.SAFE,
    }, report.to_text()
    assert report.worst is ChangeClass.ONLINE_INDEX
    text = report.to_text()
    assert "deployed 'PROVISIONED'; the model has 'PAY_PER_REQUEST'" in text
    assert "deployed None; the model has 'expires'" in text


def test_a_missing_table_and_another_key_schema(dynamodb_client: Any, table_name: str) -> None:
    db = connect(dynamodb_client)
    report = check_deployed(db, model(table_name))
    assert [(c.subject, c.kind) for c in report.changes] == [("table missing", ChangeClass.SAFE)]
    db.create_table(st.Table(table_name, sk="SK2", sk_type="N"))
    report = check_deployed(db, st.Table(table_name))
    assert ("table key schema", ChangeClass.TABLE_MIGRATION) in [
        (c.subject, c.kind) for c in report.changes
    ]
    assert "SK2 (N, RANGE)" in report.to_text()


def native(name: str, pk: list[str], sk: list[str]) -> st.Table:
    """A table with one native GSI over ``pk`` / ``sk`` (declared types)."""
    types: dict[str, Any] = {"tenant": "S", "region": "S", "day": "N", "seq": "N"}
    return st.Table(
        name,
        indexes=[
            st.NativeGSI(
                "ByArea",
                pk=[st.KeyPart(a, types[a]) for a in pk],
                sk=[st.KeyPart(a, types[a]) for a in sk],
            )
        ],
    )


@pytest.mark.parametrize(
    ("pk", "sk"),
    [
        (["region", "tenant"], ["day", "seq"]),  # partition parts in another order
        (["tenant", "region"], ["day"]),  # a sort part missing
    ],
    ids=["part-order", "missing-part"],
)
def test_native_gsi_parts_are_compared_in_order(
    dynamodb_client: Any, table_name: str, pk: list[str], sk: list[str]
) -> None:
    # DescribeTable returns a native GSI's KeySchema with every part, HASH parts first.
    db = connect(dynamodb_client)
    model_native = native(table_name, ["tenant", "region"], ["day", "seq"])
    db.create_table(model_native)
    report = check_deployed(db, model_native)
    assert report.changes == (), report.to_text()
    db.delete_table(table_name)
    db.create_table(native(table_name, pk, sk))
    report = check_deployed(db, model_native)
    assert [(c.subject, c.kind) for c in report.changes] == [
        ("GSI ByArea changed", ChangeClass.ONLINE_INDEX)
    ], report.to_text()
    shown = ", ".join(f"{a} ({'S' if a in ('tenant', 'region') else 'N'}, HASH)" for a in pk)
    assert f"deployed key {shown}" in report.to_text()


@pytest.mark.parametrize(
    ("deploy", "code"),
    [(model, ExitCode.OK), (deployed_otherwise, 3), (None, ExitCode.DRIFT)],
    ids=["matching", "missing-gsi", "missing-table"],
)
def test_the_command_is_a_ci_gate(
    dynamodb_client: Any,
    table_name: str,
    tmp_path: Any,
    dynamodb_endpoint: str | None,
    monkeypatch: pytest.MonkeyPatch,
    deploy: Any,
    code: int,
) -> None:
    if deploy is not None:
        connect(dynamodb_client).create_table(deploy(table_name))
    models = tmp_path / "drift_models.py"
    models.write_text(
        "import singletable as st\n"
        f"table = st.Table({table_name!r}, indexes=[st.GSI('GSI1', pk='GSI1PK', sk='GSI1SK'),"
        " st.LSI('LSI1', sk='LSI1SK')], ttl_attribute='expires', stream='NEW_IMAGE')\n"
    )
    argv = ["check-deployed", f"{models}:table", "--region", "us-east-1"]
    if dynamodb_endpoint is not None:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
        argv += ["--endpoint-url", dynamodb_endpoint]
    out = io.StringIO()
    assert main(argv, out=out) == code, out.getvalue()
    if code == 3:
        assert "[online-index-change] GSI GSI1 missing" in out.getvalue()
