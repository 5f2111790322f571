"""The planner over generated entity classes: an unchanged model plans no change."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from singletable.tooling.migrations.planner import ChangeClass, plan_changes
from singletable.tooling.migrations.snapshot import load_snapshot, snapshot_json
from tests.strategies import EntitySpec, build_entity, entity_specs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=entity_specs())
def test_the_same_model_declared_again_plans_nothing(spec: EntitySpec) -> None:
    before = build_entity(spec, table_name="app").plan().table
    after = build_entity(spec, table_name="app").plan().table
    plan = plan_changes(after, load_snapshot(snapshot_json(before)))
    assert list(plan.changes) == [], plan.to_text()
    assert plan.worst is ChangeClass.SAFE


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=entity_specs())
def test_a_snapshot_reads_back_to_the_same_document(spec: EntitySpec) -> None:
    table = build_entity(spec, table_name="app").plan().table
    text = snapshot_json(table)
    assert snapshot_json(table) == text  # deterministic
    assert load_snapshot(text) == load_snapshot(snapshot_json(table))
