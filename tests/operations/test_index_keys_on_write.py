"""Index keys, stamps and limits on the write path: every index a put fills, upserts, known()."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

import pytest

import singletable as st


def _sets(params: dict[str, Any]) -> dict[str, Any]:
    """attribute -> value of every plain ``#n = :v`` assignment of the update expression."""
    names = params["ExpressionAttributeNames"]
    values = params.get("ExpressionAttributeValues", {})
    pairs = re.findall(r"(#n\d+) = (:v\d+)(?=,|$| REMOVE| ADD)", params["UpdateExpression"])
    return {names[name]: values[value] for name, value in pairs}


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


def test_update_rewrites_index_keyed_on_updated_at() -> None:
    sets = _sets(Rec.update(rid="a").set(title="x").at(T0).params())
    assert sets["updated_at"] == {"S": "2026-06-23T08:00:00.000000+00:00"}
    # The index ordered by updated_at must follow the stamp, or it goes stale.
    assert sets["GSI1SK"] == st.Put(Rec(rid="a"), now=T0).params()["Item"]["GSI1SK"]
    assert sets["GSI1PK"] == {"S": "RECENT"}


def test_upsert_writes_every_index_key_a_put_would() -> None:
    sets = _sets(Rec.upsert(rid="a").set(title="x").at(T0).params())
    item = st.Put(Rec(rid="a", title="x"), now=T0).params()["Item"]
    for attribute in ("GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK"):
        assert sets[attribute] == item[attribute], attribute


class Sparse(
    st.Entity,
    table=table,
    pk="S#{sid}",
    sk="META",
    indexes={
        "GSI1": st.IndexKeys(pk="CAT#{cat}", sk="{sid}"),
        "GSI2": st.IndexKeys(pk="KIND#{kind}", sk="{sid}"),
    },
):
    sid: str
    title: str = ""
    cat: str | None = None
    kind: str = "plain"


def test_upsert_sparse_index_left_to_none_default_is_not_written() -> None:
    params = Sparse.upsert(sid="a").set(title="x", kind="k").params()
    assert "GSI1PK" not in params["ExpressionAttributeNames"].values()
    sets = _sets(Sparse.upsert(sid="a").set(cat="c", kind="k").params())
    assert sets["GSI1PK"] == {"S": "CAT#c"}


def test_upsert_refuses_index_whose_default_field_it_cannot_know() -> None:
    with pytest.raises(st.ExpressionError, match=r"index 'GSI2'.*\['kind'\]"):
        Sparse.upsert(sid="a").set(title="x").params()


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


def test_known_cannot_override_a_primary_key_field() -> None:
    update = Doc.update(doc_id="d1").set(status="live")
    with pytest.raises(st.ExpressionError, match="doc_id"):
        update.known(owner="ann", doc_id="other")
    # The key's own value is accepted (it is what the index keys use anyway).
    sets = _sets(update.known(owner="ann", doc_id="d1").params())
    assert sets["GSI1SK"] == {"S": "live#d1"}


def test_known_refuses_unknown_fields() -> None:
    with pytest.raises(st.ExpressionError, match="ownr"):
        Doc.update(doc_id="d1").set(status="live").known(ownr="ann")  # type: ignore[singletable]  # the run-time refusal is the test


def test_known_conflicting_with_set_is_refused() -> None:
    update = Doc.update(doc_id="d1").set(status="live").known(owner="ann", status="old")
    with pytest.raises(st.ExpressionError, match="status"):
        update.params()
    same = Doc.update(doc_id="d1").set(status="live").known(owner="ann", status="live")
    assert _sets(same.params())["LSI1SK"] == {"S": "S#live"}


class Blob(st.Entity, table=table, pk="BLOB#{bid}", sk="META"):
    bid: int
    data: bytes = b""


def test_transaction_refuses_items_over_4_mb_before_sending() -> None:
    big = b"x" * (390 * 1024)
    tx = st.TransactWrite()
    for i in range(10):  # 10 x 390 KB = 3.8 MB: allowed
        tx = tx.put(Blob.put(Blob(bid=i, data=big)))
    with pytest.raises(st.RequestLimitError, match=r"4194304 bytes \(4 MB\)"):
        tx = tx.put(Blob.put(Blob(bid=10, data=big)))
    assert len(tx.entries) == 10


class Stamped(
    st.Entity, table=table, pk="ST#{sid}", sk="META", created_at="created_at", version_field="v"
):
    sid: str
    v: int = 0
    created_at: datetime | None = None


def test_upsert_may_set_created_at_explicitly() -> None:
    params = Stamped.upsert(sid="a").set(created_at=T0).params()
    assert _sets(params)["created_at"] == {"S": "2026-06-23T08:00:00.000000+00:00"}
    assert "if_not_exists" not in params["UpdateExpression"]
