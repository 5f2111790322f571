"""The worked examples of DOMAIN.md, end to end through ``singletable.examples``.

The examples' table has a fixed name (``singletable-demo``); each test creates it from
the model, loads the sample items, and deletes it afterwards on a shared backend.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

import singletable as st
from singletable import examples as ex
from tests.integration._executors import connect

UTC = timezone.utc
T0 = ex.T0  # 2026-06-23T08:00:00Z


@pytest.fixture
def db(dynamodb_client: Any, backend_name: str) -> Iterator[st.Connection]:
    connection = connect(dynamodb_client)
    if backend_name != "moto" and connection.table_exists(ex.demo):
        connection.delete_table(ex.demo)  # left over by an interrupted run
    connection.create_table(ex.demo)
    st.BatchWrite(ex.sample_items()).run(connection)
    yield connection
    if backend_name != "moto":
        connection.delete_table(ex.demo)


# -- 1. audit log ------------------------------------------------------------------------


def events_in_key_order() -> list[ex.AuditEvent]:
    events = [e for e in ex.sample_audit_log() if isinstance(e, ex.AuditEvent)]
    return sorted(events, key=lambda e: (e.ts, e.seq))


def test_audit_log_newest_first_stream(db: st.Connection) -> None:
    query = ex.AuditEvent.query(actor_id="u_8814").descending()
    assert query.params()["ScanIndexForward"] is False
    assert "IndexName" not in query.params()
    newest = query.limit(4).all(db)
    assert [(e.ts, e.seq) for e in newest] == [
        (datetime(2026, 6, 24, h, 0, tzinfo=UTC), seq)
        for h, seq in ((6, 11), (4, 10), (2, 9), (0, 8))
    ]
    assert query.all(db) == events_in_key_order()[::-1]


def test_audit_log_day_window(db: st.Connection) -> None:
    day = (
        datetime(2026, 6, 23, 0, 0, 0, tzinfo=UTC),
        datetime(2026, 6, 23, 23, 59, 59, tzinfo=UTC),
    )
    query = ex.AuditEvent.query(actor_id="u_8814").between(ts=day)
    request = query.params()
    assert request["KeyConditionExpression"] == "#n0 = :v0 AND #n1 BETWEEN :v1 AND :v2"
    assert [v["S"] for v in request["ExpressionAttributeValues"].values()] == [
        "ACTOR#u_8814",
        "EVT#2026-06-23T00:00:00.000000Z",
        "EVT#2026-06-23T23:59:59.000000Z$",
    ]
    window = query.all(db)
    expected = [e for e in events_in_key_order() if e.ts.date() == T0.date()]
    assert window == expected
    assert len(window) == 9  # 08:00..22:00 every 2 hours, and seq 42 at 14:00
    assert {e.ts.date() for e in window} == {T0.date()}
    # The same day by a partial timestamp.
    assert ex.AuditEvent.query(actor_id="u_8814").begins_with(ts="2026-06-23").all(db) == window


def test_audit_log_same_timestamp_events_kept_apart_by_seq(db: st.Connection) -> None:
    same = ex.AuditEvent.query(actor_id="u_8814", ts=T0 + timedelta(hours=6)).all(db)
    assert [(e.seq, e.action, e.target) for e in same] == [
        (3, "share", "doc/3"),
        (42, "edit", "doc/3"),
    ]
    newest = ex.AuditEvent.query(actor_id="u_8814", ts=T0 + timedelta(hours=6)).descending()
    assert [e.seq for e in newest.all(db)] == [42, 3]
    one = ex.AuditEvent.get(actor_id="u_8814", ts=T0 + timedelta(hours=6), seq=42).run(db)
    assert one is not None
    assert one.action == "edit"


def test_audit_log_activity_collection(db: st.Connection) -> None:
    result = ex.activity.query(actor_id="u_8814").all(db)
    # "EVT#..." sorts before "PROFILE": the events, then the profile, in one read.
    assert result[-1] == ex.Actor(actor_id="u_8814", display_name="Ada")
    assert result.of(ex.AuditEvent) == events_in_key_order()
    assert list(result.by_type()) == [ex.AuditEvent, ex.Actor]
    assert result.unknown == []


# -- 2. sensor readings -----------------------------------------------------------------


def test_readings_latest_first(db: st.Connection) -> None:
    latest = ex.Reading.query(device_id="dev-7").descending().limit(3).all(db)
    assert [r.ts for r in latest] == [T0 + timedelta(minutes=m) for m in (55, 50, 45)]
    assert ex.Reading.query(device_id="dev-7").descending().first(db) == latest[0]


def test_readings_ten_minute_window(db: st.Connection) -> None:
    window = ex.Reading.query(device_id="dev-9").between(
        ts=(T0 + timedelta(minutes=10), T0 + timedelta(minutes=20))
    )
    assert [r.ts for r in window.all(db)] == [T0 + timedelta(minutes=m) for m in (10, 15, 20)]
    assert window.count(db) == 3


def test_readings_above_30_across_the_fleet_through_gsi1(db: st.Connection) -> None:
    # Edge values: exactly 30 must not count as "above 30"; 30.01 must.
    st.BatchWrite(
        [
            ex.Reading(device_id="dev-1", ts=T0, day=T0.date(), celsius=Decimal("30")),
            ex.Reading(device_id="dev-2", ts=T0, day=T0.date(), celsius=Decimal("30.01")),
            ex.Reading(
                device_id="dev-3",
                ts=T0 + timedelta(days=1),
                day=T0.date() + timedelta(days=1),
                celsius=Decimal("99"),
            ),
        ]
    ).run(db)
    query = ex.Reading.query(index="GSI1", day=T0.date()).gt(celsius=Decimal(30))
    assert query.params()["IndexName"] == "GSI1"
    hot = query.all(db)
    readings = [r for r in ex.sample_readings() if isinstance(r, ex.Reading)]
    expected = sorted((r.celsius, r.device_id, r.ts) for r in readings if r.celsius > 30)
    assert [(r.celsius, r.device_id, r.ts) for r in hot] == [
        (Decimal("30.01"), "dev-2", T0),
        *expected,
    ]
    assert {r.device_id for r in hot} == {"dev-2", "dev-9"}
    hottest = ex.Reading.query(index="GSI1", day=T0.date()).descending().limit(1).all(db)
    assert hottest[0].celsius == Decimal("33.00")
    freezing = ex.Reading.query(index="GSI1", day=T0.date()).lt(celsius=Decimal(0)).all(db)
    assert [r.celsius for r in freezing] == sorted(r.celsius for r in readings if r.celsius < 0)
    assert {r.device_id for r in freezing} == {"dev-12"}


# -- 3. file tree ------------------------------------------------------------------------


def test_file_tree_subtree_in_path_order(db: st.Connection) -> None:
    subtree = ex.drive.query(account="acme").begins_with(path="root/photos/")
    assert subtree.params()["ExpressionAttributeValues"][":v1"] == {"S": "root/photos/"}
    result: list[Any] = subtree.all(db)
    paths = [i.path for i in result]
    assert paths == [
        "root/photos/",
        "root/photos/2026/",
        "root/photos/2026/#1 best.png",
        "root/photos/2026/june.png",
        "root/photos/beach.jpg",
    ]
    assert "root/photos-old.zip" not in paths
    assert [type(i) for i in result] == [ex.Folder, ex.Folder, ex.File, ex.File, ex.File]
    # Every folder comes before its own children.
    for i, item in enumerate(result):
        if isinstance(item, ex.Folder):
            children = [j for j, other in enumerate(result) if other.path.startswith(item.path)]
            assert min(children) == i


def test_file_tree_whole_drive_in_path_order(db: st.Connection) -> None:
    found: list[Any] = ex.drive.query(account="acme").all(db)
    paths = [i.path for i in found]
    expected = sorted(i.path for i in ex.sample_drive() if isinstance(i, (ex.File, ex.Folder)))
    assert paths == expected
    # "-" (0x2D) sorts before "/" (0x2F): the zip sits between root/docs/ and root/photos/.
    assert paths.index("root/photos-old.zip") == paths.index("root/photos/") - 1


def test_file_tree_direct_children_through_gsi2(db: st.Connection) -> None:
    files = ex.File.query(index="GSI2", account="acme", parent="root/photos/").all(db)
    assert [f.path for f in files] == ["root/photos/beach.jpg"]
    folders = ex.Folder.query(index="GSI2", account="acme", parent="root/photos/").all(db)
    assert [f.path for f in folders] == ["root/photos/2026/"]
    children = st.Collection("children", ex.Folder, ex.File, index="GSI2")
    both: list[Any] = children.query(account="acme", parent="root/photos/").all(db)
    assert [(type(i).__name__, i.path) for i in both] == [
        ("Folder", "root/photos/2026/"),
        ("File", "root/photos/beach.jpg"),
    ]
    top: list[Any] = children.query(account="acme", parent="root/").all(db)
    assert [i.path for i in top] == ["root/docs/", "root/photos-old.zip", "root/photos/"]


def test_file_named_with_the_delimiter_is_stored_escaped(
    db: st.Connection, dynamodb_client: Any
) -> None:
    path = "root/photos/2026/#1 best.png"
    raw = dynamodb_client.get_item(
        TableName=ex.demo.name,
        Key={"PK": {"S": "DRIVE#acme"}, "SK": {"S": "root/photos/2026/%231%20best.png"}},
    )["Item"]
    assert raw["path"] == {"S": path}
    assert "#" not in raw["SK"]["S"]
    found = ex.File.get(account="acme", path=path).run(db)
    assert found is not None
    assert found.size == 900_000
    in_folder = ex.File.query(index="GSI2", account="acme", parent="root/photos/2026/").all(db)
    assert [f.path for f in in_folder] == [path, "root/photos/2026/june.png"]
    by_name: list[Any] = (
        ex.drive.query(account="acme").begins_with(path="root/photos/2026/#").all(db)
    )
    assert [i.path for i in by_name] == [path]
