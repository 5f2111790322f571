"""Throughput and client CPU: sync, a thread pool, and asyncio tasks, against one server.

The workload: 1,000 GetItems and 50 Queries of 100 items (one partition of the audit log,
`singletable.examples.AuditEvent`), every item decoded into an `AuditEvent`, run as

* **(a) sequential sync**: one `Connection`, one operation after the other;
* **(b) thread pool**: 32 threads sharing one `Connection`;
* **(c) asyncio**: 32 tasks sharing one `AsyncConnection`.

It prints throughput (operations/s) and client CPU per operation (this process's CPU
time: the server runs in another process) as ratios to (a). Target: (c) at least (b)'s
throughput, at lower CPU per operation.

Then the async executor's client CPU per item against **raw aiobotocore** code with
hand-written requests and AttributeValues (the same 32 tasks, the same client config,
items decoded by hand and validated by pydantic, as ``bench_query.py`` does). Target:
<= 1.15x.

The server is ``SINGLETABLE_ENDPOINT`` when set (``scripts/dynamodb-local run -- python3
benchmarks/bench_async.py``), else a moto server started in a subprocess on a free
loopback port. Clients on both sides: ``parameter_validation=False``, standard retries, a
pool of 32 connections. Best of ``--rounds`` runs, modes interleaved; ``--quick`` runs a
tenth of the workload once (a smoke run).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_query import hand_decode

import singletable as st
from singletable.examples import AuditEvent, demo
from singletable.io.common import client_config

ACTOR = "u_bench"
N_ITEMS = 100
CONCURRENCY = 32
REGION = "us-east-1"
CREDENTIALS = {"aws_access_key_id": "local", "aws_secret_access_key": "local"}


def config() -> Config:
    """`Connection`'s own client config, with a pool as large as the concurrency."""
    return client_config(10).merge(Config(max_pool_connections=CONCURRENCY))


def partition() -> list[AuditEvent]:
    from bench_query import events

    return [e.model_copy(update={"actor_id": ACTOR}) for e in events()[:N_ITEMS]]


def jobs(n_gets: int, n_queries: int) -> list[tuple[str, int]]:
    """Gets cycling over the partition, queries spread evenly among them."""
    every = max(1, n_gets // max(1, n_queries))
    out: list[tuple[str, int]] = []
    queries = 0
    for i in range(n_gets):
        out.append(("get", i % N_ITEMS))
        if (i + 1) % every == 0 and queries < n_queries:
            out.append(("query", queries))
            queries += 1
    out += [("query", q) for q in range(queries, n_queries)]
    return out


# -- the server -----------------------------------------------------------------------------


@contextmanager
def server() -> Iterator[str]:
    endpoint = os.environ.get("SINGLETABLE_ENDPOINT")
    if endpoint:
        yield endpoint
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)
        yield endpoint
    finally:
        process.terminate()
        process.wait(timeout=10)


# -- the three ways to run the workload with singletable ----------------------------------


def sync_op(db: st.Connection, events: list[AuditEvent], job: tuple[str, int]) -> int:
    kind, i = job
    if kind == "get":
        e = events[i]
        return 1 if AuditEvent.get(actor_id=ACTOR, ts=e.ts, seq=e.seq).run(db) else 0
    return len(AuditEvent.query(actor_id=ACTOR).all(db))


async def async_op(adb: st.AsyncConnection, events: list[AuditEvent], job: tuple[str, int]) -> int:
    kind, i = job
    if kind == "get":
        e = events[i]
        return 1 if await AuditEvent.get(actor_id=ACTOR, ts=e.ts, seq=e.seq).run(adb) else 0
    return len(await AuditEvent.query(actor_id=ACTOR).all(adb))


def run_sequential(db: st.Connection, events: list[AuditEvent], work: list[Any]) -> int:
    return sum(sync_op(db, events, job) for job in work)


def run_threads(pool: ThreadPoolExecutor, db: st.Connection, events: list[Any], work: Any) -> int:
    return sum(pool.map(lambda job: sync_op(db, events, job), work))


async def run_tasks(op: Callable[[Any], Any], work: list[tuple[str, int]]) -> int:
    """``CONCURRENCY`` tasks taking jobs from one list until it is empty."""
    jobs_left = iter(work)
    total = 0

    async def worker() -> None:
        nonlocal total
        for job in jobs_left:
            items = await op(job)  # awaited first: `total += await ...` would lose updates
            total += items

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return total


# -- raw aiobotocore, hand-written ----------------------------------------------------------


def _sk(e: AuditEvent) -> str:
    return f"EVT#{e.ts.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}#{e.seq:06d}"


async def raw_op(client: Any, events: list[AuditEvent], job: tuple[str, int]) -> int:
    kind, i = job
    if kind == "get":
        e = events[i]
        response = await client.get_item(
            TableName=demo.name,
            Key={"PK": {"S": f"ACTOR#{ACTOR}"}, "SK": {"S": _sk(e)}},
        )
        item = response.get("Item")
        return 1 if item is not None and hand_decode(item) else 0
    request: dict[str, Any] = {
        "TableName": demo.name,
        "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :sk)",
        "ExpressionAttributeNames": {"#pk": "PK", "#sk": "SK"},
        "ExpressionAttributeValues": {":pk": {"S": f"ACTOR#{ACTOR}"}, ":sk": {"S": "EVT#"}},
    }
    results: list[AuditEvent] = []
    while True:
        response = await client.query(**request)
        results.extend(hand_decode(item) for item in response["Items"])
        start = response.get("LastEvaluatedKey")
        if start is None:
            return len(results)
        request["ExclusiveStartKey"] = start


# -- measurement ----------------------------------------------------------------------------


def measure(run: Callable[[], int]) -> tuple[float, float, int]:
    """(wall seconds, this process's CPU seconds, items returned)."""
    wall, cpu = time.perf_counter(), time.process_time()
    items = run()
    return time.perf_counter() - wall, time.process_time() - cpu, items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the work, once")
    parser.add_argument("--rounds", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    n_gets, n_queries, rounds = (100, 5, 1) if args.quick else (1000, 50, args.rounds)
    work = jobs(n_gets, n_queries)
    events = partition()
    expected_items = n_gets + n_queries * N_ITEMS
    os.environ.setdefault("AWS_DEFAULT_REGION", REGION)

    from aiobotocore.session import get_session

    with server() as endpoint:
        where: dict[str, Any] = {"endpoint_url": endpoint, "region_name": REGION, **CREDENTIALS}
        db = st.Connection(boto3.Session().client("dynamodb", config=config(), **where))
        if db.table_exists(demo):
            db.delete_table(demo)
        db.create_table(demo)
        st.BatchWrite(events).run(db)
        pool = ThreadPoolExecutor(CONCURRENCY)
        loop = asyncio.new_event_loop()
        aio_client = loop.run_until_complete(
            get_session().create_client("dynamodb", config=config(), **where).__aenter__()
        )
        adb = st.AsyncConnection(aio_client)

        modes: dict[str, Callable[[], int]] = {
            "(a) sequential sync": lambda: run_sequential(db, events, work),
            "(b) 32 threads, sync": lambda: run_threads(pool, db, events, work),
            "(c) 32 tasks, async": lambda: loop.run_until_complete(
                run_tasks(lambda job: async_op(adb, events, job), work)
            ),
            "raw aiobotocore, 32 tasks": lambda: loop.run_until_complete(
                run_tasks(lambda job: raw_op(aio_client, events, job), work)
            ),
        }
        for name, run in modes.items():  # warm up: connections, caches, first-call costs
            items = measure(run)[2]
            assert items == expected_items, (name, items, expected_items)
        best: dict[str, tuple[float, float]] = {}
        for _ in range(rounds):
            for name, run in modes.items():
                wall, cpu, items = measure(run)
                assert items == expected_items, (name, items)
                old = best.get(name, (float("inf"), float("inf")))
                best[name] = (min(old[0], wall), min(old[1], cpu))
        loop.run_until_complete(aio_client.__aexit__(None, None, None))
        loop.close()
        pool.shutdown()

    ops = len(work)
    server_name = (
        "SINGLETABLE_ENDPOINT" if os.environ.get("SINGLETABLE_ENDPOINT") else "moto subprocess"
    )
    print(
        f"bench_async: {n_gets} gets + {n_queries} queries of {N_ITEMS} items = {ops} ops, "
        f"{expected_items} items; server: {server_name}; best of {rounds}"
    )
    base_wall, base_cpu = best["(a) sequential sync"]
    print(f"{'':28}{'ops/s':>9}{'vs (a)':>8}{'CPU µs/op':>11}{'vs (a)':>8}")
    for name in (*list(best)[:3], "raw aiobotocore, 32 tasks"):
        wall, cpu = best[name]
        print(
            f"{name:28}{ops / wall:9.0f}{base_wall / wall:7.2f}x"
            f"{cpu / ops * 1e6:11.0f}{cpu / base_cpu:7.2f}x"
        )
    async_cpu, raw_cpu = best["(c) 32 tasks, async"][1], best["raw aiobotocore, 32 tasks"][1]
    print(f"\n{'client CPU per item':28}{'µs/item':>9}{'ratio':>8}")
    print(
        f"{'AsyncConnection':28}{async_cpu / expected_items * 1e6:9.1f}{async_cpu / raw_cpu:7.2f}x"
    )
    print(f"{'raw aiobotocore (by hand)':28}{raw_cpu / expected_items * 1e6:9.1f}{1:7.2f}x")
    print("targets: (c) ops/s >= (b) at lower CPU/op; AsyncConnection <= 1.15x raw")


if __name__ == "__main__":
    main()
