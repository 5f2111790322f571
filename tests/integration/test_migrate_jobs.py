"""Migrations run as jobs: worker processes killed or paused, writers throughout, 1-4 workers.

A key move of an entity with ``unique=`` (``C#{cid}`` -> ``CUST#{cid}``, guards moved in
each item's transaction) over a few hundred items, run by the ``migrate`` job kind in
worker processes (as ``singletable jobs work`` runs it) while application writers add to
the items through the new model (the expand-phase update: the key its model writes, else
the other). Tests with processes need an endpoint every process reaches: DynamoDB Local,
or on the moto backend a moto server (``process_settings``).
"""

from __future__ import annotations

import collections
import io
import json
import multiprocessing
import os
import signal
import textwrap
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest

import singletable as st
from docs_src.live_migration import add_hits
from singletable.cli.codes import ExitCode
from singletable.model.jobs import is_reserved_item
from singletable.tooling.jobs.engine import LeaseContext, WorkerReport, run_job, start_job
from singletable.tooling.jobs.leases import ClaimUnit, ReadJob
from singletable.tooling.jobs.spark import run_on_spark
from singletable.tooling.jobs.status import job_status
from singletable.tooling.jobs.units import LeaseLost, WorkUnit
from singletable.tooling.jobs.workers import ConnectionSettings, TableKeys
from singletable.tooling.migrations.jobrun import MigrationJob, counts_by_table, migration_spec
from singletable.tooling.migrations.snapshot import dumps
from singletable.tooling.migrations.work import MIGRATE_KIND, load_object
from tests.cli.running import run
from tests.integration.jobs_toy import TakenOver, late_clock
from tests.integration.uniqueness import assert_guards_exact, raw_items

pytestmark = pytest.mark.executor_independent(
    "the jobs run in worker processes (and Spark) that build their own connections"
)

ITEMS = 200
KINDS = {MIGRATE_KIND.name: MIGRATE_KIND}

SOURCE = """
    import singletable as st

    old_table = st.Table({name!r})
    table = st.Table({name!r})

    class OldCustomer(
        st.Entity, table=old_table, pk="C#{{cid}}", sk="C", name="Customer", unique="email"
    ):
        cid: str
        email: str
        hits: int = 0

    class Customer(st.Entity, table=table, pk="CUST#{{cid}}", sk="C", unique="email"):
        cid: str
        email: str
        hits: int = 0
"""


def model_file(tmp_path: Path, table_name: str) -> tuple[str, ModuleType]:
    """The model as a file (worker processes import it by path) and as a module here."""
    path = tmp_path / f"customers_{table_name.replace('-', '_')}.py"
    path.write_text(textwrap.dedent(SOURCE.format(name=table_name)), encoding="utf-8")
    module: ModuleType = load_object(str(path))  # as a worker loads the spec's model
    return str(path), module


def seeded(settings: ConnectionSettings, module: ModuleType) -> tuple[st.Connection, Any]:
    """The table with ITEMS customers in the old shape; the old snapshot."""
    db = settings()
    db.create_table(module.old_table)
    old = module.OldCustomer
    for i in range(ITEMS):
        old.create(old(cid=f"c{i:04d}", email=f"u{i}@example.org")).run(db)
    return db, st.load_snapshot(st.snapshot_json(module.old_table))


def client_for(settings: ConnectionSettings) -> Any:
    """A raw client (credentials from the environment, as ``process_settings`` set them)."""
    return boto3.client(
        "dynamodb", endpoint_url=settings.endpoint_url, region_name=settings.region_name
    )


class Writers:
    """Application writers: ``hits`` added through the new model until stopped, tallied."""

    def __init__(self, settings: ConnectionSettings, module: ModuleType, threads: int = 2) -> None:
        self.stop = threading.Event()
        self.tally: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()
        self.errors: list[BaseException] = []
        self.threads = [
            threading.Thread(target=self.run, args=(n, settings(), module)) for n in range(threads)
        ]

    def run(self, n: int, db: st.Connection, module: ModuleType) -> None:
        i = n
        try:
            while not self.stop.is_set():
                cid = f"c{(i * 7) % ITEMS:04d}"
                add_hits(db, module.Customer, module.OldCustomer, cid)
                with self.lock:
                    self.tally[cid] += 1
                i += 2
        except BaseException as exc:  # the test fails on it below
            self.errors.append(exc)

    def __enter__(self) -> Writers:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()


def check_migrated(
    settings: ConnectionSettings, module: ModuleType, tally: collections.Counter[str]
) -> None:
    """Every item once, moved, with every writer's update; guards exactly the items' values."""
    db = settings()
    stored = {c.cid: c for c in module.Customer.scan().consistent().all(db)}
    assert len(stored) == ITEMS
    client = client_for(settings)
    items = [
        i for i in raw_items(client, module.table.name) if not is_reserved_item(module.table, i)
    ]
    assert sorted(i["PK"]["S"][:5] for i in items) == ["CUST#"] * ITEMS
    assert {cid: c.hits for cid, c in stored.items() if c.hits} == dict(tally)  # 0 lost
    assert assert_guards_exact(client, module.table) == (ITEMS, ITEMS)


def _worker(settings: ConnectionSettings, keys: TableKeys, job_id: str, out: Any) -> None:
    out.put(run_job(settings, keys.table(), job_id, KINDS, lease_seconds=1.5))


def _victim(
    conn: st.Connection, table: st.Table, job_id: str, pids: set[int]
) -> tuple[int, int] | None:
    """A worker that holds a unit after saving at least one page of it: (pid, unit)."""
    for unit in job_status(conn, table, job_id).units:
        if unit.live(time.time()) and unit.saves >= 1 and unit.owner is not None:
            pid = int(unit.owner.split(":")[1])
            if pid in pids:
                return pid, unit.index
    return None


def _taken_over(conn: st.Connection, table: st.Table, job_id: str, index: int, pid: int) -> bool:
    unit = job_status(conn, table, job_id).units[index]
    return unit.owner is not None and int(unit.owner.split(":")[1]) != pid


@pytest.mark.parametrize("fault", ["kill", "pause"])
def test_a_migration_job_survives_a_killed_or_paused_worker_with_writers_running(
    process_settings: ConnectionSettings, table_name: str, tmp_path: Path, fault: str
) -> None:
    ref, module = model_file(tmp_path, table_name)
    conn, before = seeded(process_settings, module)
    table = module.table
    # What `singletable jobs start --kind migrate --spec @spec.json` starts.
    spec = migration_spec(f"{ref}:table", before, segments=3, page_size=10)
    start_job(conn, table, MIGRATE_KIND, spec, job_id="m")
    spawn = multiprocessing.get_context("spawn")
    out = spawn.SimpleQueue()
    keys = TableKeys.of(table)
    workers = [
        spawn.Process(target=_worker, args=(process_settings, keys, "m", out)) for _ in range(3)
    ]
    with Writers(process_settings, module) as writers:
        for process in workers:
            process.start()
        pids = {p.pid for p in workers if p.pid is not None}
        found = None
        deadline = time.time() + 60
        while found is None and time.time() < deadline:
            found = _victim(conn, table, "m", pids)
            time.sleep(0.02)
        assert found is not None, "no worker held a unit mid-segment"
        victim, index = found
        if fault == "kill":
            os.kill(victim, signal.SIGKILL)
        else:
            os.kill(victim, signal.SIGSTOP)
            # Paused past its lease (1.5 s) until another worker has taken the unit over
            # (once it is done with its own), then woken: a zombie.
            deadline = time.time() + 120
            while not _taken_over(conn, table, "m", index, victim) and time.time() < deadline:
                time.sleep(0.1)
            os.kill(victim, signal.SIGCONT)
        for process in workers:
            process.join(180)
    assert not writers.errors, writers.errors
    reports: list[WorkerReport] = []
    while not out.empty():
        reports.append(out.get())
    by_pid = {int(r.worker_id.split(":")[1]): r for r in reports}
    assert all(p.exitcode == 0 for p in workers if p.pid != victim)
    if fault == "pause":
        # The zombie woke, found its lease gone (its save refused), and went on.
        assert [p.exitcode for p in workers if p.pid == victim] == [0]
        assert by_pid[victim].lost
    status = job_status(conn, table, "m")
    assert status.state == "done"
    assert status.done == status.total == 3
    assert status.takeovers >= 1
    # Every move counted once: a paused holder's page it could not save is kept as
    # refused (the next holder finds those items moved, not to move again). A killed one
    # cannot count the page it died in: at most one page per takeover is missing.
    task = f"{table.name}/Customer@1->Customer@1"
    moved = status.counts.get(f"{task}|moved", 0)
    if fault == "pause":
        assert moved == ITEMS
    else:
        assert ITEMS - 10 * status.takeovers <= moved <= ITEMS
    assert status.counts.get(f"{task}|failed", 0) == 0
    check_migrated(process_settings, module, writers.tally)


@pytest.mark.parametrize("noticed", [False, True])
def test_a_holder_that_lost_its_unit_after_moving_a_page_leaves_every_rewrite_counted(
    process_settings: ConnectionSettings, table_name: str, tmp_path: Path, noticed: bool
) -> None:
    # `jobs work` on a loaded machine: a holder misses its renewals, another worker takes
    # its unit over, and the holder's save of a page it had moved is refused (or, noticed
    # by its heartbeat, not sent). The new holder's scan no longer finds those items at
    # their old keys: without the refused page's counts the job said "did rewrite 190".
    ref, module = model_file(tmp_path, table_name)
    db, before = seeded(process_settings, module)
    table = module.table
    spec = migration_spec(f"{ref}:table", before, segments=1, page_size=10)
    start_job(db, table, MIGRATE_KIND, spec, job_id="slow")
    seen = ReadJob(table, "slow").run(db).units[0]
    held = ClaimUnit(table, "slow", seen, owner="slow", now=late_clock(), lease_seconds=5).run(db)
    assert held is not None
    context = LeaseContext(db, table, held, lease_seconds=5, clock=late_clock)
    live = lambda: run_job(lambda: db, table, "slow", KINDS, worker_id="live")  # noqa: E731
    task = f"{table.name}/Customer@1->Customer@1"
    # Taken over at the second page that moved items (a page of guards moves none).
    taken = TakenOver(context, 1, noticed, live, counted=lambda c: c.get(f"{task}|moved", 0) > 0)
    with pytest.raises(LeaseLost):
        MIGRATE_KIND.work(spec, db)(WorkUnit("slow", "migrate", 0, 1, seen.spec), taken)
    status = job_status(db, table, "slow")
    assert status.state == "done"
    [counts] = counts_by_table(status).values()
    assert (counts[f"{task}|rewritten"], counts[f"{task}|moved"]) == (ITEMS, ITEMS)
    assert counts.get(f"{task}|failed", 0) == 0
    # The moves of the holder's refused page are counted, once, as refused.
    assert 0 < status.refused[f"{task}|moved"] == context.refused[f"{task}|moved"]
    check_migrated(process_settings, module, collections.Counter())


def _full_scan(settings: ConnectionSettings, table: st.Table) -> list[dict[str, Any]]:
    """Every item but the job's own (their ids differ run to run), in key order."""
    items = raw_items(client_for(settings), table.name)
    kept = [i for i in items if not i["PK"]["S"].startswith(f"{table.escape}JOB")]
    return sorted(kept, key=lambda i: (i["PK"]["S"], i["SK"]["S"]))


def test_one_two_four_workers_and_spark_give_identical_tables(
    process_settings: ConnectionSettings,
    table_name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pyspark.sql import SparkSession

    scans = {}
    for mode in ("1", "2", "4", "spark"):
        name = f"{table_name}-w{mode}"
        ref, module = model_file(tmp_path, name)
        db, before = seeded(process_settings, module)
        if mode == "spark":
            # Spark's Python workers import singletable and docs_src from this checkout.
            root = str(Path(__file__).resolve().parents[2])
            monkeypatch.setenv(
                "PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
            )
            spec = migration_spec(f"{ref}:table", before, segments=4, page_size=25)
            start_job(db, module.table, MIGRATE_KIND, spec, job_id="spark")
            spark = (
                SparkSession.builder.master("local[2]")
                .appName("singletable-migrate-test")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.ui.enabled", "false")
                .getOrCreate()
            )
            try:
                run_on_spark(spark, process_settings, module.table, "spark", KINDS, lease_seconds=5)
            finally:
                spark.stop()
            assert job_status(db, module.table, "spark").state == "done"
        else:
            job = MigrationJob(workers=int(mode), connection=process_settings, model=f"{ref}:table")
            report = st.migrate(
                db, module.table, before, segments=4, page_size=25, job=job, out=io.StringIO()
            )
            [stats] = report.rewrites.values()
            assert (stats.moved, stats.failed) == (ITEMS, 0)
        check_migrated(process_settings, module, collections.Counter())
        scans[mode] = _full_scan(process_settings, module.table)
    assert len(scans["1"]) == 2 * ITEMS  # the items and their guards
    assert scans["2"] == scans["1"]
    assert scans["4"] == scans["1"]
    assert scans["spark"] == scans["1"]


def test_a_dry_run_with_a_job_writes_no_job_record(
    process_settings: ConnectionSettings, table_name: str, tmp_path: Path
) -> None:
    ref, module = model_file(tmp_path, table_name)
    db, before = seeded(process_settings, module)
    job = MigrationJob(job_id="dry", workers=2, connection=process_settings, model=f"{ref}:table")
    report = st.migrate(db, module.table, before, dry_run=True, job=job, out=io.StringIO())
    [stats] = report.rewrites.values()
    assert stats.moved == ITEMS
    items = raw_items(client_for(process_settings), module.table.name)
    assert not [i for i in items if i["PK"]["S"].startswith("%JOB")]
    assert all(i["PK"]["S"].startswith(("C#", "%UNIQUE")) for i in items)


def test_a_job_run_again_with_its_id_resumes_and_a_done_job_is_not_redone(
    process_settings: ConnectionSettings, table_name: str, tmp_path: Path
) -> None:
    _, module = model_file(tmp_path, table_name)
    db, before = seeded(process_settings, module)
    out = io.StringIO()
    first = st.migrate(db, module.table, before, job="again", segments=2, out=out)
    assert "job again in table" in out.getvalue()
    pages = job_status(db, module.table, "again").pages
    second = st.migrate(db, module.table, before, job="again", segments=2, out=io.StringIO())
    # The report is the job's: its units' counts, read from the table both times; the
    # second run found every unit done and scanned nothing.
    assert first.rewrites == second.rewrites
    assert job_status(db, module.table, "again").pages == pages
    check_migrated(process_settings, module, collections.Counter())


def _cli_connection(settings: ConnectionSettings) -> list[str]:
    return ["--endpoint-url", str(settings.endpoint_url), "--region", str(settings.region_name)]


def test_cli_migrate_with_worker_processes(
    process_settings: ConnectionSettings,
    table_name: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ref, module = model_file(tmp_path, table_name)
    _, before = seeded(process_settings, module)
    snap = tmp_path / "snap.json"
    snap.write_text(dumps(before))
    argv = [f"{ref}:table", str(snap), *_cli_connection(process_settings)]
    code, out = run("migrate", *argv, "--workers", "2", "--checkpoint", str(tmp_path / "c"))
    assert code == ExitCode.USAGE
    assert "--checkpoint is for a run without --workers" in capsys.readouterr().err
    code, out = run("migrate", *argv, "--workers", "2", "--job", "cli", "--segments", "3")
    assert code == 0, out
    assert "job cli in table" in out
    assert f"did rewrite {ITEMS} ({ITEMS} to a new key)" in out
    check_migrated(process_settings, module, collections.Counter())


def test_cli_jobs_start_and_work_run_a_migration_that_migrate_then_finishes(
    process_settings: ConnectionSettings, table_name: str, tmp_path: Path
) -> None:
    # The documented way for workers that `migrate` does not start: `jobs start` with the
    # spec, `jobs work` anywhere, then `migrate --job` to read the job and finish.
    ref, module = model_file(tmp_path, table_name)
    _, before = seeded(process_settings, module)
    snap = tmp_path / "snap.json"
    snap.write_text(dumps(before))
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(migration_spec(f"{ref}:table", before, segments=3)))
    common = ["--table", table_name, *_cli_connection(process_settings)]
    code, out = run("jobs", "start", "hand", *common, "--kind", "migrate", "--spec", f"@{spec}")
    assert (code, out) == (0, "job hand (migrate): 3 unit(s), running\n")
    code, out = run("jobs", "work", "hand", *common, "--workers", "2", "--lease-seconds", "5")
    assert code == 0, out
    check_migrated(process_settings, module, collections.Counter())
    argv = [f"{ref}:table", str(snap), *_cli_connection(process_settings)]
    code, out = run("migrate", *argv, "--job", "hand", "--segments", "3")
    assert code == 0, out
    assert f"did rewrite {ITEMS} ({ITEMS} to a new key)" in out
