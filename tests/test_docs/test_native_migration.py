"""The template-to-native expand/contract example of docs/schema.md, on moto."""

from pathlib import Path

import pytest

from docs_src import native_migration

EXPECTED = {
    "expand": [("online-index-change", {"op": "create_gsi", "index": "ByTenantStatus"})],
    "notes": ["entity Task@1, ByTenantStatus key, empty values"],
    "rewrites": [],
    "open, by due date": ["t2", "t3", "t0"],
    "contract": [("online-index-change", {"op": "delete_gsi", "index": "ByStatus"})],
    "live indexes": ["ByTenantStatus"],
}


def test_expand_move_readers_contract(capsys: pytest.CaptureFixture[str]) -> None:
    assert native_migration.main() == EXPECTED
    assert "'live indexes': ['ByTenantStatus']" in capsys.readouterr().out


def test_the_output_shown_in_the_docs_is_the_real_output() -> None:
    page = (Path(__file__).parents[2] / "docs" / "schema.md").read_text(encoding="utf-8")
    shown = page.split("It returns and prints:\n\n```text\n", 1)[1].split("```", 1)[0]
    assert shown == f"{EXPECTED}\n"
