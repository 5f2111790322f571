"""Results are plain data for pydantic: `Page[T]` is a FastAPI response model.

Every public dataclass that holds results must build a pydantic schema, validate and
serialise; the ones that are not data (a compiled plan, an operation) are listed with
the reason.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel, TypeAdapter

import singletable as st

#: Public dataclasses that are not result data, and why pydantic need not hold them.
NOT_DATA = {
    "EntityPlan": "a compiled class plan (functions, the Table): built by Entity, not validated",
    "TransactGet": "an operation (a builder), not a result",
    "TransactWrite": "an operation (a builder), not a result",
    "DispatchReport": "holds the exception a stream handler raised (BaseException)",
}


class Event(BaseModel):
    actor: str
    seq: int


def test_page_of_a_model_validates_and_serialises() -> None:
    adapter = TypeAdapter(st.Page[Event])
    page = adapter.validate_python(
        {"items": [{"actor": "a", "seq": "1"}], "cursor": "c1", "consumed_capacity": 0.5}
    )
    assert page == st.Page(items=[Event(actor="a", seq=1)], cursor="c1", consumed_capacity=0.5)
    assert adapter.dump_python(page, mode="json") == {
        "items": [{"actor": "a", "seq": 1}],
        "cursor": "c1",
        "unknown": [],
        "consumed_capacity": 0.5,
    }
    schema = adapter.json_schema()
    assert schema["properties"]["items"]["items"] == {"$ref": "#/$defs/Event"}


def test_page_of_an_entity_is_a_fastapi_response_model() -> None:
    table = st.Table("pages")

    class Note(st.Entity, table=table, pk="NOTE#{note_id}", sk="META"):
        note_id: str
        text: str = ""

    app = FastAPI()

    @app.get("/notes", response_model=st.Page[Note])
    def notes() -> Any:
        return st.Page(items=[Note(note_id="n1", text="hi")], cursor=None)

    response = TestClient(app).get("/notes")
    assert response.status_code == 200
    assert response.json() == {
        "items": [{"note_id": "n1", "text": "hi"}],
        "cursor": None,
        "unknown": [],
        "consumed_capacity": 0.0,
    }
    assert "Page_Note_" in str(app.openapi()["components"]["schemas"])


PUBLIC_DATACLASSES = sorted(
    name
    for name in st.__all__
    if isinstance(getattr(st, name), type) and dataclasses.is_dataclass(getattr(st, name))
)


@pytest.mark.parametrize("name", PUBLIC_DATACLASSES)
def test_every_public_result_dataclass_has_a_pydantic_schema(name: str) -> None:
    if name in NOT_DATA:
        return
    cls = getattr(st, name)
    target = cls[Event] if getattr(cls, "__parameters__", ()) else cls
    assert TypeAdapter(target).json_schema()["type"] == "object"


def test_the_not_data_list_is_current() -> None:
    assert set(NOT_DATA) <= set(PUBLIC_DATACLASSES)
