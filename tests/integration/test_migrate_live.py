"""Live migrations: concurrent writers on the old and the new model lose nothing.

Four writer threads (two on the old model, two on the new) add to counters and put new
items while the runner rewrites the entity in place (a GSI key template change) or moves
it to new keys. Afterwards every counter must equal the number of increments that
succeeded, every item must exist exactly once, in the new shape.

On moto the tests' lock (``tests/conftest.py``) makes each request atomic, as DynamoDB
does; on DynamoDB Local requests run truly concurrently.
"""

from __future__ import annotations

import collections
import io
import json
import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import singletable as st
from docs_src.live_migration import add_hits

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

SEED = 120


def counter_model(name: str, *, gsi_pk: str = "G#{group}", sk: str = "C") -> tuple[st.Table, Any]:
    table = st.Table(name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Counter(
        st.Entity,
        table=table,
        pk="C#{cid}",
        sk=sk,
        indexes={"GSI1": st.IndexKeys(pk=gsi_pk, sk="{cid}")},
    ):
        cid: str
        group: str
        hits: int = 0
        note: str = ""

    return table, Counter


class Writers:
    """Four threads: ``update().add(hits=1)`` on random items, and puts of new items."""

    def __init__(self, db_factory: Callable[[], st.Connection], old: Any, new: Any) -> None:
        self.old, self.new = old, new
        self.ids = [f"c{i:04d}" for i in range(SEED)]
        self.stop = threading.Event()
        self.tallies: list[collections.Counter[str]] = []
        self.puts: list[list[str]] = []
        self.errors: list[BaseException] = []
        self.threads = []
        for n, (primary, fallback) in enumerate([(old, new), (old, new), (new, old), (new, old)]):
            tally: collections.Counter[str] = collections.Counter()
            puts: list[str] = []
            self.tallies.append(tally)
            self.puts.append(puts)
            thread = threading.Thread(
                target=self.run, args=(n, db_factory(), primary, fallback, tally, puts)
            )
            self.threads.append(thread)

    def run(
        self,
        n: int,
        db: st.Connection,
        primary: Any,
        fallback: Any,
        tally: collections.Counter[str],
        puts: list[str],
    ) -> None:
        rng = random.Random(n)
        try:
            while not self.stop.is_set():
                if rng.random() < 0.1:
                    cid = f"w{n}-{len(puts):04d}"
                    primary.put(primary(cid=cid, group=f"g{n}")).run(db)
                    puts.append(cid)
                else:
                    cid = rng.choice(self.ids)
                    add_hits(db, primary, fallback, cid)
                    tally[cid] += 1
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.errors.append(exc)

    def __enter__(self) -> Writers:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()

    def increments(self) -> collections.Counter[str]:
        total: collections.Counter[str] = collections.Counter()
        for tally in self.tallies:
            total.update(tally)
        return total

    def new_ids(self) -> list[str]:
        return [cid for puts in self.puts for cid in puts]


def seed(db: st.Connection, cls: Any) -> None:
    for i in range(SEED):
        cls.put(cls(cid=f"c{i:04d}", group=f"g{i % 5}", note="x" * (i * 13 % 400))).run(db)


def check_nothing_lost(
    client: DynamoDBClient, table_name: str, writers: Writers, new: Any, is_new_shape: Any
) -> dict[str, int]:
    assert not writers.errors, writers.errors
    items = []
    kwargs: dict[str, Any] = {"TableName": table_name, "ConsistentRead": True}
    while True:
        page = client.scan(**kwargs)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    cids = [item["cid"]["S"] for item in items]
    duplicates = [c for c, n in collections.Counter(cids).items() if n > 1]
    assert not duplicates
    expected_ids = set(writers.ids) | set(writers.new_ids())
    assert set(cids) == expected_ids  # exact item count, nothing lost, nothing extra
    old_shape = [item for item in items if not is_new_shape(item)]
    assert not old_shape, old_shape[:3]
    stored = {c.cid: c.hits for c in new.scan().all(st.Connection(client))}
    increments = writers.increments()
    lost = sum(increments.values()) - sum(stored.get(cid, 0) for cid in writers.ids)
    assert {cid: stored[cid] for cid in writers.ids} == {
        cid: increments[cid] for cid in writers.ids
    }
    assert sum(increments.values()) > 50  # the writers really ran during the migration
    return {"increments": sum(increments.values()), "lost": lost, "puts": len(writers.new_ids())}


def migrate_live(
    db: st.Connection, table: st.Table, snapshot: dict[str, Any], **kwargs: Any
) -> st.MigrationReport:
    options: dict[str, Any] = {"segments": 2, "page_size": 10, "out": io.StringIO()}
    options.update(kwargs)
    return st.migrate(db, table, snapshot, **options)


CASES = {
    # (new model options, how an item of the new shape looks)
    "in-place": ({"gsi_pk": "GRP#{group}"}, lambda item: item["GSI1PK"]["S"].startswith("GRP#")),
    "key-move": ({"sk": "CNT"}, lambda item: item["SK"]["S"] == "CNT"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_concurrent_writers_lose_nothing(
    dynamodb_client: DynamoDBClient, table_name: str, case: str
) -> None:
    new_options, is_new_shape = CASES[case]
    db = st.Connection(dynamodb_client)
    table_a, old = counter_model(table_name)
    db.create_table(table_a)
    seed(db, old)
    snapshot = st.load_snapshot(st.snapshot_json(table_a))
    table_b, new = counter_model(table_name, **new_options)

    with Writers(lambda: st.Connection(dynamodb_client), old, new) as writers:
        report = migrate_live(db, table_b, snapshot)
    # Contract check: items that old-model writers put after the scan passed their
    # segment are still in the old shape; a second pass (with nothing writing the old
    # shape any more) rewrites them, and a third finds nothing to do.
    second = migrate_live(db, table_b, snapshot)
    third = migrate_live(db, table_b, snapshot)
    [first_stats], [second_stats], [third_stats] = (
        list(r.rewrites.values()) for r in (report, second, third)
    )
    assert first_stats.failed == second_stats.failed == 0, first_stats.errors
    assert third_stats.rewritten == 0
    figures = check_nothing_lost(dynamodb_client, table_name, writers, new, is_new_shape)
    assert figures["lost"] == 0


class Crash(Exception):
    """Stands for the runner process being killed."""


class CrashingConnection(st.Connection):
    """Dies right after the n-th rewrite write reached DynamoDB (before its checkpoint)."""

    def __init__(self, client: DynamoDBClient, crash_after: int) -> None:
        super().__init__(client)
        self.writes = 0
        self.crash_after = crash_after
        self.lock = threading.Lock()

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        response = super().call(action, params)
        if action in ("put_item", "transact_write_items"):
            with self.lock:
                self.writes += 1
                if self.writes >= self.crash_after:
                    raise Crash(f"killed after write {self.writes}")
        return response


@pytest.mark.parametrize("case", sorted(CASES))
def test_kill_and_resume_under_writers_loses_and_duplicates_nothing(
    dynamodb_client: DynamoDBClient,
    table_name: str,
    case: str,
    tmp_path: Path,
) -> None:
    new_options, is_new_shape = CASES[case]
    db = st.Connection(dynamodb_client)
    table_a, old = counter_model(table_name)
    db.create_table(table_a)
    seed(db, old)
    snapshot = st.load_snapshot(st.snapshot_json(table_a))
    table_b, new = counter_model(table_name, **new_options)
    checkpoint = tmp_path / "ckpt.json"

    with Writers(lambda: st.Connection(dynamodb_client), old, new) as writers:
        crashing = CrashingConnection(dynamodb_client, crash_after=SEED // 2)
        with pytest.raises(Crash):
            migrate_live(crashing, table_b, snapshot, checkpoint=checkpoint)
        saved = json.loads(checkpoint.read_text())
        [task] = saved["tasks"].values()
        assert not all(s["done"] for s in task["segments"].values())  # really mid-way
        resumed = migrate_live(db, table_b, snapshot, checkpoint=checkpoint)
    [stats] = resumed.rewrites.values()
    assert stats.failed == 0, stats.errors
    checkpoint.unlink()
    final = migrate_live(db, table_b, snapshot)  # contract check, writers stopped
    assert next(iter(final.rewrites.values())).failed == 0
    figures = check_nothing_lost(dynamodb_client, table_name, writers, new, is_new_shape)
    assert figures["lost"] == 0
