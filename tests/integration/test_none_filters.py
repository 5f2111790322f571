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


def test_none_written_to_a_field_with_another_default_reads_back_none(
    dynamodb_client: Any, table_name: str
) -> None:
    # Left out, the attribute would read back as the default ("open", 3): a None written
    # by put, create or update must come back None, and filters must find it.
    table = st.Table(table_name)

    class Ticket(st.Entity, table=table, pk="Q#{queue}", sk="T#{n}"):
        queue: str
        n: int
        state: str | None = "open"
        priority: int | None = 3

    db = connect(dynamodb_client)
    db.create_table(table)
    Ticket.put(Ticket(queue="q", n=0, state=None, priority=None)).run(db)
    Ticket.create(Ticket(queue="q", n=1)).run(db)
    Ticket.put(Ticket(queue="q", n=2, state="closed")).run(db)
    Ticket.update(queue="q", n=2).set(state=None).run(db)
    assert Ticket.get(queue="q", n=0).run(db) == Ticket(queue="q", n=0, state=None, priority=None)
    assert Ticket.get(queue="q", n=1).run(db) == Ticket(queue="q", n=1)
    assert Ticket.get(queue="q", n=2).run(db) == Ticket(queue="q", n=2, state=None)
    unset = Ticket.query(queue="q").filter(Ticket.f.state == None).all(db)  # noqa: E711
    assert [t.n for t in unset] == [0, 2]
    assert [t.n for t in Ticket.query(queue="q").filter(Ticket.f.state != None).all(db)] == [1]  # noqa: E711
    # remove() still means "back to the default".
    Ticket.update(queue="q", n=0).remove("state").run(db)
    assert Ticket.get(queue="q", n=0).run(db) == Ticket(queue="q", n=0, priority=None)


def test_an_index_follows_what_an_optional_field_with_a_default_reads(
    dynamodb_client: Any, table_name: str
) -> None:
    # remove() leaves the item reading the default, so it belongs under the default's
    # index key; set(None) reads None, which keeps it out of the (sparse) index.
    table = st.Table(table_name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Ticket(
        st.Entity,
        table=table,
        pk="Q#{queue}",
        sk="T#{n}",
        indexes={"GSI1": st.IndexKeys(pk="STATE#{state}", sk="{n}")},
    ):
        queue: str
        n: int
        state: str | None = "open"

    db = connect(dynamodb_client)
    db.create_table(table)

    def listed(state: str) -> list[int]:
        return [t.n for t in Ticket.query(index="GSI1", state=state).all(db)]

    Ticket.put(Ticket(queue="q", n=1, state="closed")).run(db)
    Ticket.update(queue="q", n=1).remove("state").run(db)
    assert Ticket.get(queue="q", n=1).run(db) == Ticket(queue="q", n=1, state="open")
    assert (listed("open"), listed("closed")) == ([1], [])
    Ticket.update(queue="q", n=1).set(state=None).run(db)
    assert Ticket.get(queue="q", n=1).run(db) == Ticket(queue="q", n=1, state=None)
    assert (listed("open"), listed("closed")) == ([], [])
