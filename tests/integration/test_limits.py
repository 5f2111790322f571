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


def test_a_lone_surrogate_in_a_key_names_its_field(dynamodb_client: Any, table_name: str) -> None:
    # Issue 26: the error named `Item['PK']['S']` and an index into the whole key, not the
    # field the text came from.
    table = st.Table(table_name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Thing(
        st.Entity,
        table=table,
        pk="BOX#{box}",
        sk="T#{n}",
        indexes={"GSI1": st.IndexKeys(pk="TAG#{tag}", sk="{n}")},
    ):
        box: str
        n: int
        tag: str = "t"

    db = connect(dynamodb_client)
    db.create_table(table)
    builds: list[tuple[Callable[[], Any], str]] = [
        (lambda: Thing.put(Thing(box="ab\udc80", n=1)).run(db), "box"),
        (lambda: Thing.put(Thing(box="a b\udc80", n=1)).run(db), "box"),
        (lambda: Thing.put(Thing(box="ab", n=1, tag="x\ud800y")).run(db), "tag"),
        (lambda: Thing.get(box="ab\udc80", n=1).run(db), "box"),
        (lambda: Thing.query(box="ab\udc80").all(db), "box"),
        (lambda: Thing.update(box="ab\udc80", n=1).set(tag="x").run(db), "box"),
        (lambda: st.BatchWrite([Thing(box="\udc80", n=2)]).run(db), "box"),
    ]
    for build, field in builds:
        with pytest.raises(st.TextEncodeError, match=rf"field '{field}': .*lone surrogate") as e:
            build()
        assert "['S']" not in str(e.value)
    assert Thing.scan().all(db) == []
