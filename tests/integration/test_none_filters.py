"""`Entity.f.x == None` finds items whose optional field is unset (stored as absent)."""

from __future__ import annotations

from typing import Any

import singletable as st
from tests.integration._executors import connect


def test_none_comparisons_match_items_without_the_attribute(
    dynamodb_client: Any, table_name: str
) -> None:
    table = st.Table(table_name)

    class Task(st.Entity, table=table, pk="LIST#{list_id}", sk="TASK#{n}"):
        list_id: str
        n: int
        done_at: str | None = None

    db = connect(dynamodb_client)
    db.create_table(table)
    for n in range(4):
        Task.put(Task(list_id="l", n=n, done_at="yes" if n % 2 else None)).run(db)
    open_tasks = Task.query(list_id="l").filter(Task.f.done_at == None).all(db)  # noqa: E711
    done = Task.query(list_id="l").filter(Task.f.done_at != None).all(db)  # noqa: E711
    assert [t.n for t in open_tasks] == [0, 2]
    assert [t.n for t in done] == [1, 3]
