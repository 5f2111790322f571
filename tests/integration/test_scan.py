"""Scans and parallel scans: every item once, entity filtering, streaming, cursors."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

import singletable as st
from tests.integration.recording import RecordingClient, recorded_connection

GHOST = {"PK": {"S": "U#9"}, "SK": {"S": "GHOST"}, "_et": {"S": "Ghost"}, "_ev": {"N": "1"}}


def make_models(table_name: str) -> SimpleNamespace:
    table = st.Table(table_name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class User(st.Entity, table=table, pk="U#{uid}", sk="PROFILE"):
        uid: int
        name: str

    class Order(
        st.Entity,
        table=table,
        pk="U#{uid}",
        sk="ORDER#{oid}",
        indexes={"GSI1": st.IndexKeys(pk="STATUS#{status}", sk="{oid}")},
    ):
        uid: int
        oid: int
        total: int
        status: str | None = None  # sparse in GSI1

    return SimpleNamespace(table=table, User=User, Order=Order)


@pytest.fixture
def app(table_name: str) -> SimpleNamespace:
    return make_models(table_name)


@pytest.fixture
def recorder(dynamodb_client: Any) -> RecordingClient:
    return RecordingClient(dynamodb_client)


@pytest.fixture
def db(app: SimpleNamespace, recorder: RecordingClient, dynamodb_client: Any) -> st.Connection:
    connection = recorded_connection(recorder, app.table)
    users = [app.User(uid=u, name=f"user{u}") for u in range(4)]
    orders = [
        app.Order(uid=o % 4, oid=o, total=o * 5, status="open" if o % 3 == 0 else None)
        for o in range(10)
    ]
    st.BatchWrite([*users, *orders]).run(connection)
    dynamodb_client.put_item(TableName=app.table.name, Item=GHOST)
    recorder.reset()
    return connection


def ident(obj: Any) -> tuple[str, int, int]:
    return (type(obj).__name__, obj.uid, getattr(obj, "oid", -1))


def test_scan_reads_every_item_once_and_reports_unknown(
    app: SimpleNamespace, db: st.Connection
) -> None:
    scan: st.Scan[Any] = st.Scan(app.table)
    items = scan.all(db)
    assert len(items) == 14
    assert sorted(map(ident, items)) == sorted(
        [("User", u, -1) for u in range(4)] + [("Order", o % 4, o) for o in range(10)]
    )
    pages = list(scan.page_size(5).pages(db))
    assert [i for p in pages for i in p.unknown] == [GHOST]
    assert sorted(ident(i) for p in pages for i in p.items) == sorted(map(ident, items))


def test_entity_scan_returns_only_that_entity(app: SimpleNamespace, db: st.Connection) -> None:
    orders = app.Order.scan().all(db)
    assert sorted(o.oid for o in orders) == list(range(10))
    assert all(type(o) is app.Order for o in orders)
    assert sorted(u.uid for u in app.User.scan().all(db)) == [0, 1, 2, 3]
    big = app.Order.scan().filter(app.Order.f.total >= 30).all(db)
    assert sorted(o.oid for o in big) == [6, 7, 8, 9]


def test_scan_of_a_sparse_index(app: SimpleNamespace, db: st.Connection) -> None:
    open_orders = app.Order.scan(index="GSI1").all(db)
    assert sorted(o.oid for o in open_orders) == [0, 3, 6, 9]


@pytest.mark.parametrize("total", [1, 2, 3, 4])
def test_parallel_segments_partition_the_table(
    app: SimpleNamespace, db: st.Connection, total: int
) -> None:
    full = sorted(map(ident, st.Scan(app.table).all(db)))
    seen: list[tuple[str, int, int]] = []
    for segment in range(total):
        seen += map(ident, st.Scan(app.table).segment(segment, total).page_size(3).all(db))
    assert sorted(seen) == full  # every item exactly once across the segments


def test_entity_scan_segments(app: SimpleNamespace, db: st.Connection) -> None:
    oids = [o.oid for s in range(3) for o in app.Order.scan().segment(s, 3).all(db)]
    assert sorted(oids) == list(range(10))


def test_scan_streams_lazily(
    app: SimpleNamespace, db: st.Connection, recorder: RecordingClient
) -> None:
    stream: Iterator[Any] = st.Scan(app.table).page_size(3).iter(db)
    assert len(list(itertools.islice(stream, 2))) == 2
    assert len(recorder.calls) == 1
    assert recorder.calls[0][1]["Limit"] == 3


def test_scan_pages_resume_with_cursors(app: SimpleNamespace, db: st.Connection) -> None:
    full = app.Order.scan().all(db)
    got: list[Any] = []
    cursor: str | None = None
    for _ in range(20):
        page = app.Order.scan().limit(3).page(db, cursor)
        got += page.items
        cursor = page.cursor
        if cursor is None:
            break
    assert got == full


def test_scan_cursor_is_bound_to_its_segment_and_entity(
    app: SimpleNamespace, db: st.Connection
) -> None:
    cursor = st.Scan(app.table).segment(0, 2).limit(1).page(db).cursor
    assert cursor is not None
    with pytest.raises(st.CursorError, match=r"another query \(a different scan segment\)"):
        st.Scan(app.table).segment(1, 2).limit(1).page(db, cursor)
    with pytest.raises(st.CursorError, match="a different entity"):
        app.Order.scan().segment(0, 2).limit(1).page(db, cursor)
    with pytest.raises(st.CursorError, match="a different kind of read"):
        app.Order.query(uid=0).limit(1).page(db, cursor)
