"""``singletable export``, invoked like a user would: to a file or stdout, then loaded back."""

from __future__ import annotations

import io
import json
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
    note: str = ""
"""


#: Text a line-oriented format must survive: quotes, escapes, line ends, non-ASCII.
TRICKY = 'say "hi"\\n\n\r\u2028\x85 — ünïcödé 🎉'


@pytest.fixture
def model(tmp_path: Path) -> Iterator[Any]:
    """The model module, on disk for the command and imported for the test."""
    with model_module(tmp_path, "export_cli", MODEL.format(table="export-cli")) as module:
        yield module


def objects(model: Any) -> list[Any]:
    orders = [
        model.Order(cid=f"c{i % 3}", oid=i, total=model.Decimal(f"{i}.10"), note=TRICKY)
        for i in range(40)
    ]
    return [*orders, model.Customer(cid="c1", email="a@x")]


def everything(db: st.Connection, model: Any) -> list[str]:
    found = [*model.Order.scan().all(db), *model.Customer.scan().all(db)]
    return sorted(map(repr, found))


def test_an_export_file_loads_back_into_an_empty_table(
    model: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "all.jsonl"
    with st.embedded(model.table) as db:
        st.load(db, objects(model), out=io.StringIO())
        before = everything(db, model)
        code, out = run("export", model.path, "-o", str(target))
    assert (code, out) == (0, "")
    err = capsys.readouterr().err.splitlines()
    assert err[-2].startswith(f"export {model.path}: 42 of ~42 scanned (100%), 41 written, ")
    assert err[-1].startswith("exported 41 items (")
    assert len(target.read_bytes().splitlines()) == 41
    assert list(tmp_path.glob("*.partial")) == []
    with st.embedded(model.table) as fresh:
        code, _ = run("load", model.path, str(target))
        assert code == 0
        assert everything(fresh, model) == before
        # The guard item came back with the load: the unique email is taken again.
        with pytest.raises(st.UniqueConstraintError):
            model.Customer.create(model.Customer(cid="c9", email="a@x")).run(fresh)


def test_without_output_the_lines_go_to_stdout(model: Any) -> None:
    with st.embedded(model.table) as db:
        st.load(db, objects(model), out=io.StringIO())
        code, out = run("export", model.path, "--entity", "Customer")
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == [
        {"_et": "Customer", "cid": "c1", "email": "a@x"}
    ]


def test_skipped_items_are_listed_kept_and_exit_1(
    model: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rejects = tmp_path / "rejects.jsonl"
    with st.embedded(model.table) as db:
        st.load(db, objects(model)[:2], out=io.StringIO())
        stranger = {"PK": {"S": "?"}, "SK": {"S": "?"}}
        # An Order without its fields: pydantic's message about it spans several lines.
        stranded = {
            "PK": {"S": "C#c9"},
            "SK": {"S": "O#9"},
            "_et": {"S": "Order"},
            "_ev": {"N": "1"},
        }
        for item in (stranger, stranded):
            db.call("put_item", {"TableName": "export-cli", "Item": item})
        code, out = run("export", model.path, "--rejects", str(rejects))
    assert code == ExitCode.ITEMS_FAILED
    assert len(out.splitlines()) == 2
    err = capsys.readouterr().err.splitlines()
    skipped = sorted(line for line in err if line.startswith("singletable export: skipped "))
    assert len(skipped) == 2
    # Each on one line: no continuation of a message spanning lines.
    assert all(line.startswith(("singletable export: ", "export ", "exported ")) for line in err)
    assert skipped[0].startswith('singletable export: skipped item {"PK": {"S": "?"}, ')
    assert skipped[1].startswith('singletable export: skipped item {"PK": {"S": "C#c9"}, ')
    assert "entity Order:" in skipped[1]
    assert err[-1].startswith("singletable export: error: 2 items not exported (")
    assert err[-1].endswith(f"); written to {rejects}")
    assert "1 unknown entity" in err[-1]
    assert "1 does not decode" in err[-1]
    kept = [json.loads(line)["item"] for line in rejects.read_text().splitlines()]
    assert sorted(kept, key=repr) == sorted([stranger, stranded], key=repr)


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["--entity", "Nope"], ExitCode.USAGE, "--entity: unknown entity 'Nope'"),
        ([], ExitCode.DYNAMODB_ERROR, "export-cli"),
    ],
)
def test_failures_are_one_line_and_leave_no_file(
    model: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    message: str,
) -> None:
    target = tmp_path / "out.jsonl"
    with st.embedded(st.Table("elsewhere")):  # a backend without the model's table
        got, out = run("export", model.path, "-o", str(target), *argv)
    err = capsys.readouterr().err
    assert (got, out) == (code, "")
    assert err.count("\n") == 1
    assert err.startswith("singletable export: error: ")
    assert message in err
    assert list(tmp_path.glob("out.jsonl*")) == []


def test_stdout_is_utf8_whatever_the_locale(model: Any, tmp_path: Path, moto_server: str) -> None:
    client = boto3.client(
        "dynamodb",
        endpoint_url=moto_server,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    table = st.Table(f"export-pipe-{os.getpid()}")
    client.create_table(**st.create_table_request(table))
    source = Path(model.path).read_text().replace('"export-cli"', f'"{table.name}"')
    Path(model.path).write_text(source)
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).parents[2]),
        "PYTHONIOENCODING": "ascii",  # what a C locale gives; the lines must stay UTF-8
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }
    argv = [
        *(sys.executable, "-m", "singletable.cli"),
        *("--endpoint-url", moto_server, "--region", "us-east-1"),
    ]
    data = "".join(
        json.dumps({"_et": "Order", "cid": "c", "oid": i, "total": "1.5", "note": TRICKY}) + "\n"
        for i in range(30)
    )
    loaded = subprocess.run(
        [*argv[:3], "load", model.path, "-", *argv[3:]],
        input=data.encode(),
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert loaded.returncode == 0, loaded.stderr
    done = subprocess.run(
        [*argv[:3], "export", model.path, *argv[3:]],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split(b"\n")
    assert lines[-1] == b""
    assert [json.loads(line)["note"] for line in lines[:-1]] == [TRICKY] * 30
    assert b"\r" not in done.stderr  # no bar: stderr is a pipe
    assert done.stderr.decode().splitlines()[-1].startswith("exported 30 items (30 Order) of 30")
