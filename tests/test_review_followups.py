"""Update values are validated, get checks identity, a version field keys no index."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated

import pytest
from pydantic import ConfigDict, Field

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


class TaskV2(st.Entity, table=table, pk="TASK#{task_id}", sk="META", name="Task", version=2):
    task_id: str
    owner: str


def test_update_values_are_validated_and_coerced_like_the_model_fields() -> None:
    update = Task.update(task_id="t1").set(due="2026-06-23T08:00:00Z").known(owner="ann")
    params = update.params()
    # The text was coerced to a datetime, so the index key has the key codec's form.
    values = list(params["ExpressionAttributeValues"].values())
    assert {"S": "2026-06-23T08:00:00.000000Z"} in values
    with pytest.raises(st.ItemEncodeError, match=r"Task\.priority: .*less than or equal to 5"):
        Task.update(task_id="t1").set(priority=9)
    with pytest.raises(st.ItemEncodeError, match=r"Task\.due: .*valid datetime"):
        Task.update(task_id="t1").set(due="whenever")


def test_get_refuses_an_item_another_registered_version_wrote() -> None:
    v1 = Task(task_id="t1", owner="ann", due=datetime(2026, 6, 23, tzinfo=timezone.utc))
    item = v1.to_item()
    get = TaskV2.get(task_id="t1")
    with pytest.raises(st.ItemDecodeError, match=r"written by entity 'Task' version 1"):
        get.parse({"Item": item})
    assert Task.get(task_id="t1").parse({"Item": item}) == v1


def test_version_field_cannot_key_an_index() -> None:
    other = st.Table("followups-2", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
    with pytest.raises(st.ModelDefinitionError, match=r"version_field 'rev' cannot be part of"):

        class Doc(
            st.Entity,
            table=other,
            pk="DOC#{doc_id}",
            sk="META",
            indexes={"GSI1": st.IndexKeys(pk="DOCS", sk="{rev}")},
            version_field="rev",
        ):
            doc_id: str
            rev: int = 0


def test_setting_a_required_field_to_none_is_refused() -> None:
    with pytest.raises(st.ExpressionError, match=r"Task: field 'owner' is required"):
        Task.update(task_id="t1").set(owner=None)
    # A field with a default may be removed: reading falls back to the default.
    assert "REMOVE" in Task.update(task_id="t1").set(priority=None).params()["UpdateExpression"]


def test_extra_allow_models_are_refused_rather_than_losing_extra_values() -> None:
    other = st.Table("followups-3")
    with pytest.raises(st.ModelDefinitionError, match=r"Loose: model_config extra='allow'"):

        class Loose(st.Entity, table=other, pk="L#{lid}", sk="META"):
            model_config = ConfigDict(extra="allow")
            lid: str


class Doc(st.Entity, table=table, pk="DOC#{doc_id}", sk="META", version_field="version"):
    doc_id: str
    status: str = "draft"
    version: int = 0


def _fail(op: st.Operation[object], stored: dict[str, object] | None) -> Exception:
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


def test_comparing_an_optional_field_with_none_tests_for_the_missing_attribute() -> None:
    from singletable.expressions.tree import Placeholders, render_condition

    class Note(st.Entity, table=st.Table("followups-4"), pk="N#{nid}", sk="META"):
        nid: str
        body: str | None = None
        meta: dict[str, str | None] = Field(default_factory=dict)

    ph = Placeholders()
    assert render_condition(Note.f.body == None, ph) == "attribute_not_exists (#n0)"  # noqa: E711
    assert render_condition(Note.f.body != None, ph) == "attribute_exists (#n0)"  # noqa: E711
    # Inside a map, None is stored as NULL, so there it is a value comparison.
    nested = render_condition(Note.f.meta["k"] == None, ph)  # noqa: E711
    assert nested == "#n1.#n2 = :v0"
    assert ph.values[":v0"] == {"NULL": True}
