"""A collection query returns its declared members only; the rest is in ``unknown``."""

from __future__ import annotations

from typing import Any

import singletable as st
from tests.integration._executors import connect


def test_collection_does_not_decode_entities_it_does_not_declare(
    dynamodb_client: Any, table_name: str
) -> None:
    table = st.Table(table_name)

    class Team(st.Entity, table=table, pk="TEAM#{team}", sk="A"):
        team: str

    class Member(st.Entity, table=table, pk="TEAM#{team}", sk="M#{name}"):
        team: str
        name: str

    class Invite(st.Entity, table=table, pk="TEAM#{team}", sk="I#{email}"):
        team: str
        email: str

    db = connect(dynamodb_client)
    db.create_table(table)
    st.BatchWrite(
        [Team(team="t"), Member(team="t", name="ann"), Invite(team="t", email="x@y")]
    ).run(db)
    result = st.Collection("members", Member).query(team="t").all(db)
    assert list(result) == [Member(team="t", name="ann")]
    assert sorted(item["_et"]["S"] for item in result.unknown) == ["Invite", "Team"]
    both = st.Collection("both", Team, Member).query(team="t").all(db)
    assert list(both) == [Team(team="t"), Member(team="t", name="ann")]
    assert [item["_et"]["S"] for item in both.unknown] == ["Invite"]
