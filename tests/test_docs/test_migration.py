"""The planner example of docs/schema.md classifies each change as the page says."""

from pathlib import Path

import pytest

import singletable as st
from docs_src import migration


def test_plan_classifies_each_change(capsys: pytest.CaptureFixture[str]) -> None:
    plan = migration.main()
    kinds = {c.subject: c.kind for c in plan.changes}
    assert kinds == {
        "GSI GSI1 added": st.ChangeClass.SAFE,
        "entity Order@1, <table> key": st.ChangeClass.ITEM_REWRITE,
        "entity Order@1, GSI1 key": st.ChangeClass.SAFE,
        "entity Order@1, attribute status": st.ChangeClass.SAFE,
    }
    assert plan.exit_code == 4
    assert "width 6 -> 8" in capsys.readouterr().out


def test_an_unchanged_model_plans_nothing() -> None:
    snapshot = st.load_snapshot(st.snapshot_json(migration.before()))
    plan = st.plan_changes(migration.before(), snapshot)
    assert plan.changes == ()
    assert plan.exit_code == 0


def test_the_output_shown_in_the_docs_is_the_real_output() -> None:
    page = (Path(__file__).parents[2] / "docs" / "schema.md").read_text(encoding="utf-8")
    shown = page.split("It prints:\n\n```text\n", 1)[1].split("```", 1)[0]
    assert shown == migration.main().to_text()
