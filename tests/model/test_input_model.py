"""`Entity.input_model`: request models without the fields the library writes."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated

import pytest
from pydantic import Field, ValidationError, field_validator

import singletable as st

table = st.Table("inputs", ttl_attribute="expires")


class Task(
    st.Entity,
    table=table,
    pk="T#{tenant}",
    sk="TASK#{task_id}",
    version_field="version",
    created_at="created_at",
    updated_at="updated_at",
    ttl="expires_at",
):
    tenant: str
    task_id: str
    title: Annotated[str, Field(min_length=1, alias="name")]
    version: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    expires_at: datetime | None = None

    @field_validator("title")
    @classmethod
    def _no_shouting(cls, value: str) -> str:
        if value.isupper():
            raise ValueError("no shouting")
        return value


def test_the_fields_the_library_writes_are_left_out_and_refused() -> None:
    TaskInput = Task.input_model()
    assert TaskInput.__name__ == "TaskInput"
    assert list(TaskInput.model_fields) == ["tenant", "task_id", "title"]
    body = {"tenant": "t", "task_id": "1", "name": "write"}
    for forged in ("version", "created_at", "updated_at", "expires_at", "unknown"):
        with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
            TaskInput.model_validate({**body, forged: 7})
    task = TaskInput.model_validate(body).to_entity()
    assert task == Task.model_validate({"tenant": "t", "task_id": "1", "name": "write"})
    assert (task.version, task.created_at) == (0, None)  # written by create()
    assert TaskInput.model_json_schema()["additionalProperties"] is False


def test_exclude_keep_and_values_given_to_to_entity() -> None:
    TaskInput = Task.input_model(exclude=["tenant"], keep=["expires_at"], name="NewTask")
    assert (TaskInput.__name__, list(TaskInput.model_fields)) == (
        "NewTask",
        ["task_id", "title", "expires_at"],
    )
    when = datetime(2030, 1, 1, tzinfo=timezone.utc)
    body = TaskInput.model_validate({"task_id": "1", "name": "x", "expires_at": when})
    assert body.to_entity(tenant="from-url") == Task.model_validate(
        {"tenant": "from-url", "task_id": "1", "name": "x", "expires_at": when}
    )
    # The entity's own constraints and validators hold for the input and the entity.
    with pytest.raises(ValidationError, match="at least 1 character"):
        TaskInput.model_validate({"task_id": "1", "name": ""})
    assert body.to_entity(tenant="t", title="by name").title == "by name"
    with pytest.raises(ValidationError, match="no shouting"):
        TaskInput.model_validate({"task_id": "1", "name": "X"}).to_entity(tenant="t")


def test_bad_input_model_declarations_are_refused() -> None:
    with pytest.raises(st.ModelDefinitionError, match=r"exclude= names unknown fields \['nope'\]"):
        Task.input_model(exclude=["nope"])
    with pytest.raises(st.ModelDefinitionError, match="keep= names unknown fields"):
        Task.input_model(keep=["nope"])

    class Strict(st.Entity, table=table, pk="S#{sid}", sk="S", version_field="version"):
        sid: str
        version: int

    with pytest.raises(st.ModelDefinitionError, match="'version' is written by the library"):
        Strict.input_model()
    assert list(Strict.input_model(keep=["version"]).model_fields) == ["sid", "version"]
