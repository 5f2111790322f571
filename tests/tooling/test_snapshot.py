"""Model snapshots: deterministic text, codec parameters recorded, loading errors."""

from __future__ import annotations

import io
import json
import os
from datetime import datetime
from pathlib import Path
from typing import Annotated

import pytest

import singletable as st
from singletable import examples
from singletable.cli import main
from singletable.tooling.snapshot import (
    FORMAT_VERSION,
    load_snapshot,
    read_snapshot,
    snapshot,
    snapshot_json,
)

EXPECTED = Path(__file__).parents[1] / "expected" / "demo.snapshot.json"


def test_demo_snapshot_matches_committed_file() -> None:
    text = snapshot_json(examples.demo)
    if os.environ.get("SINGLETABLE_REGEN") == "1":
        EXPECTED.write_text(text, encoding="utf-8")
    assert EXPECTED.read_text(encoding="utf-8") == text


def test_snapshot_text_is_canonical() -> None:
    text = snapshot_json(examples.demo)
    assert text.endswith("}\n")
    assert not text.endswith("\n\n")
    data = json.loads(text)
    assert text == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert load_snapshot(text) == data


def make(width: int) -> st.Table:
    table = st.Table("app", delimiter="!", escape="%")

    class Event(st.Entity, table=table, pk="A!{actor_id}", sk="E!{ts}!{seq}", version=3):
        actor_id: str
        ts: Annotated[datetime, st.KeyFormat(precision="ms")]
        seq: Annotated[int, st.KeyFormat(width=width)]

    return table


def test_snapshot_records_every_codec_parameter() -> None:
    doc = snapshot(make(8))
    table = doc["tables"]["app"]
    assert doc["format_version"] == FORMAT_VERSION
    assert table["encoding"] == {
        "delimiter": "!",
        "escape": "%",
        "escape_scheme_version": 1,
        "entity_attribute": "_et",
        "version_attribute": "_ev",
    }
    entity = table["entities"]["Event@3"]
    assert (entity["name"], entity["version"]) == ("Event", 3)
    sk = entity["keys"]["<table>"]["sk"]
    assert sk["template"] == "E!{ts}!{seq}"
    assert sk["fields"]["seq"]["width"] == 8
    assert sk["fields"]["ts"]["precision"] == "ms"
    assert sk["fields"]["ts"]["escaped"] is False
    assert entity["keys"]["<table>"]["pk"]["fields"]["actor_id"]["escaped"] is True


def test_separately_built_identical_models_give_identical_text() -> None:
    assert snapshot_json(make(6)) == snapshot_json(make(6))
    assert snapshot_json(make(6)) != snapshot_json(make(7))


def test_bad_json_is_a_snapshot_error_naming_the_source() -> None:
    with pytest.raises(st.SnapshotError, match=r"model\.json: not valid JSON .*line 1"):
        load_snapshot("{nope", source="model.json")


def test_other_format_version_is_refused() -> None:
    text = json.dumps({"format_version": 99, "tables": {}})
    with pytest.raises(st.SnapshotError, match=r"format_version is 99.*reads format_version 1"):
        load_snapshot(text, source="old.json")


def test_document_without_format_version_is_refused() -> None:
    with pytest.raises(st.SnapshotError, match="not a singletable snapshot"):
        load_snapshot("[1, 2]")


def test_malformed_tables_are_refused() -> None:
    with pytest.raises(st.SnapshotError, match="'tables' must map names to tables"):
        load_snapshot(json.dumps({"format_version": 1, "tables": {"t": 3}}))


def test_missing_file_is_a_snapshot_error(tmp_path: Path) -> None:
    path = tmp_path / "absent.json"
    with pytest.raises(st.SnapshotError, match=r"absent\.json: cannot read snapshot"):
        read_snapshot(path)


def test_two_tables_with_one_name_are_refused() -> None:
    with pytest.raises(st.SnapshotError, match="both named 'app'"):
        snapshot([st.Table("app"), st.Table("app")])


def test_snapshot_missing_a_section_is_refused_naming_it() -> None:
    import json

    import singletable as st
    from singletable import examples

    document = json.loads(st.snapshot_json(examples.demo))
    del document["tables"]["singletable-demo"]["encoding"]
    with pytest.raises(st.SnapshotError, match=r"table 'singletable-demo' has no 'encoding'"):
        st.load_snapshot(json.dumps(document), source="snap.json")
    document = json.loads(st.snapshot_json(examples.demo))
    entity = next(iter(document["tables"]["singletable-demo"]["entities"].values()))
    del entity["keys"]
    with pytest.raises(st.SnapshotError, match=r"snap.json: malformed snapshot: entity .* 'keys'"):
        st.load_snapshot(json.dumps(document), source="snap.json")


def test_snapshot_that_is_not_utf8_is_a_bad_snapshot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "binary.json"
    bad.write_bytes(b"\xff\xfe{\x00")
    code = main(["plan", "singletable.examples:demo", str(bad)], out=io.StringIO())
    assert code == 7  # ExitCode.BAD_SNAPSHOT
    err = capsys.readouterr().err
    assert "binary.json" in err
    assert "UTF-8" in err
