"""``singletable unique check``, invoked like a user would."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import singletable as st
from singletable.cli.codes import ExitCode
from tests.cli.running import model_module, run

MODEL = """
import singletable as st

table = st.Table("unique-cli")

class Customer(st.Entity, table=table, pk="C#{cid}", sk="C", unique=("email",)):
    cid: str
    email: str
"""


@pytest.fixture
def model(tmp_path: Path) -> Iterator[Any]:
    with model_module(tmp_path, "unique_cli", MODEL) as module:
        yield module


def test_check_lists_the_findings_and_repair_fixes_them(
    model: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    Customer = model.Customer
    with st.embedded(model.table) as db:
        for i in range(30):
            Customer.create(Customer(cid=f"c{i}", email=f"{i}@x")).run(db)
        # A raw delete leaves the guard: the value stays blocked.
        db.call(
            "delete_item", {"TableName": "unique-cli", "Key": Customer(cid="c3", email="3@x").key()}
        )
        db.call(
            "put_item",
            {"TableName": "unique-cli", "Item": Customer(cid="c9", email="new@x").to_item()},
        )

        code, out = run("unique", "check", model.path, "--segments", "3")
        assert code == ExitCode.ITEMS_FAILED
        lines = out.splitlines()
        assert sorted(lines[:-1]) == [
            "missing: Customer unique email {'email': 'new@x'} (unique-cli): the value has no "
            "guard: another item could take it",
            "orphaned: Customer unique email {'email': '3@x'} (unique-cli): its holder is gone",
            "orphaned: Customer unique email {'email': '9@x'} (unique-cli): its holder no "
            "longer holds the value",
        ]
        assert lines[-1].startswith("checked 30 guards and 29 unique values of 59 items in ")
        assert lines[-1].endswith(": 1 missing, 2 orphaned found")
        err = capsys.readouterr().err.splitlines()
        assert err[-1] == (
            "singletable unique: error: 3 finding(s) left; --repair fixes orphaned and missing "
            "guards"
        )
        assert any(line.startswith(f"unique check {model.path}: 59 of ~") for line in err)

        code, out = run("unique", "check", model.path, "--repair")
        assert code == ExitCode.OK
        assert out.splitlines()[-1].endswith(": 1 missing, 2 orphaned found, 3 repaired")
        code, out = run("unique", "check", model.path)
        assert (code, out.splitlines()[-1].endswith(": none found")) == (0, True)
        Customer.create(Customer(cid="c3", email="3@x")).run(db)  # no longer blocked
