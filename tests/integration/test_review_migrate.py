"""Review of the migration runner: runs that silently rewrote nothing."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import pytest

import singletable as st

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
    db = st.Connection(dynamodb_client)
    table_a, event_a = model(table_name, sk="EVT#{ts}#{seq}", width=6)
    db.create_table(table_a)
    for event in events(event_a)[:3]:
        event_a.put(event).run(db)
    before = st.load_snapshot(st.snapshot_json(table_a))
    table_b, _ = model(table_name, sk="EVENT#{ts}#{seq}", width=8)
    with pytest.raises(ValueError, match="segments"):
        st.migrate(db, table_b, before, segments=segments, out=io.StringIO())
    assert all(k.startswith("EVT#") for k in raw_sort_keys(dynamodb_client, table_name))


def test_cli_refuses_zero_segments(capsys: pytest.CaptureFixture[str]) -> None:
    from singletable.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["migrate", "singletable.examples:demo", "snap.json", "--segments", "0"])
    assert exit_info.value.code == 2
    assert "--segments: must be at least 1" in capsys.readouterr().err
