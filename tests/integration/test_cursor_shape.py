"""An edited cursor whose start key changed type is refused before it is sent (defect 5)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

import singletable as st
from tests.integration._executors import connect


def _retype_sort_key(cursor: str) -> str:
    body = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    body["k"]["SK"] = {"N": "1"}
    raw = json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def test_retyped_start_key_is_a_cursor_error_on_the_backend(
    dynamodb_client: Any, table_name: str
) -> None:
    table = st.Table(table_name)

    class Thing(st.Entity, table=table, pk="P#{p}", sk="T#{n}"):
        p: str
        n: int

    db = connect(dynamodb_client)
    db.create_table(table)
    st.BatchWrite([Thing(p="a", n=i) for i in range(3)]).run(db)
    page = Thing.query(p="a").limit(1).page(db)
    assert page.cursor is not None
    assert [t.n for t in Thing.query(p="a").limit(5).page(db, page.cursor).items] == [1, 2]
    with pytest.raises(st.CursorError, match=r"'SK' must be of type S, got N"):
        Thing.query(p="a").limit(1).page(db, _retype_sort_key(page.cursor))
