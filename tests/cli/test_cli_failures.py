"""Every failure of plan/migrate is one line on stderr with its own exit code."""

from __future__ import annotations

import io
import re
import socket
from pathlib import Path

import pytest

from singletable.cli import main
from singletable.cli.codes import EXIT_CODES_HELP, ExitCode


def fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main(argv, out=out)
    err = capsys.readouterr().err
    assert out.getvalue() == ""
    assert err.count("\n") == 1, err  # one line, no traceback
    assert err.startswith(f"singletable {argv[0]}: error: ")
    return code, err


@pytest.fixture
def snapshot_file(tmp_path: Path) -> str:
    path = tmp_path / "snap.json"
    assert main(["snapshot", "singletable.examples:demo", "-o", str(path)]) == 0
    return str(path)


@pytest.fixture
def no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")


def test_migrate_without_a_region_exits_8(
    no_aws_environment: None, snapshot_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = fail(["migrate", "singletable.examples:demo", snapshot_file], capsys)
    assert code == ExitCode.NO_AWS_CONFIGURATION
    assert int(ExitCode.NO_AWS_CONFIGURATION) == 8
    assert "no AWS region" in err
    assert "--region" in err


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends


def test_unreachable_endpoint_exits_9_not_the_failed_items_code(
    no_aws_environment: None, snapshot_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    argv = ["migrate", "singletable.examples:demo", snapshot_file, "--region", "us-east-1"]
    argv += ["--endpoint-url", endpoint, "--max-attempts", "1"]
    code, err = fail(argv, capsys)
    assert code == ExitCode.ENDPOINT_UNREACHABLE
    assert int(ExitCode.ENDPOINT_UNREACHABLE) == 9
    assert code != ExitCode.ITEMS_FAILED
    assert f"cannot reach DynamoDB at {endpoint}" in err


@pytest.mark.parametrize("command", ["plan", "migrate"])
@pytest.mark.parametrize(
    "text", ["{not json", '{"format_version": 1}', '{"format_version": 1, "tables": []}']
)
def test_bad_snapshot_exits_7(
    command: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    code, err = fail([command, "singletable.examples:demo", str(bad)], capsys)
    assert code == ExitCode.BAD_SNAPSHOT
    assert int(ExitCode.BAD_SNAPSHOT) == 7
    assert "bad.json" in err


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("json", "expected module:function"),
        ("json:no_such_function", "has no 'no_such_function'"),
        ("json:__doc__", "not a function"),
    ],
)
def test_bad_transform_reference_is_a_usage_error(
    ref: str, message: str, snapshot_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["migrate", "singletable.examples:demo", snapshot_file, "--transform", ref]
    code, err = fail(argv, capsys)
    assert code == ExitCode.USAGE
    assert message in err


def test_every_exit_code_is_distinct_and_documented() -> None:
    values = [c.value for c in ExitCode]
    assert len(values) == len(set(values))
    for code in ExitCode:
        assert re.search(rf"^ *{code.value}  \S", EXIT_CODES_HELP, re.MULTILINE), code
    docs = (Path(__file__).parents[2] / "docs" / "schema.md").read_text(encoding="utf-8")
    for code in ExitCode:
        assert f"| {code.value} |" in docs, code
