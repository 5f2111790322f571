"""Fields with pydantic aliases: stored under the field's name, read back whole."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field

import singletable as st
from tests.integration._executors import connect


def test_aliased_fields_round_trip_through_every_read(
    dynamodb_client: Any, table_name: str
) -> None:
    table = st.Table(table_name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Note(
        st.Entity,
        table=table,
        pk="U#{user}",
        sk="N#{n}",
        indexes={"GSI1": st.IndexKeys(pk="TAG#{tag}", sk="{n}")},
    ):
        user: str
        n: int
        text: str = Field(default="", alias="body")
        tag: str = Field(validation_alias=AliasChoices("label", "tag_name"))
        stars: int = Field(default=0, serialization_alias="rating")

    db = connect(dynamodb_client)
    db.create_table(table)
    note = Note(user="u", n=1, body="hello", label="work", stars=4)
    Note.put(note).run(db)
    # Stored attributes are named after the fields (what templates and filters use).
    assert {"text", "tag", "stars"} <= set(note.to_item())
    assert Note.get(user="u", n=1).run(db) == note
    assert Note.query(user="u").all(db) == [note]
    assert Note.query(index="GSI1", tag="work").all(db) == [note]
    assert Note.query(user="u").filter(Note.f.text == "hello").all(db) == [note]
    updated = Note.update(user="u", n=1).set(text="bye", tag="home").run(db)
    assert updated == Note(user="u", n=1, body="bye", label="home", stars=4)
    assert Note.query(index="GSI1", tag="home").all(db) == [updated]
