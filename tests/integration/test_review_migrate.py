"""Review of the migration runner: runs that silently rewrote nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import singletable as st
from tests.integration._executors import connect

from .test_migrate import events, model, raw_sort_keys

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any


@pytest.mark.parametrize("segments", [0, -1])
def test_no_scan_segments_is_refused(
    dynamodb_client: DynamoDBClient, table_name: str, segments: int
) -> None:
    # With no segment nothing is scanned: the run would report success and leave every
    # item under its old key.
    db = connect(dynamodb_client)
    table_a, event_a = model(table_name, sk="EVT#{ts}#{seq}", width=6)
    db.create_table(table_a)
    for event in events(event_a)[:3]:
        event_a.put(event).run(db)
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
    db = connect(dynamodb_client)
    table_a, event_a = model(table_name, sk="EVT#{ts}#{seq}", width=6)
    db.create_table(table_a)
    for event in events(event_a)[:4]:
        event_a.put(event).run(db)
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
