"""The migration runner end to end: a key template change and a new GSI, on both backends."""

from __future__ import annotations

import io
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import pytest

import singletable as st
from tests.integration._executors import connect

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

T0 = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)


def model(name: str, *, sk: str, width: int, gsi: bool = False) -> tuple[st.Table, Any]:
    """A fresh table and its AuditEvent class (the same entity name in every version)."""
    indexes = [st.GSI("ByAction", pk="GSI1PK", sk="GSI1SK")] if gsi else []
    table = st.Table(name, indexes=indexes)
    keys = {"ByAction": st.IndexKeys(pk="ACT#{action}", sk="{ts}")} if gsi else {}

    class AuditEvent(st.Entity, table=table, pk="ACTOR#{actor_id}", sk=sk, indexes=keys):
        actor_id: str
        ts: datetime
        seq: Annotated[int, st.KeyFormat(width=width)]
        action: str

    return table, AuditEvent


def events(cls: Any) -> list[Any]:
    return [
        cls(actor_id=f"a{i % 2}", ts=T0 + timedelta(minutes=i), seq=i, action=f"act{i % 3}")
        for i in range(12)
    ]


def raw_sort_keys(client: DynamoDBClient, table_name: str) -> list[str]:
    items = client.scan(TableName=table_name)["Items"]
    return sorted(item["SK"]["S"] for item in items)


def stocked(
    client: DynamoDBClient, table_name: str, count: int = 12
) -> tuple[st.Connection, st.Table, Any]:
    """A connection, and the first model's table created holding its first ``count`` events."""
    db = connect(client)
    table_a, event_a = model(table_name, sk="EVT#{ts}#{seq}", width=6)
    db.create_table(table_a)
    for event in events(event_a)[:count]:
        event_a.put(event).run(db)
    return db, table_a, event_a


def test_key_template_change_is_migrated_end_to_end(
    dynamodb_client: DynamoDBClient, table_name: str, tmp_path: Path
) -> None:
    db, table_a, _ = stocked(dynamodb_client, table_name)
    before = st.load_snapshot(st.snapshot_json(table_a))
    table_b, event_b = model(table_name, sk="EVENT#{ts}#{seq}", width=8)

    dry = st.migrate(db, table_b, before, dry_run=True, segments=2, out=io.StringIO())
    [stats] = dry.rewrites.values()
    assert (stats.scanned, stats.rewritten, stats.moved) == (12, 12, 12)
    assert stats.write_units == 12 * 4  # transactional put + delete of a <1 KB item
    assert all(sk.startswith("EVT#") for sk in raw_sort_keys(dynamodb_client, table_name))

    checkpoint = tmp_path / "ckpt.json"
    out = io.StringIO()
    report = st.migrate(db, table_b, before, checkpoint=checkpoint, segments=3, out=out)
    [stats] = report.rewrites.values()
    assert (stats.rewritten, stats.moved, stats.failed) == (12, 12, 0)
    assert "3 of 3 segment(s) to scan" in out.getvalue()
    assert "12 of ~12 scanned (100%), 12 rewritten, 0 skipped, 0 failed" in out.getvalue()
    keys = raw_sort_keys(dynamodb_client, table_name)
    assert len(keys) == 12
    # New literal and the new 8-digit padding of seq: none left under the old keys.
    assert all(re.fullmatch(r"EVENT#[^#]+#\d{8}", k) for k in keys), keys
    for actor in ("a0", "a1"):
        got = event_b.query(actor_id=actor).all(db)
        want = [e for e in events(event_b) if e.actor_id == actor]
        assert got == want

    # Re-running does nothing: with the checkpoint nothing is scanned, without it every
    # item is found already current.
    again_out = io.StringIO()
    again = st.migrate(db, table_b, before, checkpoint=checkpoint, segments=3, out=again_out)
    assert "0 of 3 segment(s) to scan" in again_out.getvalue()
    assert next(iter(again.rewrites.values())).rewritten == 12  # the recorded totals
    fresh = st.migrate(db, table_b, before, segments=2, out=io.StringIO())
    [stats] = fresh.rewrites.values()
    assert (stats.scanned, stats.rewritten, stats.unchanged) == (12, 0, 12)
    assert raw_sort_keys(dynamodb_client, table_name) == keys


class FailingConnection(st.Connection):
    """Fails the n-th scan, like a crash in the middle of a run."""

    def __init__(self, client: DynamoDBClient, fail_on_scan: int) -> None:
        super().__init__(client)
        self.scans = 0
        self.fail_on_scan = fail_on_scan

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        if action == "scan":
            self.scans += 1
            if self.scans == self.fail_on_scan:
                raise st.ServiceError("InternalServerError", "simulated crash")
        return super().call(action, params)


def test_interrupted_rewrite_resumes_from_the_checkpoint(
    dynamodb_client: DynamoDBClient, table_name: str, tmp_path: Path
) -> None:
    db, table_a, _ = stocked(dynamodb_client, table_name)
    before = st.load_snapshot(st.snapshot_json(table_a))
    table_b, event_b = model(table_name, sk="EVENT#{ts}#{seq}", width=8)
    checkpoint = tmp_path / "ckpt.json"

    crashing = FailingConnection(dynamodb_client, fail_on_scan=3)
    with pytest.raises(st.ServiceError, match="simulated crash"):
        st.migrate(
            crashing,
            table_b,
            before,
            checkpoint=checkpoint,
            segments=1,
            page_size=4,
            out=io.StringIO(),
        )
    saved = json.loads(checkpoint.read_text())
    [task] = saved["tasks"].values()
    segment = task["segments"]["0"]
    assert segment["done"] is False
    assert segment["start_key"] is not None
    assert segment["stats"]["scanned"] == 8  # two pages of four went through

    report = st.migrate(
        db, table_b, before, checkpoint=checkpoint, segments=1, page_size=4, out=io.StringIO()
    )
    [stats] = report.rewrites.values()
    assert stats.rewritten == 12
    assert stats.failed == 0
    assert all(k.startswith("EVENT#") for k in raw_sort_keys(dynamodb_client, table_name))
    assert len(event_b.scan().all(db)) == 12


def test_new_gsi_is_created_and_items_backfilled(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, table_a, _ = stocked(dynamodb_client, table_name, 4)
    before = st.load_snapshot(st.snapshot_json(table_a))
    table_b, event_b = model(table_name, sk="EVT#{ts}#{seq}", width=6, gsi=True)

    out = io.StringIO()
    report = st.migrate(db, table_b, before, segments=1, out=out, poll_interval=0.2)
    assert report.index_steps == [f"create GSI ByAction on {table_name} (backfills)"]
    [stats] = report.rewrites.values()
    assert (stats.rewritten, stats.moved) == (4, 0)  # same key, new index attributes
    hits = event_b.query(index="ByAction", action="act0").all(db)
    assert [e.seq for e in hits] == [0, 3]

    again = st.migrate(db, table_b, before, segments=1, out=io.StringIO(), poll_interval=0.2)
    assert again.index_steps == []
    assert next(iter(again.rewrites.values())).rewritten == 0


@pytest.mark.parametrize("segments", [0, -1])
def test_no_scan_segments_is_refused(
    dynamodb_client: DynamoDBClient, table_name: str, segments: int
) -> None:
    # With no segment nothing is scanned: the run would report success and leave every
    # item under its old key.
    db, table_a, _ = stocked(dynamodb_client, table_name, 3)
    before = st.load_snapshot(st.snapshot_json(table_a))
    table_b, _ = model(table_name, sk="EVENT#{ts}#{seq}", width=8)
    with pytest.raises(ValueError, match="segments"):
        st.migrate(db, table_b, before, segments=segments, out=io.StringIO())
    assert all(k.startswith("EVT#") for k in raw_sort_keys(dynamodb_client, table_name))


def test_checkpoint_of_another_migration_is_refused(
    dynamodb_client: DynamoDBClient, table_name: str, tmp_path: Path
) -> None:
    # The second migration rewrites the same entity (same task name); a checkpoint left
    # by the first one says every segment is done, so it would skip every item.
    db, table_a, _ = stocked(dynamodb_client, table_name, 4)
    snap_a = st.load_snapshot(st.snapshot_json(table_a))
    table_b, _ = model(table_name, sk="EVENT#{ts}#{seq}", width=6)
    checkpoint = tmp_path / "ckpt.json"
    st.migrate(db, table_b, snap_a, checkpoint=checkpoint, segments=1, out=io.StringIO())
    assert json.loads(checkpoint.read_text())["tasks"]

    snap_b = st.load_snapshot(st.snapshot_json(table_b))
    table_c, _ = model(table_name, sk="E#{ts}#{seq}", width=6)
    with pytest.raises(st.MigrationError, match="another migration"):
        st.migrate(db, table_c, snap_b, checkpoint=checkpoint, segments=1, out=io.StringIO())
    # Same migration again: the checkpoint is still accepted (resume).
    st.migrate(db, table_b, snap_a, checkpoint=checkpoint, segments=1, out=io.StringIO())
    checkpoint.unlink()
    st.migrate(db, table_c, snap_b, checkpoint=checkpoint, segments=1, out=io.StringIO())
    assert all(k.startswith("E#") for k in raw_sort_keys(dynamodb_client, table_name))


def test_cli_refuses_zero_segments(capsys: pytest.CaptureFixture[str]) -> None:
    from singletable.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["migrate", "singletable.examples:demo", "snap.json", "--segments", "0"])
    assert exit_info.value.code == 2
    assert "--segments: must be at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["migrate", "singletable.examples:demo", "snap.json", "--max-wcu", "0"])
    assert exit_info.value.code == 2
    assert "--max-wcu: must be above 0, got 0" in capsys.readouterr().err


def test_an_item_too_wide_for_one_condition_is_reported_not_sent(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    # Without a version field the rewrite compares every stored attribute in its write's
    # condition. An item of over 150 attributes (its extras written by another program)
    # would make one of over 300 operators, which DynamoDB refuses whole: the item is
    # reported failed with the way out, and the others are rewritten.
    db, table_a, event_a = stocked(dynamodb_client, table_name)
    wide = events(event_a)[0].to_item()
    wide.update({f"x{i}": {"N": "1"} for i in range(152)})
    dynamodb_client.put_item(TableName=table_name, Item=wide)
    before = st.load_snapshot(st.snapshot_json(table_a))
    table_b, _ = model(table_name, sk="EVENT#{ts}#{seq}", width=8)
    out = io.StringIO()
    report = st.migrate(db, table_b, before, segments=2, out=out)
    [stats] = report.rewrites.values()
    assert (stats.rewritten, stats.failed) == (11, 1)
    keys = raw_sort_keys(dynamodb_client, table_name)
    assert sum(k.startswith("EVT#") for k in keys) == 1  # left where it was
    assert re.search(r"operators, past DynamoDB's limits.*version_field", out.getvalue())
