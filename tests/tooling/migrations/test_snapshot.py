"""Model snapshots: deterministic text, codec parameters recorded, loading errors."""

from __future__ import annotations

import io
import json
import os
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import pytest

import singletable as st
from singletable import examples
from singletable.cli import main
from singletable.tooling.migrations.snapshot import (
    FORMAT_VERSION,
    load_snapshot,
    read_snapshot,
    snapshot,
    snapshot_json,
)

EXPECTED = Path(__file__).parents[2] / "expected" / "demo.snapshot.json"


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
        "ttl_format": "ttl-epoch-seconds/1",
    }
    entity = table["entities"]["Event@3"]
    assert (entity["name"], entity["version"]) == ("Event", 3)
    sk = entity["keys"]["<table>"]["sk"]
    assert sk["template"] == "E!{ts}!{seq}"
    assert sk["fields"]["seq"]["width"] == 8
    assert sk["fields"]["ts"]["precision"] == "ms"
    assert sk["fields"]["ts"]["escaped"] is False
    assert sk["fields"]["ts"]["format"] == "key-datetime-utc/1"
    assert sk["fields"]["seq"]["format"] == "key-int-fixed/1"
    assert entity["attributes"]["ts"]["format"] == "datetime-utc-us/2"
    assert entity["attributes"]["seq"]["format"] == "number/1"
    assert entity["keys"]["<table>"]["pk"]["fields"]["actor_id"]["escaped"] is True


def test_separately_built_identical_models_give_identical_text() -> None:
    assert snapshot_json(make(6)) == snapshot_json(make(6))
    assert snapshot_json(make(6)) != snapshot_json(make(7))


def test_bad_json_is_a_snapshot_error_naming_the_source() -> None:
    with pytest.raises(st.SnapshotError, match=r"model\.json: not valid JSON .*line 1"):
        load_snapshot("{nope", source="model.json")
    # An integer past Python's digit limit raises a plain ValueError inside the parser.
    with pytest.raises(st.SnapshotError, match=r"model\.json: not valid JSON"):
        load_snapshot('{"format_version": ' + "1" * 5_000 + "}", source="model.json")


def test_other_format_version_is_refused() -> None:
    text = json.dumps({"format_version": 99, "tables": {}})
    with pytest.raises(
        st.SnapshotError, match=r"format_version is 99.*reads format_version 1 and 2"
    ):
        load_snapshot(text, source="old.json")


def test_document_without_format_version_is_refused() -> None:
    with pytest.raises(st.SnapshotError, match="not a singletable snapshot"):
        load_snapshot("[1, 2]")


def test_malformed_tables_are_refused() -> None:
    with pytest.raises(
        st.SnapshotError, match=r'at tables\["t"\]: expected an object, got a number'
    ):
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
    with pytest.raises(st.SnapshotError, match=r'at tables\["singletable-demo"\]: no .encoding.'):
        st.load_snapshot(json.dumps(document), source="snap.json")
    document = json.loads(st.snapshot_json(examples.demo))
    entity = next(iter(document["tables"]["singletable-demo"]["entities"].values()))
    del entity["keys"]
    with pytest.raises(st.SnapshotError, match=r"snap.json: malformed snapshot at .*: no 'keys'"):
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


def _demo_document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(snapshot_json(examples.demo))
    return loaded


def _first(mapping: dict[str, Any]) -> Any:
    return next(iter(mapping.values()))


def _null_fields(doc: dict[str, Any]) -> None:
    _first(_first(doc["tables"])["entities"])["keys"]["<table>"]["pk"]["fields"] = None


def _list_attributes(doc: dict[str, Any]) -> None:
    _first(_first(doc["tables"])["entities"])["attributes"] = []


def _gsi_without_projection(doc: dict[str, Any]) -> None:
    del _first(_first(doc["tables"])["indexes"])["projection"]


def _string_version(doc: dict[str, Any]) -> None:
    _first(_first(doc["tables"])["entities"])["version"] = "1"


def _bool_as_number(doc: dict[str, Any]) -> None:
    _first(doc["tables"])["encoding"]["escape_scheme_version"] = True


def _sparse_fields_not_strings(doc: dict[str, Any]) -> None:
    _first(_first(doc["tables"])["entities"])["keys"]["<table>"]["sparse_fields"] = [1]


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (_null_fields, r'\.keys\["<table>"\]\.pk\.fields: expected an object, got null'),
        (_list_attributes, r"\.attributes: expected an object, got a list"),
        (_gsi_without_projection, r"\.indexes\[\"GSI1\"\]: no 'projection'"),
        (_string_version, r"\.version: expected a number, got a string"),
        (_bool_as_number, r"\.escape_scheme_version: expected a number, got true/false"),
        (_sparse_fields_not_strings, r"\.sparse_fields\[0\]: expected a string, got a number"),
    ],
)
def test_hand_edited_snapshot_is_refused_naming_the_path(
    edit: Any, where: str, tmp_path: Path
) -> None:
    document = _demo_document()
    edit(document)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(
        st.SnapshotError, match=r"edited\.json: malformed snapshot at tables.*" + where
    ):
        read_snapshot(path)


def test_hand_edited_snapshot_is_one_line_from_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from singletable.cli import main

    document = _demo_document()
    _null_fields(document)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    code = main(["plan", "singletable.examples:demo", str(path)], out=io.StringIO())
    err = capsys.readouterr().err
    assert code == 7  # ExitCode.BAD_SNAPSHOT
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert "edited.json: malformed snapshot at" in err
    assert "fields" in err


def _legacy(document: dict[str, Any]) -> dict[str, Any]:
    """A snapshot as format_version 1 wrote it: no format ids, no defaults."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: strip(v)
                for k, v in value.items()
                if k not in ("format", "default", "ttl_format")
            }
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    legacy: dict[str, Any] = strip(document)
    legacy["format_version"] = 1
    return legacy


def test_snapshot_without_format_ids_plans_a_rewrite_only_where_a_format_changed() -> None:
    # Format ids still at version 1 have never changed: a legacy snapshot matches them.
    # datetime attributes are at datetime-utc-us/2: the planner cannot know which version
    # the stored items hold, says so, and plans an (idempotent) rewrite.
    from singletable.tooling.migrations.planner import ChangeClass, plan_changes

    legacy = load_snapshot(json.dumps(_legacy(_demo_document())))
    result = plan_changes(examples.demo, legacy)
    assert result.worst is ChangeClass.ITEM_REWRITE, result.to_text()
    subjects = [c.subject for c in result.changes if c.kind is ChangeClass.ITEM_REWRITE]
    assert subjects == ["entity AuditEvent@1, attribute ts", "entity Reading@1, attribute ts"]
    reason = result.changes[0].reason
    assert "predates stored-format ids" in reason
    assert "datetime-utc-us/1" in reason
    assert result.changes[0].needs_transform is None


def test_current_snapshot_of_the_same_model_plans_nothing() -> None:
    from singletable.tooling.migrations.planner import plan_changes

    assert plan_changes(examples.demo, load_snapshot(snapshot_json(examples.demo))).changes == ()


def test_native_gsis_are_recorded_with_typed_parts_and_stored_formats() -> None:
    from singletable.tooling.migrations.planner import plan_changes

    table = st.Table(
        "app",
        indexes=[st.NativeGSI("ByArea", pk=["tenant", "region"], sk=[st.KeyPart("day", "N")])],
    )

    class Reading(st.Entity, table=table, pk="R#{rid}", sk="R"):
        rid: str
        tenant: str
        region: str | None = None
        day: int

    doc = load_snapshot(snapshot_json(table))
    section = doc["tables"]["app"]
    assert section["native_indexes"] == {
        "ByArea": {
            "kind": "GSI",
            "pk": [{"attribute": "tenant", "type": "S"}, {"attribute": "region", "type": "S"}],
            "sk": [{"attribute": "day", "type": "N"}],
            "projection": {"ProjectionType": "ALL"},
        }
    }
    native = section["entities"]["Reading@1"]["native_indexes"]["ByArea"]
    assert native["sparse_fields"] == ["region"]
    assert native["sk"] == [
        {"attribute": "day", "field": "day", "type": "N", "ordered": True, "format": "number/1"}
    ]
    assert plan_changes(table, doc).changes == ()
    # A table without native GSIs has no such section: older snapshots stay as they were.
    assert "native_indexes" not in snapshot(make(8))["tables"]["app"]
