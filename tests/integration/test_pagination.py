"""Pagination: cursors resume exactly, in both directions, with any page size and limit.

Concatenating the pages of a query, each resumed from the previous page's cursor on a
freshly built query, must give exactly one full read. Streaming is lazy: stopping early
sends no further requests.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Annotated, Any

import pytest

import singletable as st
from tests.integration.recording import RecordingClient, recorded_connection

UTC = timezone.utc
T0 = datetime(2026, 6, 23, 8, 0, tzinfo=UTC)
HOURS = [0, 0, 1, 2, 2, 2, 3, 4, 5]  # same-timestamp events, kept apart by seq


def make_models(table_name: str) -> SimpleNamespace:
    table = st.Table(table_name)

    class Event(st.Entity, table=table, pk="P#{pid}", sk="EVT#{ts}#{seq}"):
        pid: str
        ts: datetime
        seq: Annotated[int, st.KeyFormat(width=4)]
        kind: str = "login"

    # Same literal prefix and a str last field: its keys interleave with Event's, so
    # Event queries need a type filter (pages then read items that are not results).
    class Note(st.Entity, table=table, pk="P#{pid}", sk="EVT#{ts}#{tag}"):
        pid: str
        ts: datetime
        tag: str

    return SimpleNamespace(
        table=table, Event=Event, Note=Note, events=st.Collection("events", Event, Note)
    )


@pytest.fixture
def app(table_name: str) -> SimpleNamespace:
    return make_models(table_name)


@pytest.fixture
def db(app: SimpleNamespace, recorder: RecordingClient) -> st.Connection:
    connection = recorded_connection(recorder, app.table)
    events = [
        app.Event(pid="p", ts=T0 + timedelta(hours=h), seq=i, kind="login" if i % 3 else "edit")
        for i, h in enumerate(HOURS)
    ]
    notes = [app.Note(pid="p", ts=T0 + timedelta(hours=h), tag=f"n{h}") for h in (0, 2, 4)]
    others = [app.Event(pid="q", ts=T0, seq=1)]
    st.BatchWrite([*events, *notes, *others]).run(connection)
    recorder.reset()
    return connection


def walk(build: Any, db: st.Connection, *, max_pages: int = 40) -> tuple[list[Any], int]:
    """Every page of ``build()``, each resumed on a freshly built query."""
    results: list[Any] = []
    cursor: str | None = None
    for n in itertools.count(1):
        assert n <= max_pages, "pagination did not terminate"
        page = build().page(db, cursor)
        results.extend(page.items)
        cursor = page.cursor
        if cursor is None:
            return results, n
    raise AssertionError("unreachable")


def keys(items: list[Any]) -> list[tuple[int, int]]:
    return [(int((e.ts - T0).total_seconds()) // 3600, e.seq) for e in items]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("page_size", [None, 1, 2, 5])
@pytest.mark.parametrize("limit", [1, 3, 4])
def test_pages_concatenate_to_one_full_read(
    app: SimpleNamespace, db: st.Connection, descending: bool, page_size: int | None, limit: int
) -> None:
    def build() -> Any:
        query = app.Event.query(pid="p").limit(limit)
        query = query.descending() if descending else query
        return query.page_size(page_size) if page_size else query

    full = app.Event.query(pid="p").all(db)
    assert keys(full) == sorted((h, i) for i, h in enumerate(HOURS))
    expected = full[::-1] if descending else full
    pages, n = walk(build, db)
    assert pages == expected
    assert n >= -(-len(expected) // limit)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize(
    "condition",
    [
        lambda q: q.between(ts=(T0 + timedelta(hours=1), T0 + timedelta(hours=4))),
        lambda q: q.lt(ts=T0 + timedelta(hours=3)),
        lambda q: q.gt(ts=T0),
    ],
    ids=["between", "lt", "gt"],
)
def test_range_query_pages_resume_exactly(
    app: SimpleNamespace, db: st.Connection, descending: bool, condition: Any
) -> None:
    def build(limit: int | None = 2) -> Any:
        query = condition(app.Event.query(pid="p"))
        query = query.descending() if descending else query
        return query.limit(limit) if limit else query

    full = build(None).all(db)
    assert full
    pages, _ = walk(build, db)
    assert pages == full


def test_pages_with_equality_and_lt_on_the_last_field(
    app: SimpleNamespace, db: st.Connection
) -> None:
    # lt on the last field reads the excluded exact key and drops it, on every page.
    def build() -> Any:
        return app.Event.query(pid="p", ts=T0 + timedelta(hours=2)).lt(seq=5).limit(1)

    pages, _ = walk(build, db)
    assert keys(pages) == [(2, 3), (2, 4)]


def test_filtered_pages_resume_exactly(app: SimpleNamespace, db: st.Connection) -> None:
    def build() -> Any:
        return app.Event.query(pid="p").filter(app.Event.f.kind == "login").limit(2).page_size(3)

    full = app.Event.query(pid="p").filter(app.Event.f.kind == "login").all(db)
    assert [e.seq for e in full] == [i for i in range(len(HOURS)) if i % 3]
    pages, _ = walk(build, db)
    assert pages == full


def test_pages_iteration_yields_each_response(app: SimpleNamespace, db: st.Connection) -> None:
    pages = list(app.Event.query(pid="p").page_size(4).pages(db))
    assert [e for page in pages for e in page.items] == app.Event.query(pid="p").all(db)
    assert all(page.cursor for page in pages[:-1])
    assert pages[-1].cursor is None


def test_collection_pages_resume_exactly(app: SimpleNamespace, db: st.Connection) -> None:
    full = app.events.query(pid="p").all(db)
    assert len(full) == len(HOURS) + 3
    for descending in (False, True):

        def build(descending: bool = descending) -> Any:
            query = app.events.query(pid="p").limit(5)
            return query.descending() if descending else query

        pages, n = walk(build, db)
        assert pages == (full[::-1] if descending else list(full))
        assert n in (3, 4)


def test_signed_cursors_resume(app: SimpleNamespace, db: st.Connection) -> None:
    def build() -> Any:
        return app.Event.query(pid="p").descending().limit(4).signed("s3cret")

    pages, _ = walk(build, db)
    assert pages == app.Event.query(pid="p").all(db)[::-1]
    first = build().page(db)
    assert first.cursor is not None
    with pytest.raises(st.CursorError, match="cursor signature does not match"):
        app.Event.query(pid="p").descending().limit(4).signed("wrong").page(db, first.cursor)
    with pytest.raises(st.CursorError, match="cursor is signed; pass the secret"):
        app.Event.query(pid="p").descending().limit(4).page(db, first.cursor)


def test_cursor_of_another_partition_is_refused_before_any_read(
    app: SimpleNamespace, db: st.Connection, recorder: RecordingClient
) -> None:
    cursor = app.Event.query(pid="p").limit(2).page(db).cursor
    assert cursor is not None
    recorder.reset()
    with pytest.raises(
        st.CursorError, match=r"cursor belongs to another query \(a different partition\)"
    ):
        app.Event.query(pid="q").limit(2).page(db, cursor)
    with pytest.raises(st.CursorError, match=r"a different direction"):
        app.Event.query(pid="p").descending().limit(2).page(db, cursor)
    with pytest.raises(st.CursorError, match=r"a different entity"):
        app.Note.query(pid="p").limit(2).page(db, cursor)
    assert recorder.calls == []


def test_page_without_limit_is_refused(app: SimpleNamespace, db: st.Connection) -> None:
    with pytest.raises(
        st.QueryError, match=r"page\(\) needs limit\(n\): the number of results per page"
    ):
        app.Event.query(pid="p").page(db)


# -- laziness -----------------------------------------------------------------------------


def test_stopping_early_requests_only_the_first_page(
    app: SimpleNamespace, db: st.Connection, recorder: RecordingClient
) -> None:
    stream = app.Event.query(pid="p").page_size(2).iter(db)
    assert recorder.calls == []  # nothing is sent before the first item is asked for
    first_two = list(itertools.islice(stream, 2))
    assert len(first_two) == 2
    assert len(recorder.calls) == 1
    assert recorder.calls[0][1]["Limit"] == 2
    next(stream)
    assert len(recorder.calls) == 2
    assert recorder.calls[1][1]["ExclusiveStartKey"]


def test_stopping_early_on_a_collection_reads_one_page(
    app: SimpleNamespace, db: st.Connection, recorder: RecordingClient
) -> None:
    for item in app.events.query(pid="p").page_size(3).iter(db):
        assert item is not None
        break
    assert len(recorder.calls) == 1


def test_first_stops_after_the_first_result(
    app: SimpleNamespace, db: st.Connection, recorder: RecordingClient
) -> None:
    query = app.Event.query(pid="p").descending().filter(app.Event.f.kind == "edit")
    event = query.page_size(2).first(db)
    assert event is not None
    assert (event.seq, event.kind) == (6, "edit")
    # Newest first: (5, 8) login, (4, 7) login -> no result on page 1; page 2 has seq 6.
    assert len(recorder.calls) == 2
    assert app.Note.query(pid="p").first(db) == app.Note(pid="p", ts=T0, tag="n0")
