"""Property tests: every query's result equals the same selection made in Python.

For random sets of items and random bounds, each query (equality prefix, between, gt,
ge, lt, le, begins_with; ascending or descending; with a limit and a page size) must
return exactly the items a Python filter over the *model values* selects, sorted by the
fields (not by their key strings). Sibling entities in the same partition whose literal
prefix could be confused (``EVT`` / ``EVTX``, ``DOC`` / ``DOCS``) must never appear in the
result, and must never be *read*: the key condition keeps them out, not a filter.

Each example writes into a fresh partition of one table, so the table is created once
per test (hence the function-scoped-fixture health check is suppressed on purpose).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Annotated, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import singletable as st
from tests.integration.recording import RecordingClient, recorded_connection

UTC = timezone.utc
MINUS_5 = timezone(timedelta(hours=-5))
PROPERTY_SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_partitions = itertools.count()


def make_models(table_name: str) -> SimpleNamespace:
    table = st.Table(table_name)

    class Event(st.Entity, table=table, pk="P#{pid}", sk="EVT#{ts}#{seq}"):
        pid: str
        ts: datetime
        seq: Annotated[int, st.KeyFormat(width=4)]

    class EventX(st.Entity, table=table, pk="P#{pid}", sk="EVTX#{ts}#{seq}"):
        pid: str
        ts: datetime
        seq: Annotated[int, st.KeyFormat(width=4)]

    class Doc(st.Entity, table=table, pk="P#{pid}", sk="DOC#{name}#{n}"):
        pid: str
        name: str
        n: int

    class Docs(st.Entity, table=table, pk="P#{pid}", sk="DOCS#{name}"):
        pid: str
        name: str

    return SimpleNamespace(table=table, Event=Event, EventX=EventX, Doc=Doc, Docs=Docs)


@pytest.fixture
def app(table_name: str) -> SimpleNamespace:
    return make_models(table_name)


@pytest.fixture
def db(app: SimpleNamespace, recorder: RecordingClient) -> st.Connection:
    connection = recorded_connection(recorder, app.table)
    return connection


# -- strategies -----------------------------------------------------------------------

TS_POOL = [
    datetime(2026, 5, 31, 23, 0, tzinfo=UTC),
    datetime(2026, 6, 1, 0, 0, tzinfo=UTC),
    datetime(2026, 6, 1, 0, 0, 0, 500_000, tzinfo=UTC),
    datetime(2026, 6, 23, 8, 0, tzinfo=UTC),
    datetime(2026, 6, 23, 8, 30, tzinfo=UTC),
    datetime(2027, 1, 1, 0, 0, tzinfo=UTC),
]
timestamps = hs.one_of(
    hs.sampled_from(TS_POOL),
    hs.sampled_from(TS_POOL).map(lambda t: t.astimezone(MINUS_5)),  # same instant, other offset
    hs.datetimes(
        min_value=datetime(2026, 5, 30), max_value=datetime(2027, 1, 2), timezones=hs.just(UTC)
    ),
)
seqs = hs.integers(0, 12)
# Characters at or below the escape character, the delimiter itself, the range sentinel
# ("$" is chr(ord("#") + 1)), non-ASCII (2-, 3- and 4-byte UTF-8), and anything else.
names = hs.text(
    alphabet=hs.one_of(
        hs.sampled_from(["a", "b", "ab"[0], "#", "%", "$", " ", "\x00", "é", "ж", "😀", "~"]),
        hs.characters(codec="utf-8"),
    ),
    max_size=4,
)
ints = hs.one_of(hs.integers(-3, 3), hs.integers(-(10**12), 10**12))


def ts_text(ts: datetime) -> str:
    """The canonical key form of a timestamp (what begins_with on ``ts`` matches)."""
    return ts.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Spec:
    """One query: equality on leading fields, at most one range, direction, limit."""

    eq: tuple[tuple[str, Any], ...]
    op: str | None
    field: str | None
    args: tuple[Any, ...]
    descending: bool
    limit: int | None
    page_size: int | None


@hs.composite
def specs(draw: Any, fields: tuple[str, str], values: dict[str, Any], partial: Any) -> Spec:
    n_eq = draw(hs.integers(0, 2))
    eq = tuple((f, draw(values[f])) for f in fields[:n_eq])
    op: str | None = None
    name: str | None = None
    args: tuple[Any, ...] = ()
    if n_eq < 2:
        op = draw(hs.sampled_from([None, "between", "gt", "ge", "lt", "le", "begins_with"]))
        name = fields[n_eq]
        if op == "between":
            low, high = sorted([draw(values[name]), draw(values[name])])
            args = (low, high)
        elif op == "begins_with":
            if name == "seq" or name == "n":
                op = None  # ints have no partial values (refusal tested elsewhere)
            else:
                args = (draw(partial),)
        elif op is not None:
            args = (draw(values[name]),)
        if op is None:
            name = None
    return Spec(
        eq=eq,
        op=op,
        field=name,
        args=args,
        descending=draw(hs.booleans()),
        limit=draw(hs.one_of(hs.none(), hs.integers(1, 6))),
        page_size=draw(hs.one_of(hs.none(), hs.integers(1, 4))),
    )


event_partials = hs.tuples(hs.sampled_from(TS_POOL), hs.integers(1, 26)).map(
    lambda p: ts_text(p[0])[: p[1]]
)
name_partials = names


# -- the model: the same selection in Python ------------------------------------------


def predicate(spec: Spec, text_of: Callable[[str, Any], str]) -> Callable[[Any], bool]:
    def keep(obj: Any) -> bool:
        if any(getattr(obj, f) != v for f, v in spec.eq):
            return False
        if spec.op is None or spec.field is None:
            return True
        value = getattr(obj, spec.field)
        a = spec.args
        if spec.op == "between":
            return bool(a[0] <= value <= a[1])
        if spec.op == "gt":
            return bool(value > a[0])
        if spec.op == "ge":
            return bool(value >= a[0])
        if spec.op == "lt":
            return bool(value < a[0])
        if spec.op == "le":
            return bool(value <= a[0])
        assert spec.op == "begins_with"
        return text_of(spec.field, value).startswith(a[0])

    return keep


def build_query(entity: Any, pid: str, spec: Spec) -> Any:
    query = entity.query(pid=pid, **dict(spec.eq))
    if spec.op is not None:
        assert spec.field is not None
        arg = spec.args if spec.op == "between" else spec.args[0]
        query = getattr(query, spec.op)(**{spec.field: arg})
    if spec.descending:
        query = query.descending()
    if spec.limit is not None:
        query = query.limit(spec.limit)
    if spec.page_size is not None:
        query = query.page_size(spec.page_size)
    return query


def expected(
    items: list[Any], spec: Spec, fields: tuple[str, str], text_of: Callable[[str, Any], str]
) -> list[Any]:
    keep = predicate(spec, text_of)
    selected = sorted(
        (i for i in items if keep(i)),
        key=lambda i: tuple(getattr(i, f) for f in fields),
        reverse=spec.descending,
    )
    return selected if spec.limit is None else selected[: spec.limit]


def check_query(
    db: st.Connection,
    recorder: RecordingClient,
    entity: Any,
    pid: str,
    items: list[Any],
    spec: Spec,
    fields: tuple[str, str],
    text_of: Callable[[str, Any], str],
) -> None:
    query = build_query(entity, pid, spec)
    recorder.reset()
    result = query.all(db)
    want = expected(items, spec, fields, text_of)
    assert [tuple(getattr(i, f) for f in fields) for i in result] == [
        tuple(getattr(i, f) for f in fields) for i in want
    ], (spec, query.params())
    assert result == want
    assert all(type(i) is entity for i in result)
    # The siblings were kept out by the key condition: never read, never filtered.
    for _, request, _ in recorder.calls:
        assert "FilterExpression" not in request, request
    read = {i["_et"]["S"] for i in recorder.raw_items()}
    assert read <= {entity.plan().name}, (spec, query.params(), read)


def text_of_event(field: str, value: Any) -> str:
    assert field == "ts"
    return ts_text(value)


def text_of_doc(field: str, value: Any) -> str:
    assert field == "name"
    return str(value)


@PROPERTY_SETTINGS
@given(
    events=hs.lists(hs.tuples(timestamps, seqs), max_size=10),
    siblings=hs.lists(hs.tuples(hs.sampled_from(TS_POOL), seqs), max_size=3),
    queries=hs.lists(
        specs(("ts", "seq"), {"ts": timestamps, "seq": seqs}, event_partials),
        min_size=1,
        max_size=3,
    ),
)
def test_event_queries_match_python_selection(
    app: SimpleNamespace,
    db: st.Connection,
    recorder: RecordingClient,
    events: list[tuple[datetime, int]],
    siblings: list[tuple[datetime, int]],
    queries: list[Spec],
) -> None:
    pid = f"evt-{next(_partitions)}"
    by_key = {(ts.astimezone(UTC), seq): app.Event(pid=pid, ts=ts, seq=seq) for ts, seq in events}
    others = {(ts, seq): app.EventX(pid=pid, ts=ts, seq=seq) for ts, seq in siblings}
    if by_key or others:
        st.BatchWrite([*by_key.values(), *others.values()]).run(db)
    for spec in queries:
        check_query(
            db, recorder, app.Event, pid, list(by_key.values()), spec, ("ts", "seq"), text_of_event
        )


@PROPERTY_SETTINGS
@given(
    docs=hs.lists(hs.tuples(names, ints), max_size=10),
    siblings=hs.lists(names, max_size=3),
    queries=hs.lists(
        specs(("name", "n"), {"name": names, "n": ints}, name_partials), min_size=1, max_size=3
    ),
)
def test_doc_queries_match_python_selection(
    app: SimpleNamespace,
    db: st.Connection,
    recorder: RecordingClient,
    docs: list[tuple[str, int]],
    siblings: list[str],
    queries: list[Spec],
) -> None:
    pid = f"doc-{next(_partitions)}"
    by_key = {(name, n): app.Doc(pid=pid, name=name, n=n) for name, n in docs}
    others = {name: app.Docs(pid=pid, name=name) for name in siblings}
    if by_key or others:
        st.BatchWrite([*by_key.values(), *others.values()]).run(db)
    for spec in queries:
        check_query(
            db, recorder, app.Doc, pid, list(by_key.values()), spec, ("name", "n"), text_of_doc
        )
    # The sibling entity reads its own items only, too.
    recorder.reset()
    assert sorted(d.name for d in app.Docs.query(pid=pid).all(db)) == sorted(others)
    assert {i["_et"]["S"] for i in recorder.raw_items()} <= {"Docs"}
