"""Limits refused before sending, on both backends (issue 16, defect 4).

moto answered range bounds over 1,024 bytes that DynamoDB Local refuses, stored an update
over 400 KB's worth of writes differently, and raised a raw ``UnicodeEncodeError`` for a
lone surrogate that DynamoDB Local stored: each is now a typed error before any request,
so both backends behave the same and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import singletable as st
from tests.integration._executors import connect


def test_limits_are_refused_before_anything_is_sent(dynamodb_client: Any, table_name: str) -> None:
    table = st.Table(table_name)

    class Doc(st.Entity, table=table, pk="D#{d}", sk="V#{name}"):
        d: str
        name: str
        body: str | None = None

    db = connect(dynamodb_client)
    db.create_table(table)
    Doc.put(Doc(d="a", name="n")).run(db)
    long = "x" * 1030
    builds: list[Callable[[], st.EntityQuery[Doc]]] = [
        lambda: Doc.query(d="a").gt(name=long),
        lambda: Doc.query(d="a").between(name=("a", long)),
        lambda: Doc.query(d="a").begins_with(name=long),
    ]
    for build in builds:
        with pytest.raises(st.KeyTooLargeError):
            build().all(db)
    assert Doc.query(d="a").gt(name="x" * 1000).all(db) == []
    with pytest.raises(st.ItemTooLargeError):
        Doc.update(d="a", name="n").set(body="b" * (400 * 1024)).run(db)
    with pytest.raises(st.TextEncodeError, match=r"Item\['body'\]"):
        Doc.put(Doc(d="a", name="s", body="bad\udc80")).run(db)
    with pytest.raises(st.TextEncodeError):
        Doc.update(d="a", name="n").set(body="bad\udc80").run(db)
    assert Doc.query(d="a").all(db) == [Doc(d="a", name="n")]
