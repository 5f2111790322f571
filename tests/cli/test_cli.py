"""The ``singletable`` command, invoked like a user would."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import singletable as st
from tests.cli.running import run

EXPECTED = Path(__file__).parents[1] / "expected"

MODEL = """
from datetime import datetime
from typing import Annotated
import singletable as st

table = st.Table("cli-app")

class Event(st.Entity, table=table, pk="A#{{actor}}", sk="{sk}"):
    actor: str
    ts: datetime
    seq: Annotated[int, st.KeyFormat(width=6)]
"""


def write_model(tmp_path: Path, name: str, sk: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(MODEL.format(sk=sk)), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("json", "demo.cfn.json"),
        ("yaml", "demo.cfn.yaml"),
        ("create-table", "demo.create_table.json"),
    ],
)
def test_synth_formats(fmt: str, expected: str) -> None:
    code, text = run("synth", "singletable.examples:demo", "--format", fmt)
    assert code == 0
    assert text == (EXPECTED / expected).read_text(encoding="utf-8")


@pytest.mark.parametrize("ref", ["singletable.examples", "singletable.examples:AuditEvent"])
def test_a_module_or_an_entity_names_its_tables(ref: str) -> None:
    assert run("synth", ref) == run("synth", "singletable.examples:demo")


def test_snapshot_to_file_and_plan_without_changes(tmp_path: Path) -> None:
    target = tmp_path / "model.snapshot.json"
    assert run("snapshot", "singletable.examples:demo", "-o", str(target))[0] == 0
    assert target.read_text() == (EXPECTED / "demo.snapshot.json").read_text()
    code, text = run("plan", "singletable.examples:demo", str(target))
    assert (code, text) == (0, "No changes: the model matches the snapshot.\n")


def test_plan_of_a_key_change_exits_4_with_text_and_json(tmp_path: Path) -> None:
    before = write_model(tmp_path, "cli_before", "E#{ts}#{seq}")
    after = write_model(tmp_path, "cli_after", "EVENT#{ts}#{seq}")
    snap = tmp_path / "snap.json"
    assert run("snapshot", f"{before}:table", "-o", str(snap))[0] == 0
    code, text = run("plan", f"{after}:table", str(snap))
    assert code == 4
    assert "[item-rewrite] entity Event@1, <table> key" in text
    code, text = run("plan", f"{after}:table", str(snap), "--json")
    assert code == 4
    assert json.loads(text)["worst"] == "item-rewrite"


def test_migrate_dry_run_then_run(tmp_path: Path) -> None:
    before = write_model(tmp_path, "cli_mig_before", "E#{ts}#{seq}")
    after = write_model(tmp_path, "cli_mig_after", "EVENT#{ts}#{seq}")
    snap = tmp_path / "snap.json"
    run("snapshot", str(before), "-o", str(snap))
    sys.path.insert(0, str(tmp_path))
    try:
        import cli_mig_before  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    from datetime import datetime, timezone

    with st.embedded(cli_mig_before.table) as db:
        for i in range(3):
            ev = cli_mig_before.Event(
                actor="x", ts=datetime(2026, 1, 1, tzinfo=timezone.utc), seq=i
            )
            cli_mig_before.Event.put(ev).run(db)
        code, text = run("migrate", str(after), str(snap), "--dry-run", "--segments", "1")
        assert code == 0
        assert "3 scanned, would rewrite 3 (3 to a new key)" in text
        code, text = run("migrate", str(after), str(snap), "--segments", "2")
        assert code == 0
        assert "did rewrite 3 (3 to a new key)" in text
        code, text = run("migrate", str(after), str(snap), "--segments", "2")
        assert "did rewrite 0" in text
        assert "3 already current" in text


def test_demo_calls_run_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    import singletable.cli.demo as demo

    monkeypatch.setattr(demo, "run_demo", lambda out: out.write("demo ran\n"))
    assert run("demo") == (0, "demo ran\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["synth", "no_such_module_xyz:t"], "cannot import module 'no_such_module_xyz'"),
        (["synth", "singletable.examples:nope"], "has no attribute 'nope'"),
        (["synth", "singletable.examples:sample_items"], "is a function, not a model"),
        (["synth", "json"], "module 'json' defines no Table"),
        (["synth", "missing/file.py"], "no such file: missing/file.py"),
    ],
)
def test_usage_errors_exit_2_with_a_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(*argv)
    assert code == 2
    assert out == ""
    err = capsys.readouterr().err
    assert err.startswith(f"singletable {argv[0]}: error: ")
    assert message in err


@pytest.mark.parametrize("command", ["plan", "migrate"])
def test_missing_snapshot_is_a_bad_snapshot_exit_7(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(command, "singletable.examples:demo", "absent.json")
    assert (code, out) == (7, "")
    err = capsys.readouterr().err
    assert err.startswith(f"singletable {command}: error: absent.json: cannot read")
    assert err.count("\n") == 1


def test_module_that_fails_to_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "broken_model.py"
    bad.write_text("raise RuntimeError('boom at import')\n")
    assert run("synth", str(bad))[0] == 2
    assert "RuntimeError: boom at import" in capsys.readouterr().err


def test_snapshot_of_another_format_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format_version": 99, "tables": {}}))
    assert run("plan", "singletable.examples:demo", str(old))[0] == 7  # bad snapshot
    err = capsys.readouterr().err
    assert "old.json: snapshot format_version is 99" in err


def test_as_a_subprocess_with_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "singletable.cli", "plan", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "4  plan: item rewrite" in done.stdout
    assert "9  DynamoDB endpoint unreachable" in done.stdout
    assert "module:attribute" in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "singletable.cli", "synth", "singletable.examples:demo"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (EXPECTED / "demo.cfn.json").read_text()
