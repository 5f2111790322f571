"""Entity and collection queries end to end: count, filters, projection, consistent
reads, direction, and mixed partitions decoded into their own classes in key order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal
from types import SimpleNamespace
from typing import Annotated, Any

import pytest

import singletable as st
from singletable.model.pages import PageDecoder
from tests.integration._executors import connect
from tests.integration.recording import RecordingClient, recorded_connection

UTC = timezone.utc
T0 = datetime(2026, 6, 23, 8, 0, tzinfo=UTC)


def make_models(table_name: str) -> SimpleNamespace:
    table = st.Table(table_name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Profile(st.Entity, table=table, pk="ACTOR#{actor_id}", sk="PROFILE"):
        actor_id: str
        name: str

    class Event(
        st.Entity,
        table=table,
        pk="ACTOR#{actor_id}",
        sk="EVT#{ts}#{seq}",
        indexes={"GSI1": st.IndexKeys(pk="ACTION#{action}", sk="{ts}#{actor_id}#{seq}")},
    ):
        actor_id: str
        ts: datetime
        seq: Annotated[int, st.KeyFormat(width=4)]
        action: str
        size: int = 0
        note: str | None = None

    # "work" vs "workers": a literal prefix that is a prefix of another's.
    class Work(st.Entity, table=table, pk="ACTOR#{actor_id}", sk="work#{n}"):
        actor_id: str
        n: int

    class Worker(st.Entity, table=table, pk="ACTOR#{actor_id}", sk="workers#{n}"):
        actor_id: str
        n: int

    return SimpleNamespace(
        table=table,
        Profile=Profile,
        Event=Event,
        Work=Work,
        Worker=Worker,
        activity=st.Collection("activity", Profile, Event),
        everything=st.Collection("everything", Profile, Event, Work, Worker),
    )


@pytest.fixture
def app(table_name: str) -> SimpleNamespace:
    return make_models(table_name)


@pytest.fixture
def db(app: SimpleNamespace, recorder: RecordingClient) -> st.Connection:
    connection = recorded_connection(recorder, app.table)
    write_sample(app, connection)
    recorder.reset()
    return connection


def write_sample(app: SimpleNamespace, connection: st.Connection) -> None:
    """The sample partition u1 (a profile, six events, works and workers) and one event of u2."""
    items: list[st.Entity] = [app.Profile(actor_id="u1", name="Ann")]
    for i, hours in enumerate([0, 1, 1, 2, 3, 5]):
        items.append(
            app.Event(
                actor_id="u1",
                ts=T0 + timedelta(hours=hours),
                seq=i,
                action="edit" if i % 2 else "view",
                size=i * 10,
                note="late" if hours >= 3 else None,
            )
        )
    items += [app.Work(actor_id="u1", n=n) for n in (2, -1)]
    items += [app.Worker(actor_id="u1", n=n) for n in (1, 3)]
    items.append(app.Event(actor_id="u2", ts=T0, seq=0, action="edit"))
    st.BatchWrite(items).run(connection)


def seqs(events: list[Any]) -> list[int]:
    return [e.seq for e in events]


# -- count -----------------------------------------------------------------------------


def test_count(app: SimpleNamespace, db: st.Connection, recorder: RecordingClient) -> None:
    assert app.Event.query(actor_id="u1").count(db) == 6
    assert recorder.calls[0][1]["Select"] == "COUNT"
    assert app.Event.query(actor_id="u1").gt(ts=T0 + timedelta(hours=1)).count(db) == 3
    assert app.Event.query(actor_id="u1").ge(ts=T0 + timedelta(hours=1)).count(db) == 5
    assert app.Event.query(actor_id="nobody").count(db) == 0


def test_count_with_lt_excludes_the_exact_key(app: SimpleNamespace, db: st.Connection) -> None:
    query = app.Event.query(actor_id="u1", ts=T0 + timedelta(hours=1)).lt(seq=2)
    # The key condition reads ...#0001 and ...#0002; the exact key of seq 2 is dropped.
    assert query.count(db) == 1
    assert seqs(query.all(db)) == [1]
    assert app.Event.query(actor_id="u1", ts=T0 + timedelta(hours=1)).le(seq=2).count(db) == 2
    assert app.Event.query(actor_id="u1").lt(ts=T0 + timedelta(hours=1)).count(db) == 1


def test_count_with_filter(app: SimpleNamespace, db: st.Connection) -> None:
    assert app.Event.query(actor_id="u1").filter(app.Event.f.action == "edit").count(db) == 3


# -- filters, projection, direction, consistent reads ------------------------------------


def test_filter_on_non_key_attributes(app: SimpleNamespace, db: st.Connection) -> None:
    query = app.Event.query(actor_id="u1").filter(app.Event.f.size >= 20)
    assert seqs(query.all(db)) == [2, 3, 4, 5]
    both = query.filter(app.Event.f.action == "edit")
    assert seqs(both.all(db)) == [3, 5]
    assert seqs(query.filter(app.Event.f.note.exists()).descending().all(db)) == [5, 4]
    ranged = app.Event.query(actor_id="u1").lt(ts=T0 + timedelta(hours=3))
    assert seqs(ranged.filter(app.Event.f.action == "view").all(db)) == [0, 2]
    # The query itself is unchanged: filter() returns a new query.
    assert seqs(app.Event.query(actor_id="u1").all(db)) == [0, 1, 2, 3, 4, 5]


def test_filter_with_limit_counts_results_not_items_read(
    app: SimpleNamespace, db: st.Connection
) -> None:
    query = app.Event.query(actor_id="u1").filter(app.Event.f.action == "edit").limit(2)
    assert seqs(query.all(db)) == [1, 3]


def test_projection_returns_dicts_of_decoded_values(
    app: SimpleNamespace, db: st.Connection
) -> None:
    rows = app.Event.query(actor_id="u1").project("seq", "note", "ts").limit(5).all(db)
    assert rows[0] == {"seq": 0, "ts": T0}
    assert rows[4] == {"seq": 4, "ts": T0 + timedelta(hours=3), "note": "late"}
    assert all(isinstance(row, dict) for row in rows)


def test_projection_pages_resume(app: SimpleNamespace, db: st.Connection) -> None:
    query = app.Event.query(actor_id="u1").project("seq").limit(4)
    first = query.page(db)
    assert first.cursor is not None
    second = query.page(db, first.cursor)
    assert [r["seq"] for r in first.items + second.items] == [0, 1, 2, 3, 4, 5]


def test_descending(app: SimpleNamespace, db: st.Connection) -> None:
    assert seqs(app.Event.query(actor_id="u1").descending().all(db)) == [5, 4, 3, 2, 1, 0]
    newest = app.Event.query(actor_id="u1").descending().limit(2).all(db)
    assert seqs(newest) == [5, 4]
    assert seqs(app.Event.query(actor_id="u1").descending().ascending().all(db)) == list(range(6))


def test_consistent_read(
    app: SimpleNamespace, db: st.Connection, recorder: RecordingClient
) -> None:
    app.Event.put(app.Event(actor_id="u1", ts=T0, seq=99, action="view")).run(db)
    assert seqs(app.Event.query(actor_id="u1", ts=T0).consistent().all(db)) == [0, 99]
    assert recorder.calls[-1][1]["ConsistentRead"] is True


def test_consistent_read_on_a_gsi_is_refused_before_sending(
    app: SimpleNamespace, db: st.Connection, recorder: RecordingClient
) -> None:
    with pytest.raises(st.QueryError, match="GSI 'GSI1' does not support consistent reads"):
        app.Event.query(index="GSI1", action="edit").consistent().all(db)
    assert recorder.calls == []


def test_gsi_query(app: SimpleNamespace, db: st.Connection) -> None:
    edits = app.Event.query(index="GSI1", action="edit").all(db)
    assert [(e.actor_id, e.seq) for e in edits] == [("u2", 0), ("u1", 1), ("u1", 3), ("u1", 5)]
    later = app.Event.query(index="GSI1", action="edit").gt(ts=T0).all(db)
    assert seqs(later) == [1, 3, 5]


# -- confusable literal prefixes -----------------------------------------------------------


def test_work_never_reads_workers(
    app: SimpleNamespace, db: st.Connection, recorder: RecordingClient
) -> None:
    assert [w.n for w in app.Work.query(actor_id="u1").all(db)] == [-1, 2]
    assert [w.n for w in app.Worker.query(actor_id="u1").all(db)] == [1, 3]
    assert [w.n for w in app.Work.query(actor_id="u1").lt(n=5).all(db)] == [-1, 2]
    assert [w.n for w in app.Work.query(actor_id="u1").gt(n=-5).descending().all(db)] == [2, -1]
    read = [i["_et"]["S"] for _, _, response in recorder.calls for i in response["Items"]]
    assert sorted(read) == ["Work"] * 6 + ["Worker"] * 2
    assert all("FilterExpression" not in request for _, request, _ in recorder.calls)


# -- collections ---------------------------------------------------------------------------


def test_collection_decodes_each_item_into_its_class_in_key_order(
    app: SimpleNamespace, db: st.Connection
) -> None:
    result = app.everything.query(actor_id="u1").all(db)
    # Key order: EVT#... < PROFILE < work#... < workers#...
    assert [type(i).__name__ for i in result] == (
        ["Event"] * 6 + ["Profile"] + ["Work"] * 2 + ["Worker"] * 2
    )
    assert result[6] == app.Profile(actor_id="u1", name="Ann")
    groups = result.by_type()
    assert list(groups) == [app.Event, app.Profile, app.Work, app.Worker]
    assert seqs(groups[app.Event]) == list(range(6))
    assert [w.n for w in result.of(app.Work)] == [-1, 2]
    assert result.unknown == []
    descending = app.everything.query(actor_id="u1").descending().all(db)
    assert list(descending) == list(result)[::-1]


def test_collection_in_another_partition(app: SimpleNamespace, db: st.Connection) -> None:
    result = app.activity.query(actor_id="u2").all(db)
    assert [(type(i).__name__, i.seq) for i in result] == [("Event", 0)]
    assert app.activity.query(actor_id="nobody").all(db) == []


def test_unknown_entity_is_reported_not_dropped(
    app: SimpleNamespace, db: st.Connection, dynamodb_client: Any
) -> None:
    ghost = {
        "PK": {"S": "ACTOR#u1"},
        "SK": {"S": "GHOST#1"},
        "_et": {"S": "Ghost"},
        "_ev": {"N": "1"},
        "boo": {"S": "!"},
    }
    future = {
        "PK": {"S": "ACTOR#u1"},
        "SK": {"S": "PROFILE#v9"},
        "_et": {"S": "Profile"},
        "_ev": {"N": "9"},
    }
    untyped = {"PK": {"S": "ACTOR#u1"}, "SK": {"S": "RAW"}}
    for item in (ghost, future, untyped):
        dynamodb_client.put_item(TableName=app.table.name, Item=item)
    page = app.everything.query(actor_id="u1").limit(20).page(db)
    assert len(page.items) == 11
    assert page.unknown == [ghost, future, untyped]  # key order: GHOST < PROFILE#v9 < RAW
    result = app.everything.query(actor_id="u1").all(db)
    assert len(result) == 11
    assert result.unknown == [ghost, future, untyped]
    pages = list(app.everything.query(actor_id="u1").page_size(4).pages(db))
    assert [i for p in pages for i in p.unknown] == [ghost, future, untyped]
    # Entity queries never see them: their key range or type keeps them out.
    assert len(app.Profile.query(actor_id="u1").all(db)) == 1


def test_collection_begins_with_on_a_shared_sort_field(
    table_name: str, dynamodb_client: Any
) -> None:
    table = st.Table(table_name)

    class Folder(st.Entity, table=table, pk="D#{account}", sk="{path}"):
        account: str
        path: str

    class File(st.Entity, table=table, pk="D#{account}", sk="{path}"):
        account: str
        path: str
        size: int

    db = connect(dynamodb_client)
    db.create_table(table)
    st.BatchWrite(
        [
            Folder(account="a", path="r/"),
            Folder(account="a", path="r/x/"),
            File(account="a", path="r/x/1", size=1),
            File(account="a", path="r/x-old", size=2),
            File(account="a", path="r/y", size=3),
        ]
    ).run(db)
    tree = st.Collection("tree", Folder, File)
    result: list[Any] = tree.query(account="a").begins_with(path="r/x/").all(db)
    assert [(type(i).__name__, i.path) for i in result] == [("Folder", "r/x/"), ("File", "r/x/1")]
    descending: list[Any] = tree.query(account="a").descending().all(db)
    assert [i.path for i in descending] == [
        "r/y",
        "r/x/1",
        "r/x/",
        "r/x-old",
        "r/",
    ]


def test_collection_query_uses_the_shared_sort_key_fields_it_accepts(
    table_name: str, dynamodb_client: Any
) -> None:
    # Bug: Collection.query(account=..., path=...) accepted the shared sort key field and
    # then ignored it, reading (and returning) the whole partition.
    table = st.Table(table_name)

    class Folder(st.Entity, table=table, pk="D#{account}", sk="{path}"):
        account: str
        path: str

    class File(st.Entity, table=table, pk="D#{account}", sk="{path}"):
        account: str
        path: str
        size: int

    db = connect(dynamodb_client)
    db.create_table(table)
    st.BatchWrite(
        [
            Folder(account="a", path="r/"),
            File(account="a", path="r/x", size=1),
            File(account="a", path="s", size=2),
        ]
    ).run(db)
    tree = st.Collection("tree", Folder, File)
    result: list[Any] = tree.query(account="a", path="r/x").all(db)
    assert [(type(i).__name__, i.path) for i in result] == [("File", "r/x")]
    assert tree.query(account="a", path="nope").all(db) == []
    just_s: list[Any] = tree.query(account="a", path="s").all(db)
    assert [i.path for i in just_s] == ["s"]


def test_projected_count_is_a_valid_request(table_name: str, dynamodb_client: Any) -> None:
    # Bug: count() kept the ProjectionExpression of .project(...) next to Select=COUNT
    # (or, with a strict lt, left its names unused): DynamoDB refuses both.
    table = st.Table(table_name)

    class Ev(st.Entity, table=table, pk="A#{a}", sk="E#{n}"):
        a: str
        n: int
        note: str = ""

    db = connect(dynamodb_client)
    db.create_table(table)
    st.BatchWrite([Ev(a="x", n=n, note="hi") for n in range(5)]).run(db)
    query = Ev.query(a="x").project("note")
    assert query.count(db) == 5
    assert query.lt(n=3).count(db) == 3
    assert len(query.lt(n=3).all(db)) == 3


def test_cursor_of_a_decimal_number_partition_resumes(
    table_name: str, dynamodb_client: Any
) -> None:
    # Bug: a Number partition key was sent as str(Decimal) ("1.50"); DynamoDB returns
    # keys normalised ("1.5"), so the cursor's start key failed the partition check.
    table = st.Table(table_name, pk_type="N", sk_type="N")

    class Price(st.Entity, table=table, pk="{price}", sk="{n}"):
        price: Decimal
        n: int

    db = connect(dynamodb_client)
    db.create_table(table)
    st.BatchWrite([Price(price=Decimal("1.50"), n=n) for n in range(5)]).run(db)
    query = Price.query(price=Decimal("1.50")).limit(2)
    seen: list[int] = []
    cursor = None
    while True:
        page = query.page(db, cursor)
        seen += [p.n for p in page.items]
        cursor = page.cursor
        if cursor is None:
            break
    assert seen == [0, 1, 2, 3, 4]
    assert Price.query(price=Decimal("1.5")).count(db) == 5


def test_another_version_of_the_entity_is_reported_not_misdecoded(
    table_name: str, dynamodb_client: Any
) -> None:
    # Bug: the type filter tests the entity name only, and decoding ignored "_ev": a
    # query or scan of version 2 returned version 1 items as version 2 objects (and
    # version 1 read version 2 items, dropping their new fields) without a word.
    table = st.Table(table_name)

    class EvV1(st.Entity, table=table, pk="A#{a}", sk="E#{n}", name="Ev", version=1):
        a: str
        n: int

    class EvV2(st.Entity, table=table, pk="A#{a}", sk="E#{n}", name="Ev", version=2):
        a: str
        n: int
        label: str = "default"

    db = connect(dynamodb_client)
    db.create_table(table)
    st.BatchWrite([EvV1(a="x", n=1), EvV2(a="x", n=2, label="real")]).run(db)
    page = EvV2.query(a="x").limit(5).page(db)
    assert page.items == [EvV2(a="x", n=2, label="real")]
    assert [i["_ev"] for i in page.unknown] == [{"N": "1"}]
    assert EvV1.query(a="x").all(db) == [EvV1(a="x", n=1)]
    assert EvV2.scan().all(db) == [EvV2(a="x", n=2, label="real")]


# -- pages decoded from the response body (lean transport) -----------------------------


def test_pages_decoded_from_the_body_are_the_pages_decoded_item_by_item(
    app: SimpleNamespace, dynamodb_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = connect(dynamodb_client)
    db.create_table(app.table)
    write_sample(app, db)
    # A wrapped client keeps the boto3 path, which decodes every item by itself.
    wrapped: Any = RecordingClient(dynamodb_client)
    by_item = st.Connection(wrapped)
    decoded: list[bool] = []
    decode = PageDecoder.__call__

    def counted(self: PageDecoder, body: bytes) -> dict[str, Any] | None:
        page = decode(self, body)
        decoded.append(page is not None)
        return page

    monkeypatch.setattr(PageDecoder, "__call__", counted)

    def reads(connection: st.Connection) -> list[str]:
        results: list[Any] = [
            app.Event.query(actor_id="u1").all(connection),
            app.Event.query(action="edit", index="GSI1").all(connection),
            app.activity.query(actor_id="u1").all(connection),
            app.everything.query(actor_id="u1").all(connection),
            sorted(app.Event.scan().all(connection), key=lambda e: (e.actor_id, e.seq)),
        ]
        unknown = [r.unknown for r in results[2:4]]
        # repr: the classes, and the datetimes' tzinfo classes, too.
        return [repr(r) for r in results] + [repr(u) for u in unknown]

    from_body = reads(db)
    assert len(from_body[0]) > 0
    assert from_body == reads(by_item)
    # The lean transport took the pages from the body; no other path calls the decoder.
    assert decoded == ([True] * 5 if getattr(db, "transport", None) == "lean" else [])
