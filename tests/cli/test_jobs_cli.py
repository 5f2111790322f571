"""``singletable jobs start|work|status|cancel``, invoked like a user would (embedded backend)."""

from __future__ import annotations

import json
import uuid

import pytest

import singletable as st
from singletable.cli.codes import ExitCode
from tests.cli.running import run
from tests.integration.jobs_toy import seed, toy_model

KINDS = "tests.integration.jobs_toy:KINDS"


def _spec(table: str) -> str:
    return json.dumps({"table": table, "segments": 3, "page": 4})


def test_start_work_and_status_run_a_job_to_its_end() -> None:
    toy = toy_model("jobs-cli")
    with st.embedded(toy.plan().table) as db:
        st.BatchWrite(puts=[toy(n=n) for n in range(20)]).run(db)
        common = ["--table", "jobs-cli", "--kinds", KINDS]
        code, out = run(
            "jobs", "start", "j1", *common, "--kind", "touch", "--spec", _spec("jobs-cli")
        )
        assert (code, out) == (0, "job j1 (touch): 3 unit(s), running\n")
        code, out = run("jobs", "status", "j1", *common, "--json")
        assert code == 0
        assert json.loads(out)["done"] == 0
        code, out = run("jobs", "work", "j1", *common, "--worker-id", "me", "--lease-seconds", "5")
        assert code == 0
        assert "worker me: 3 unit(s) finished; scanned 20, written 20" in out
        assert "job j1 (touch) done; units 3/3 done" in out
        code, out = run("jobs", "status", "j1", *common, "--json")
        status = json.loads(out)
        assert (status["state"], status["done"], status["counts"]["scanned"]) == ("done", 3, 20)
        assert status["refused"] == {}  # no lease was lost: nothing redone
        assert sorted(t.hits for t in toy.scan().all(db)) == [1] * 20
        code, out = run("jobs", "cancel", "j1", *common)
        assert (code, out) == (0, "job j1 is done, not running: nothing to cancel\n")


def test_a_cancelled_job_is_not_worked_on() -> None:
    toy = toy_model("jobs-cli-cancel")
    with st.embedded(toy.plan().table):
        common = ["--table", "jobs-cli-cancel", "--kinds", KINDS]
        run("jobs", "start", "c", *common, "--kind", "touch", "--spec", _spec("jobs-cli-cancel"))
        code, out = run("jobs", "cancel", "c", *common)
        assert (code, out) == (0, "job c cancelled: its workers stop at their next page\n")
        code, out = run("jobs", "work", "c", *common, "--worker-id", "me")
        assert code == ExitCode.ITEMS_FAILED
        assert "the job was cancelled" in out


def test_an_unknown_kind_or_job_is_a_usage_error() -> None:
    toy = toy_model("jobs-cli-bad")
    with st.embedded(toy.plan().table):
        common = ["--table", "jobs-cli-bad", "--kinds", KINDS]
        code, _ = run("jobs", "start", "j", *common, "--kind", "nope", "--spec", "{}")
        assert code == ExitCode.USAGE
        code, _ = run("jobs", "status", "missing", *common)
        assert code == ExitCode.USAGE
        bad = ["--table", "jobs-cli-bad", "--kind", "touch", "--spec", "{}"]
        code, _ = run("jobs", "start", "j", *bad, "--kinds", "no.such.module:KINDS")
        assert code == ExitCode.USAGE
        code, _ = run("jobs", "start", "j", *bad, "--kinds", KINDS, "--spec", "{not json")
        assert code == ExitCode.USAGE


def test_work_with_worker_processes(moto_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Worker processes reach moto only as a server (the in-process mock is per process).
    for name, value in (
        ("AWS_ACCESS_KEY_ID", "t"),
        ("AWS_SECRET_ACCESS_KEY", "t"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
    ):
        monkeypatch.setenv(name, value)
    name = f"jobs-cli-workers-{uuid.uuid4().hex[:8]}"
    db = st.Connection(endpoint_url=moto_server)
    seed(db, name, 30)
    try:
        common = ["--table", name, "--kinds", KINDS, "--endpoint-url", moto_server]
        run("jobs", "start", "w", *common, "--kind", "touch", "--spec", _spec(name))
        code, out = run("jobs", "work", "w", *common, "--workers", "2", "--lease-seconds", "5")
        assert code == 0, out
        assert out.count("worker ") == 2
        assert out.splitlines()[-1].startswith("job w (touch) done; units 3/3 done")
        assert sorted(t.hits for t in toy_model(name).scan().all(db)) == [1] * 30
    finally:
        db.delete_table(name)
