"""Write-path validation: update values like model fields, identity on get, locking messages."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any

import pytest
from pydantic import Field

import singletable as st

table = st.Table("followups", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class Task(
    st.Entity,
    table=table,
    pk="TASK#{task_id}",
    sk="META",
    indexes={"GSI1": st.IndexKeys(pk="DUE#{owner}", sk="{due}")},
):
    task_id: str
    owner: str
    due: datetime
    priority: Annotated[int, Field(ge=1, le=5)] = 3


def test_update_values_are_validated_and_coerced_like_the_model_fields() -> None:
    # An ISO string is coerced as pydantic would; the plugin asks for a datetime.
    update = Task.update(task_id="t1").set(due="2026-06-23T08:00:00Z").known(owner="ann")  # type: ignore[arg-type]
    params = update.params()
    # The text was coerced to a datetime, so the index key has the key codec's form.
    values = list(params["ExpressionAttributeValues"].values())
    assert {"S": "2026-06-23T08:00:00.000000Z"} in values
    with pytest.raises(st.ItemEncodeError, match=r"Task\.priority: .*less than or equal to 5"):
        Task.update(task_id="t1").set(priority=9)
    with pytest.raises(st.ItemEncodeError, match=r"Task\.due: .*valid datetime"):
        Task.update(task_id="t1").set(due="whenever")  # type: ignore[arg-type]  # the run-time refusal is the test


class TaskV2(st.Entity, table=table, pk="TASK#{task_id}", sk="META", name="Task", version=2):
    task_id: str
    owner: str


def test_get_refuses_an_item_another_registered_version_wrote() -> None:
    v1 = Task(task_id="t1", owner="ann", due=datetime(2026, 6, 23, tzinfo=timezone.utc))
    item = v1.to_item()
    get = TaskV2.get(task_id="t1")
    with pytest.raises(st.ItemDecodeError, match=r"written by entity 'Task' version 1"):
        get.parse({"Item": item})
    assert Task.get(task_id="t1").parse({"Item": item}) == v1


def test_setting_a_required_field_to_none_is_refused() -> None:
    with pytest.raises(st.ExpressionError, match=r"Task: field 'owner' is required"):
        Task.update(task_id="t1").set(owner=None)  # type: ignore[arg-type]  # the run-time refusal is the test
    # A field with a default may be removed: reading falls back to the default.
    assert "REMOVE" in Task.update(task_id="t1").set(priority=None).params()["UpdateExpression"]


class Doc(st.Entity, table=table, pk="DOC#{doc_id}", sk="META", version_field="version"):
    doc_id: str
    status: str = "draft"
    version: int = 0


def _fail(op: st.Operation[Any], stored: dict[str, Any] | None) -> Exception:
    from singletable.errors import ServiceError

    steps = op.steps()
    next(steps)
    response = {"Item": stored} if stored is not None else {}
    with pytest.raises(st.ConditionFailedError) as caught:
        steps.throw(ServiceError("ConditionalCheckFailedException", "failed", response=response))
    return caught.value


def test_versioned_put_with_a_condition_tells_which_check_failed() -> None:
    doc = Doc(doc_id="d1", version=3)
    stored_same = Doc(doc_id="d1", status="live", version=3).to_item()
    stored_newer = Doc(doc_id="d1", version=4).to_item()
    condition = Doc.f.status == "draft"
    moved = _fail(Doc.put(doc, condition=condition), stored_newer)
    assert isinstance(moved, st.VersionConflictError)
    held = _fail(Doc.put(doc, condition=condition), stored_same)
    assert type(held) is st.ConditionFailedError
    assert "put condition failed" in str(held)


def test_a_put_that_keeps_its_version_tells_which_check_failed() -> None:
    doc = Doc(doc_id="d1", version=3)
    condition = Doc.f.status == "draft"
    kept = st.Put(doc, keep_version=True, condition=condition)
    assert kept.written.version == 3
    # Nothing stored, or version 3 stored: the version check held, so the condition failed.
    for stored in (None, Doc(doc_id="d1", status="live", version=3).to_item()):
        held = _fail(st.Put(doc, keep_version=True, condition=condition), stored)
        assert type(held) is st.ConditionFailedError
    moved = _fail(kept, Doc(doc_id="d1", version=4).to_item())
    assert isinstance(moved, st.VersionConflictError)
    assert str(moved) == (
        "entity Doc: version conflict: this write expected no stored item or one at version "
        "3, but the stored item is at version 4"
    )
