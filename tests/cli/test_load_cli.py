"""``singletable load``, invoked like a user would: validation pass, dry run, load, failures."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

import singletable as st
from singletable.cli.codes import ExitCode
from tests.cli.running import model_module, run

MODEL = """
from decimal import Decimal
import singletable as st

table = st.Table("{table}")

class Customer(st.Entity, table=table, pk="C#{{cid}}", sk="C", unique=("email",)):
    cid: str
    email: str

class Order(st.Entity, table=table, pk="C#{{cid}}", sk="O#{{oid}}"):
    cid: str
    oid: int
    total: Decimal

class Counter(st.Entity, table=table, pk="N#{{name}}", sk="N", version_field="version"):
    name: str
    version: int = 0
"""


@pytest.fixture
def model(tmp_path: Path) -> Iterator[Any]:
    """The model module, on disk for the command and imported for the test."""
    with model_module(tmp_path, "load_cli", MODEL.format(table="load-cli")) as module:
        yield module


def jsonl(tmp_path: Path, *lines: str, name: str = "in.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def orders(n: int, start: int = 0) -> list[str]:
    return [
        f'{{"_et": "Order", "cid": "c{i % 7}", "oid": {i}, "total": "{i}.25"}}'
        for i in range(start, start + n)
    ]


def test_invalid_lines_are_each_listed_and_nothing_is_written(
    model: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = jsonl(
        tmp_path,
        *orders(3),
        '{"_et": "Order", "cid": "c1", "oid": "x", "total": "1"}',
        "{oops",
        '{"_et": "Customer", "cid": "c1", "email": "a"}',
        '{"_et": "Customer", "cid": "c2", "email": "a"}',
        orders(1)[0],
    )
    with st.embedded(model.table) as db:
        code, out = run("load", model.path, path)
        assert stored_orders(db, model) == 0
    assert code == ExitCode.BAD_INPUT
    assert int(ExitCode.BAD_INPUT) == 13
    assert out == ""
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "singletable load: line 4: entity Order: field 'oid': Input should be a valid integer, "
        "unable to parse string as an integer (got 'x')",
        "singletable load: line 5: invalid JSON: Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1)",
        "singletable load: line 7: same unique email as line 6 (entity Customer: email='a'): "
        "two items cannot hold one unique value",
        "singletable load: line 8: same primary key as line 1 (entity Order: PK='C#c0', "
        "SK='O#010'): the later item would silently overwrite the earlier one; give each key once",
        f"singletable load: error: 4 of 8 item lines in {path} are invalid; nothing was written",
    ]


def stored_orders(db: st.Connection, model: Any) -> int:
    return sum(len(model.Order.query(cid=f"c{i}").all(db)) for i in range(7))


def test_dry_run_counts_per_entity_and_writes_nothing(model: Any, tmp_path: Path) -> None:
    path = jsonl(tmp_path, *orders(5), "", '{"_et": "Customer", "cid": "c1", "email": "a"}')
    with st.embedded(model.table) as db:
        code, out = run("load", model.path, path, "--dry-run")
        assert stored_orders(db, model) == 0
    assert code == 0
    assert out == f"{path}: 7 lines, 1 blank; would write 6 items (5 Order, 1 Customer)\n"


def test_load_writes_every_line_and_reports(model: Any, tmp_path: Path) -> None:
    path = jsonl(tmp_path, *orders(60), '{"_et": "Customer", "cid": "c1", "email": "a"}')
    with st.embedded(model.table) as db:
        code, out = run("load", model.path, path)
        assert stored_orders(db, model) == 60
        assert model.Order.get(cid="c3", oid=10).run(db).total == model.Decimal("10.25")
        assert model.Customer.get(cid="c1").run(db).email == "a"
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"load {path}: ")
    assert " of 61 written (" in lines[0]
    assert lines[-2].startswith(f"load {path}: 61 of 61 written (100%), 0 failed; ")
    assert lines[-1].startswith("loaded 61 items (60 Order, 1 Customer) in ")


def test_first_import_batch_writes_versioned_lines_into_an_empty_table_only(
    model: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    counters = [f'{{"_et": "Counter", "name": "n{i}", "version": {i % 4 + 1}}}' for i in range(40)]
    path = jsonl(tmp_path, *counters, '{"_et": "Customer", "cid": "c1", "email": "a"}')
    with st.embedded(model.table) as db:
        code, out = run("load", model.path, path, "--first-import")
        assert code == 0
        # 40 counters in 2 batch calls, the customer created with its guard: 3 calls.
        assert out.splitlines()[-1].endswith(" items/s, 3 calls, 0 retries")
        assert [model.Counter.get(name=f"n{i}").run(db).version for i in range(5)] == [
            1,
            2,
            3,
            4,
            1,
        ]
        # Now the table holds items: a first import is refused before any write.
        again = jsonl(tmp_path, '{"_et": "Counter", "name": "new"}', name="again.jsonl")
        code, out = run("load", model.path, again, "--first-import")
        assert code == ExitCode.ITEMS_FAILED
        assert model.Counter.get(name="new").run(db) is None
    assert "singletable load: error: load refused: table load-cli is not empty" in (
        capsys.readouterr().err
    )


def test_chunks_written_by_several_workers(model: Any, tmp_path: Path) -> None:
    path = jsonl(tmp_path, *orders(60))
    with st.embedded(model.table) as db:
        code, out = run("load", model.path, path, "--workers", "3")
        assert stored_orders(db, model) == 60
    assert code == 0
    assert out.splitlines()[-1].startswith("loaded 60 items (60 Order) in ")
    assert run("load", model.path, path, "--workers", "0")[0] == ExitCode.USAGE


def test_entity_option_and_stdin(
    model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b'{"cid": "c1", "oid": 1, "total": "2"}\r\n{"cid": "c1", "oid": 2, "total": "3"}\r\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    with st.embedded(model.table) as db:
        code, out = run("load", model.path, "-", "--entity", "Order")
        assert [o.oid for o in model.Order.query(cid="c1").all(db)] == [1, 2]
    assert code == 0
    assert "loaded 2 items (2 Order)" in out


def test_an_empty_file_writes_nothing_and_succeeds(model: Any, tmp_path: Path) -> None:
    path = jsonl(tmp_path)
    code, out = run("load", model.path, path)
    assert code == 0
    assert out == f"{path}: 0 lines, 0 blank; nothing to write: no items\n"


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["--entity", "Nope"], ExitCode.USAGE, "--entity: unknown entity 'Nope'"),
        ([], ExitCode.DYNAMODB_ERROR, "table load-cli does not exist at this endpoint/region"),
    ],
)
def test_failures_are_one_line_with_their_code(
    model: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    message: str,
) -> None:
    path = jsonl(tmp_path, *orders(2))
    other = st.Table("elsewhere")
    with st.embedded(other):  # a backend without the model's table
        got, _ = run("load", model.path, path, *argv)
    err = capsys.readouterr().err
    assert got == code
    assert err.count("\n") == 1
    assert err.startswith("singletable load: error: ")
    assert message in err


def test_a_missing_file_is_a_usage_error(model: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run("load", model.path, "/nonexistent/in.jsonl")
    assert code == ExitCode.USAGE
    assert "cannot read /nonexistent/in.jsonl: No such file or directory" in capsys.readouterr().err


def test_progress_through_a_pipe_is_plain_flushed_lines(
    model: Any, tmp_path: Path, moto_server: str
) -> None:
    client = boto3.client(
        "dynamodb",
        endpoint_url=moto_server,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    table = st.Table(f"load-pipe-{os.getpid()}")
    client.create_table(**st.create_table_request(table))
    source = Path(model.path).read_text().replace('"load-cli"', f'"{table.name}"')
    Path(model.path).write_text(source)
    path = jsonl(tmp_path, *orders(120))
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).parents[2]),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }
    env.pop("PYTHONUNBUFFERED", None)
    done = subprocess.run(
        [
            *(sys.executable, "-m", "singletable.cli", "load", model.path, path),
            *("--endpoint-url", moto_server, "--region", "us-east-1"),
        ],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert "\r" not in text  # no bar: the output is a pipe
    progress = [line for line in text.splitlines() if line.startswith(f"load {path}: ")]
    assert progress[0].split(": ")[1].startswith("25 of 120 written (21%), 0 failed")
    assert progress[-1].startswith(f"load {path}: 120 of 120 written (100%), 0 failed; ")
    assert text.splitlines()[-1].startswith("loaded 120 items (120 Order) in ")
    stored = client.scan(TableName=table.name, Select="COUNT")["Count"]
    assert stored == 120
