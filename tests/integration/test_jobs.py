"""The job engine on a live table: leases, takeovers, zombies, worker processes, rate limits.

In-process tests use the backend's client (moto's mock or DynamoDB Local). Tests with
worker processes need an endpoint every process reaches: DynamoDB Local, or on the moto
backend a moto server (``moto_server``), so they run on both backends.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.model.jobs import is_reserved_item, unit_key
from singletable.tooling.jobs.engine import (
    JobError,
    LeaseContext,
    cancel_job,
    run_job,
    start_job,
)
from singletable.tooling.jobs.leases import ClaimUnit, ReadJob
from singletable.tooling.jobs.spark import run_on_spark
from singletable.tooling.jobs.status import job_status
from singletable.tooling.jobs.units import JobCancelled, LeaseLost, WorkUnit
from singletable.tooling.jobs.workers import ConnectionSettings, TableKeys, run_workers
from tests.integration._executors import connect
from tests.integration.jobs_toy import (
    KINDS,
    TOUCH,
    TakenOver,
    late_clock,
    seed,
    segment_query,
    touch,
    toy_model,
)

ITEMS = 60


def _spec(table_name: str, **extra: Any) -> dict[str, Any]:
    return {"table": table_name, "segments": 4, "page": 5, **extra}


def _check_exact(
    db: st.Connection, table_name: str, job_id: str, items: int, *, every_write: bool = True
) -> None:
    """Every item touched once; every unit done, its counts those of one pass.

    And every write counted once (``every_write``): the refused pages of a holder that
    lost its lease included. A killed worker cannot count the page it died in.
    """
    toy = toy_model(table_name)
    stored = toy.scan().consistent().all(db)
    assert len(stored) == items
    assert sorted(t.hits for t in stored) == [1] * items
    assert all(job_id in t.jobs for t in stored)
    status = job_status(db, toy.plan().table, job_id)
    assert status.state == "done"
    assert status.done == status.total
    one_pass = {k: n - status.refused.get(k, 0) for k, n in status.counts.items()}
    assert one_pass["scanned"] == items
    assert one_pass.get("written", 0) + one_pass.get("skipped", 0) == items
    if every_write:
        assert status.counts["written"] == items
    else:
        assert status.counts.get("written", 0) <= items


@pytest.fixture
def db(dynamodb_client: Any, table_name: str) -> st.Connection:
    conn = connect(dynamodb_client)
    seed(conn, table_name, ITEMS)
    return conn


def test_one_worker_runs_every_unit_once(db: st.Connection, table_name: str) -> None:
    table = toy_model(table_name).plan().table
    record = start_job(db, table, TOUCH, _spec(table_name), job_id="j1", expected=ITEMS)
    assert record.total == 4
    report = run_job(lambda: db, table, "j1", KINDS, worker_id="w1", lease_seconds=5)
    assert sorted(report.finished) == [0, 1, 2, 3]
    assert report.counts["written"] == ITEMS
    _check_exact(db, table_name, "j1", ITEMS)
    # The job's own items stay out of entity reads.
    toy = toy_model(table_name)
    assert len(toy.scan().all(db)) == ITEMS


def test_starting_a_job_twice_is_idempotent_and_another_spec_is_refused(
    db: st.Connection, table_name: str
) -> None:
    table = toy_model(table_name).plan().table
    first = start_job(db, table, TOUCH, _spec(table_name), job_id="j")
    run_job(lambda: db, table, "j", KINDS, worker_id="w1", lease_seconds=5)
    again = start_job(db, table, TOUCH, _spec(table_name), job_id="j")
    assert again.total == first.total
    assert job_status(db, table, "j").state == "done"
    with pytest.raises(JobError, match="another spec"):
        start_job(db, table, TOUCH, _spec(table_name, page=7), job_id="j")


def test_a_zombie_that_lost_its_lease_cannot_save_or_finish(
    db: st.Connection, table_name: str
) -> None:
    toy = toy_model(table_name)
    table = toy.plan().table
    start_job(db, table, TOUCH, _spec(table_name), job_id="z")
    seen = ReadJob(table, "z").run(db).units[0]
    # The zombie's clock is behind: every lease it writes has expired already.
    lease = ClaimUnit(table, "z", seen, owner="zombie", now=late_clock(), lease_seconds=1).run(db)
    assert lease is not None
    zombie = LeaseContext(db, table, lease, lease_seconds=1, clock=late_clock)
    unit = WorkUnit("z", "touch", 0, 4, seen.spec)
    pages = segment_query(toy, unit, 5).consistent().pages(db)
    first, second = next(pages), next(pages)
    # The zombie does and saves its first page, writes its second, and is taken over
    # before saving it.
    zombie.save({"cursor": first.cursor}, touch(db, toy, "z", first.items))
    late = touch(db, toy, "z", second.items)
    assert late == {"scanned": len(second.items), "written": len(second.items), "skipped": 0}
    del late["skipped"]  # a count of 0 is not stored
    report = run_job(lambda: db, table, "z", KINDS, worker_id="live", lease_seconds=5)
    assert 0 in report.finished
    before = job_status(db, table, "z")
    with pytest.raises(LeaseLost):
        zombie.save({"cursor": second.cursor}, late)
    with pytest.raises(LeaseLost):
        zombie.finish({})
    with pytest.raises(LeaseLost):
        zombie.spend(rcu=1)
    after = job_status(db, table, "z")
    # Nothing of the unit moved but the refused page's counts, kept aside.
    assert after.units[0] == replace(before.units[0], refused=late)
    assert after.units[0].takeovers == 1
    assert after.units[0].done
    assert zombie.refused == late
    # The new holder went on from the zombie's checkpoint; it found the zombie's unsaved
    # page already written (skipped): one pass counts it skipped, the zombie's refused
    # page counts its writes, so the job counts every write once.
    assert before.counts["skipped"] == len(second.items)
    _check_exact(db, table_name, "z", ITEMS)


def test_a_renew_after_a_takeover_marks_the_context_lost(
    db: st.Connection, table_name: str
) -> None:
    table = toy_model(table_name).plan().table
    start_job(db, table, TOUCH, _spec(table_name), job_id="r")
    seen = ReadJob(table, "r").run(db).units[1]
    lease = ClaimUnit(table, "r", seen, owner="a", now=time.time(), lease_seconds=0.5).run(db)
    assert lease is not None
    context = LeaseContext(db, table, lease, lease_seconds=0.5)
    assert context.renew()
    time.sleep(0.7)
    taken = ReadJob(table, "r").run(db).units[1]
    assert ClaimUnit(table, "r", taken, owner="b", now=time.time(), lease_seconds=5).run(db)
    assert not context.renew()
    assert context.lost
    # The page in progress goes on (its writes are conditional) to its save, which is
    # not sent: its counts are kept as refused, then it stops.
    context.spend(wcu=1)
    with pytest.raises(LeaseLost):
        context.save({"cursor": "x"}, {"scanned": 5, "written": 2})
    with pytest.raises(LeaseLost):
        context.spend(wcu=1)
    unit = ReadJob(table, "r").run(db).units[1]
    assert (unit.counts, unit.refused, unit.saves) == ({}, {"scanned": 5, "written": 2}, 0)
    # Of two claims from the same reading, only the first can win.
    assert (
        ClaimUnit(table, "r", taken, owner="c", now=time.time() + 60, lease_seconds=5).run(db)
        is None
    )


_jobs = itertools.count()


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(index=hs.integers(0, 3), at=hs.integers(0, 3), noticed=hs.booleans())
def test_a_lease_lost_at_any_save_loses_no_count(
    db: st.Connection, table_name: str, index: int, at: int, noticed: bool
) -> None:
    # The undercount of a job on a loaded machine (a holder misses its renewals, another
    # worker takes its unit over, the holder's save is refused and its page's counts were
    # dropped), at any save of any unit: the job still counts every write once.
    toy = toy_model(table_name)
    table = toy.plan().table
    job_id = f"g{next(_jobs)}"  # the toy touches each item once per job id
    start_job(db, table, TOUCH, _spec(table_name), job_id=job_id)
    seen = ReadJob(table, job_id).run(db).units[index]
    lease = ClaimUnit(table, job_id, seen, owner="slow", now=late_clock(), lease_seconds=5)
    held = lease.run(db)
    assert held is not None
    context = LeaseContext(db, table, held, lease_seconds=5, clock=late_clock)
    taken = TakenOver(
        context, at, noticed, lambda: run_job(lambda: db, table, job_id, KINDS, worker_id="live")
    )
    unit = WorkUnit(job_id, "touch", index, 4, seen.spec)
    work = TOUCH.work(_spec(table_name), db)
    refused = False
    try:
        work(unit, taken)
    except LeaseLost:
        refused = True
    lost = taken.taken
    assert refused == lost
    if not lost:  # the unit ended before the takeover: the rest of the job is left
        run_job(lambda: db, table, job_id, KINDS, worker_id="live")
    status = job_status(db, table, job_id)
    assert status.state == "done"
    stored = toy.scan().consistent().all(db)
    assert all(job_id in t.jobs for t in stored)  # every item touched by the job
    assert status.counts["written"] == ITEMS  # each item written once, each write counted
    assert status.counts["scanned"] - status.refused.get("scanned", 0) == ITEMS  # one pass
    assert dict(status.refused) == (context.refused if lost else {})
    assert status.takeovers == int(lost)


def test_cancel_stops_workers_at_their_next_page(db: st.Connection, table_name: str) -> None:
    table = toy_model(table_name).plan().table
    start_job(db, table, TOUCH, _spec(table_name, delay=0.2), job_id="c")
    done = threading.Event()
    reports: list[Any] = []

    def work() -> None:
        reports.append(run_job(lambda: db, table, "c", KINDS, worker_id="w", lease_seconds=1.5))
        done.set()

    thread = threading.Thread(target=work)
    thread.start()
    time.sleep(0.5)
    assert cancel_job(db, table, "c")
    assert done.wait(10)
    thread.join()
    assert reports[0].cancelled
    status = job_status(db, table, "c")
    assert status.state == "cancelled"
    assert status.done < status.total
    assert not cancel_job(db, table, "c")


def test_a_missing_job_and_an_unknown_kind_are_refused(db: st.Connection, table_name: str) -> None:
    table = toy_model(table_name).plan().table
    with pytest.raises(JobError, match="no job"):
        job_status(db, table, "nope")
    start_job(db, table, TOUCH, _spec(table_name), job_id="k")
    with pytest.raises(JobError, match="cannot run"):
        run_job(lambda: db, table, "k", {}, worker_id="w")


def test_job_items_are_reserved(db: st.Connection, table_name: str) -> None:
    table = toy_model(table_name).plan().table
    start_job(db, table, TOUCH, _spec(table_name), job_id="res")
    # A scan of the whole table decodes the items and skips the job's, as it does guards.
    pages: list[st.Page[Any]] = list(st.Scan(table).pages(db))
    assert sum(len(p.items) for p in pages) == ITEMS
    assert [p.unknown for p in pages] == [[]] * len(pages)
    assert is_reserved_item(table, unit_key(table, "res", 0))
    assert not is_reserved_item(table, {"PK": {"S": "TOY#1"}, "SK": {"S": "TOY"}})


# -- worker processes ----------------------------------------------------------------------


# The tests on `shared` run their workers in processes (or Spark tasks) that build their
# own connections from the settings: the executor under test never takes part.
IN_WORKER_PROCESSES = pytest.mark.executor_independent("workers in processes, from settings")


@pytest.fixture
def shared(
    process_settings: ConnectionSettings, table_name: str
) -> tuple[ConnectionSettings, st.Connection]:
    """Settings every process reaches the backend with, a connection, the seeded table."""
    conn = process_settings()
    seed(conn, table_name, ITEMS)
    return process_settings, conn


@IN_WORKER_PROCESSES
def test_three_worker_processes_share_a_job(
    shared: tuple[ConnectionSettings, st.Connection], table_name: str
) -> None:
    settings, conn = shared
    table = toy_model(table_name).plan().table
    start_job(conn, table, TOUCH, _spec(table_name, segments=6), job_id="p3")
    reports = run_workers(settings, table, "p3", KINDS, workers=3, lease_seconds=2)
    assert len(reports) == 3
    assert sorted(i for r in reports for i in r.finished) == list(range(6))
    _check_exact(conn, table_name, "p3", ITEMS)


def _worker(settings: ConnectionSettings, keys: TableKeys, job_id: str) -> None:
    run_job(settings, keys.table(), job_id, KINDS, lease_seconds=1.5)


def _app_writer(settings: ConnectionSettings, table_name: str, stop: Any, out: Any) -> None:
    """An application writer: bumps ``app`` on items round the table until stopped."""
    toy = toy_model(table_name)
    db = settings()
    n = 0
    while not stop.is_set():
        toy.update(n=n % ITEMS).increment("app").run(db)
        n += 1
    out.put(n)


def _pids_holding_units(conn: st.Connection, table: st.Table, job_id: str) -> dict[int, int]:
    """Worker pid -> index of a unit it holds after saving at least one page there."""
    status = job_status(conn, table, job_id)
    held = {}
    for unit in status.units:
        if unit.live(time.time()) and unit.saves >= 1 and unit.owner is not None:
            held[int(unit.owner.split(":")[1])] = unit.index
    return held


@IN_WORKER_PROCESSES
@pytest.mark.parametrize("fault", ["kill", "pause"])
def test_a_worker_killed_or_paused_mid_unit_is_taken_over_and_counts_stay_exact(
    shared: tuple[ConnectionSettings, st.Connection], table_name: str, fault: str
) -> None:
    settings, conn = shared
    table = toy_model(table_name).plan().table
    start_job(conn, table, TOUCH, _spec(table_name, segments=3, delay=0.3), job_id="f")
    spawn = multiprocessing.get_context("spawn")
    stop, out = spawn.Event(), spawn.SimpleQueue()
    writer = spawn.Process(target=_app_writer, args=(settings, table_name, stop, out))
    writer.start()
    keys = TableKeys.of(table)
    workers = [spawn.Process(target=_worker, args=(settings, keys, "f")) for _ in range(3)]
    for process in workers:
        process.start()
    victim = None
    deadline = time.time() + 60
    while victim is None and time.time() < deadline:
        held = _pids_holding_units(conn, table, "f")
        victim = next((p for p in workers if p.pid in held), None)
        time.sleep(0.05)
    assert victim is not None
    assert victim.pid is not None
    if fault == "kill":
        os.kill(victim.pid, signal.SIGKILL)
    else:
        os.kill(victim.pid, signal.SIGSTOP)
        # Asleep until another worker has taken its unit over (past its 1.5 s lease, once
        # a worker is free to look): a fixed sleep raced that on a loaded machine, and a
        # worker that wakes before anyone took over rightly keeps its lease.
        taken = time.time() + 60
        while job_status(conn, table, "f").takeovers < 1 and time.time() < taken:
            time.sleep(0.1)
        os.kill(victim.pid, signal.SIGCONT)
    for process in workers:
        process.join(120)
    stop.set()
    writer.join(30)
    writes = out.get()
    assert all(p.exitcode == 0 for p in workers if p is not victim)
    if fault == "pause":
        assert victim.exitcode == 0  # it woke, found its lease gone, and went on
    _check_exact(conn, table_name, "f", ITEMS, every_write=fault == "pause")
    status = job_status(conn, table, "f")
    assert status.takeovers >= 1
    stored = toy_model(table_name).scan().consistent().all(conn)
    assert sum(t.app for t in stored) == writes  # 0 lost application updates


def test_a_job_rate_limit_is_split_across_the_live_workers(
    db: st.Connection, table_name: str
) -> None:
    table = toy_model(table_name).plan().table
    # 60 items, 1 WCU each, at 30 WCU/s for the whole job: 2 s. Each of the two workers
    # gets half; unsplit, they would take 60 WCU/s between them and finish in 1 s.
    start_job(db, table, TOUCH, _spec(table_name), job_id="rl", max_wcu=30)
    started = time.monotonic()
    threads = [
        threading.Thread(
            target=run_job,
            args=(lambda: db, table, "rl", KINDS),
            kwargs={"worker_id": f"w{n}", "lease_seconds": 0.9},
        )
        for n in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.monotonic() - started
    _check_exact(db, table_name, "rl", ITEMS)
    # The split follows the workers with a lag of one heartbeat (0.3 s).
    assert took >= 1.6


def test_job_cancelled_is_what_a_save_raises_after_a_cancel(
    db: st.Connection, table_name: str
) -> None:
    table = toy_model(table_name).plan().table
    start_job(db, table, TOUCH, _spec(table_name), job_id="jc")
    seen = ReadJob(table, "jc").run(db).units[0]
    lease = ClaimUnit(table, "jc", seen, owner="w", now=time.time(), lease_seconds=5).run(db)
    assert lease is not None
    context = LeaseContext(db, table, lease, lease_seconds=5)
    context.cancel()
    with pytest.raises(JobCancelled):
        context.save({"cursor": "x"}, {"scanned": 1})
    # The page before the cancel is kept.
    assert ReadJob(table, "jc").run(db).units[0].counts == {"scanned": 1}


@IN_WORKER_PROCESSES
def test_spark_local_mode_runs_each_unit_as_a_task(
    shared: tuple[ConnectionSettings, st.Connection],
    table_name: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pyspark.sql import SparkSession

    settings, conn = shared
    table = toy_model(table_name).plan().table
    # Spark's Python workers import the toy kind from this checkout.
    root = str(Path(__file__).resolve().parents[2])
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    )
    start_job(conn, table, TOUCH, _spec(table_name, segments=4), job_id="spark")
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("singletable-jobs-test")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    try:
        reports = run_on_spark(spark, settings, table, "spark", KINDS, lease_seconds=5)
    finally:
        spark.stop()
    assert len(reports) == 4
    assert [r.finished for r in reports] == [[0], [1], [2], [3]]
    assert all(r.worker_id.startswith("spark:") for r in reports)
    _check_exact(conn, table_name, "spark", ITEMS)
