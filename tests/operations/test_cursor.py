"""Cursors: bound to the query that made them; malformed, tampered and foreign ones refused.

Pure: cursors are made by driving a query's sans-I/O page stream with a canned response.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from typing import Annotated, Any

import pytest

import singletable as st
from singletable.operations import Emit

UTC = timezone.utc
T0 = datetime(2026, 6, 23, 8, 0, tzinfo=UTC)

app = st.Table("cursor-tests", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class Event(
    st.Entity,
    table=app,
    pk="P#{pid}",
    sk="EVT#{ts}#{seq}",
    indexes={"GSI1": st.IndexKeys(pk="P#{pid}", sk="{kind}#{ts}")},
):
    pid: str
    ts: datetime
    seq: Annotated[int, st.KeyFormat(width=4)]
    kind: str = "login"


class EventX(st.Entity, table=app, pk="P#{pid}", sk="EVTX#{ts}#{seq}"):
    pid: str
    ts: datetime
    seq: Annotated[int, st.KeyFormat(width=4)]


class Blob(st.Entity, table=app, pk="B#{pid}", sk="BLOB#{n}"):
    pid: str
    n: int


def cursor_of(query: Any, item: dict[str, Any], index: str | None = None) -> str:
    """The cursor of a first page that ended on ``item`` (with more to read)."""
    attributes = ["PK", "SK"] + (["GSI1PK", "GSI1SK"] if index else [])
    stream = query.stream_pages()
    next(stream)  # the first Call
    page = stream.send({"Items": [item], "LastEvaluatedKey": {a: item[a] for a in attributes}})
    cursor = page.value.cursor
    assert isinstance(cursor, str)
    return cursor


def event_cursor(query: Any = None) -> str:
    query = query if query is not None else Event.query(pid="a")
    return cursor_of(query, Event(pid="a", ts=T0, seq=1).to_item())


def decode(cursor: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    return body


def encode(body: Any) -> str:
    raw = json.dumps(body).encode() if not isinstance(body, bytes) else body
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_cursor_resumes_its_own_query() -> None:
    cursor = event_cursor()
    request = Event.query(pid="a").params(cursor)
    assert request["ExclusiveStartKey"] == {
        "PK": {"S": "P#a"},
        "SK": {"S": "EVT#2026-06-23T08:00:00.000000Z#0001"},
    }
    # Page sizes and limits are not part of the identity: they may change between pages.
    assert Event.query(pid="a").limit(3).page_size(2).params(cursor)["ExclusiveStartKey"]


def test_a_cursor_handed_out_by_0_2_0_still_resumes_its_query() -> None:
    # The fingerprint hashes the text of the sort-key condition: that text must not change
    # between releases (0.2.0 made this cursor, for a query ending on the first event).
    cursor = (
        "eyJrIjp7IlBLIjp7IlMiOiJQI2EifSwiU0siOnsiUyI6IkVWVCMyMDI2LTA2LTIzVDA4OjAwOjAwLjAwMDAw"
        "MFojMDAwMSJ9fSwicSI6eyJlbnRpdHkiOiIzOTMxODYxMDYwNTgiLCJmaWx0ZXIiOiI3NDIzNGU5OGFmZTci"
        "LCJmb3J3YXJkIjoiYjViZWE0MWI2YzYyIiwiaW5kZXgiOiI3NDIzNGU5OGFmZTciLCJraW5kIjoiN2Y0Y2Nj"
        "ZDVhMjY3IiwicGFydGl0aW9uIjoiOGQyYzc1YmFjYjk5IiwicHJvamVjdGlvbiI6Ijc0MjM0ZTk4YWZlNyIs"
        "InNrIjoiYWMzMzQ2MmEzODk3IiwidGFibGUiOiI1ZWNhZjRjZGJjZjQifSwidiI6Mn0"
    )
    request = Event.query(pid="a").lt(ts=T0).params(cursor)
    assert request["ExclusiveStartKey"]["SK"] == {"S": "EVT#2026-06-23T08:00:00.000000Z#0001"}


def test_cursor_is_opaque_url_safe_text() -> None:
    cursor = event_cursor()
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@pytest.mark.parametrize(
    ("other", "reason"),
    [
        (Event.query(pid="b"), "partition"),
        (Event.query(pid="a").descending(), "direction"),
        (Event.query(pid="a").gt(ts=T0), "sort-key condition"),
        (Event.query(pid="a", ts=T0), "sort-key condition"),
        (Event.query(pid="a").filter(Event.f.kind == "login"), "filter"),
        (Event.query(pid="a").project("kind"), "projection"),
        (EventX.query(pid="a"), "entity"),
        (Event.query(pid="a", index="GSI1"), "index"),
        (st.Collection("events", Event, EventX).query(pid="a"), "kind of read"),
        (Event.scan(), "kind of read"),
    ],
)
def test_cursor_of_another_query_is_refused_naming_what_differs(other: Any, reason: str) -> None:
    cursor = event_cursor()
    with pytest.raises(st.CursorError, match=f"cursor belongs to another query .*{reason}"):
        other.params(cursor)


def test_cursor_of_another_table_is_refused() -> None:
    other = st.Table("cursor-tests-2")

    class Event2(st.Entity, table=other, name="Event", pk="P#{pid}", sk="EVT#{ts}#{seq}"):
        pid: str
        ts: datetime
        seq: Annotated[int, st.KeyFormat(width=4)]

    with pytest.raises(st.CursorError, match=r"another query \(a different table\)"):
        Event2.query(pid="a").params(event_cursor())


def test_index_cursor_resumes_on_its_index_only() -> None:
    query = Event.query(pid="a", index="GSI1")
    cursor = cursor_of(query, Event(pid="a", ts=T0, seq=1).to_item(), index="GSI1")
    assert set(query.params(cursor)["ExclusiveStartKey"]) == {"PK", "SK", "GSI1PK", "GSI1SK"}
    with pytest.raises(st.CursorError, match="a different index"):
        Event.query(pid="a").params(cursor)


@pytest.mark.parametrize(
    ("cursor", "message"),
    [
        ("", "cursor must be a non-empty string"),
        ("!!!not base64!!!", r"cursor is malformed \(not a singletable cursor\)"),
        ("%%%%", r"cursor is malformed \(not a singletable cursor\)"),
        (encode(b"not json at all"), r"cursor is malformed \(not a singletable cursor\)"),
        (encode(b"\xff\xfe"), r"cursor is malformed \(not a singletable cursor\)"),
        (encode([1, 2, 3]), r"cursor is malformed \(not a singletable cursor\)"),
        (
            encode({"v": 1, "q": "abc", "k": {}}),
            r"cursor format version 1 is not supported \(expected 2\)",
        ),
        (encode({"q": {}, "k": {}}), r"cursor format version None is not supported"),
    ],
)
def test_malformed_cursor_is_refused(cursor: str, message: str) -> None:
    with pytest.raises(st.CursorError, match=message):
        Event.query(pid="a").params(cursor)


def test_cursor_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(st.CursorError, match="cursor must be a non-empty string"):
        Event.query(pid="a").params(b"abc")  # type: ignore[arg-type]


def _edit(cursor: str, change: Any) -> str:
    body = decode(cursor)
    change(body)
    return encode(body)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda b: b.update(q="0" * 24), "cursor is malformed: no query fingerprint"),
        (lambda b: b["q"].update(partition="0" * 12), r"another query \(a different partition\)"),
        (lambda b: b.update(k=[]), "cursor is malformed: the start key is not an object"),
        (lambda b: b["k"].update(SK={"S": 5}), "cursor is malformed: bad start key attribute"),
        (
            lambda b: b["k"].update(SK={"BOOL": True}),
            "cursor is malformed: bad start key attribute",
        ),
        (lambda b: b["k"].update(SK={"S": "x", "N": "1"}), "bad start key attribute"),
        (lambda b: b["k"].update(SK={"B64": "***"}), "cursor is malformed: bad binary start key"),
        (lambda b: b["k"].pop("SK"), r"cursor was altered: its start key has attributes \['PK'\]"),
        (
            lambda b: b["k"].update(GSI1PK={"S": "x"}),
            r"cursor was altered: its start key has attributes \['GSI1PK', 'PK', 'SK'\], "
            r"this read's keys have \['PK', 'SK'\]",
        ),
        (
            lambda b: b["k"].update(PK={"S": "P#b"}),
            "cursor was altered: its start key is in partition {'S': 'P#b'}, "
            "not this query's {'S': 'P#a'}",
        ),
    ],
)
def test_tampered_unsigned_cursor_is_refused(change: Any, message: str) -> None:
    with pytest.raises(st.CursorError, match=message):
        Event.query(pid="a").params(_edit(event_cursor(), change))


def test_signed_cursor_round_trip() -> None:
    query = Event.query(pid="a").signed("s3cret")
    cursor = event_cursor(query)
    assert query.params(cursor)["ExclusiveStartKey"]["PK"] == {"S": "P#a"}
    # bytes and str secrets are the same secret
    assert Event.query(pid="a").signed(b"s3cret").params(cursor)["ExclusiveStartKey"]


def test_signed_query_refuses_unsigned_cursor() -> None:
    with pytest.raises(
        st.CursorError, match="cursor is not signed, but this query requires a signed cursor"
    ):
        Event.query(pid="a").signed("s3cret").params(event_cursor())


def test_unsigned_query_refuses_signed_cursor() -> None:
    cursor = event_cursor(Event.query(pid="a").signed("s3cret"))
    with pytest.raises(
        st.CursorError, match="cursor is signed; pass the secret it was signed with"
    ):
        Event.query(pid="a").params(cursor)


def test_signed_cursor_with_wrong_secret_is_refused() -> None:
    cursor = event_cursor(Event.query(pid="a").signed("s3cret"))
    with pytest.raises(
        st.CursorError,
        match="cursor signature does not match: it was altered or signed with another secret",
    ):
        Event.query(pid="a").signed("other").params(cursor)


def test_tampered_signed_cursor_is_refused() -> None:
    cursor = event_cursor(Event.query(pid="a").signed("s3cret"))
    body = decode(cursor)
    payload = json.loads(body["p"])
    payload["k"]["SK"] = {"S": "EVT#2026-06-23T09:00:00.000000Z#0001"}
    body["p"] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    with pytest.raises(st.CursorError, match="cursor signature does not match"):
        Event.query(pid="a").signed("s3cret").params(encode(body))


def test_signed_cursor_with_bad_payload_is_refused() -> None:
    with pytest.raises(st.CursorError, match="cursor is not signed"):
        Event.query(pid="a").signed("k").params(encode({"p": 5, "s": "x"}))


def test_binary_start_keys_survive_the_cursor() -> None:
    # A start key attribute of type B is carried as base64 text and restored as bytes.
    # (Queries of this table refuse it: its sort key is a string; see
    # tests/operations/test_cursor_shape.py.)
    from singletable.operations.cursor import make_cursor, read_cursor

    query = Blob.query(pid="a")
    key: dict[str, dict[str, Any]] = {"PK": {"S": "B#a"}, "SK": {"B": b"\x00\xff"}}
    fingerprint = query._fingerprint()
    assert read_cursor(make_cursor(fingerprint, key), fingerprint) == key
    with pytest.raises(st.CursorError, match=r"'SK' must be of type S, got B"):
        query.params(make_cursor(fingerprint, key))


def test_last_page_has_no_cursor() -> None:
    stream = Event.query(pid="a").stream_pages()
    next(stream)
    emitted = stream.send({"Items": [Event(pid="a", ts=T0, seq=1).to_item()]})
    assert isinstance(emitted, Emit)
    page = emitted.value
    assert page.cursor is None
    assert [e.seq for e in page.items] == [1]
