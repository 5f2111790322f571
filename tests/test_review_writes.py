"""Adversarial review of the write path: index keys, locking, stamps, limits (pure)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import singletable as st

T0 = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)

table = st.Table(
    "review",
    indexes=[
        st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        st.GSI("GSI2", pk="GSI2PK", sk="GSI2SK"),
        st.LSI("LSI1", sk="LSI1SK"),
    ],
)


class Rec(
    st.Entity,
    table=table,
    pk="R#{rid}",
    sk="META",
    indexes={
        "GSI1": st.IndexKeys(pk="RECENT", sk="{updated_at}"),
        "GSI2": st.IndexKeys(pk="BYID#{rid}", sk="REC"),
    },
    updated_at="updated_at",
):
    rid: str
    title: str = ""
    updated_at: datetime | None = None


class Doc(
    st.Entity,
    table=table,
    pk="DOC#{doc_id}",
    sk="META",
    indexes={
        "GSI1": st.IndexKeys(pk="OWNER#{owner}", sk="{status}#{doc_id}"),
        "LSI1": "S#{status}",
    },
):
    doc_id: str
    owner: str
    status: str = "draft"


def _sets(params: dict[str, Any]) -> dict[str, Any]:
    """attribute -> value of every ``#n = :v`` in the update expression."""
    names = params["ExpressionAttributeNames"]
    values = params.get("ExpressionAttributeValues", {})
    expression = params["UpdateExpression"]
    assert expression.startswith("SET ")
    result = {}
    for part in expression[4:].split(" REMOVE ")[0].split(", "):
        name, _, value = part.partition(" = ")
        result[names[name]] = values.get(value, value)
    return result


# ----------------------------------------------------------------- index keys


def test_update_rewrites_index_keyed_on_updated_at() -> None:
    sets = _sets(Rec.update(rid="a").set(title="x").at(T0).params())
    assert sets["updated_at"] == {"S": "2026-06-23T08:00:00+00:00"}
    # The index ordered by updated_at must follow the stamp, or it goes stale.
    assert sets["GSI1SK"] == st.Put(Rec(rid="a"), now=T0).params()["Item"]["GSI1SK"]
    assert sets["GSI1PK"] == {"S": "RECENT"}
