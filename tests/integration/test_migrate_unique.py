"""Migrations of entities with ``unique=``: every rewrite keeps the guards exact (issue 21).

One test per defect the issue lists: each used to leave guards on old values, old names
or old keys (so a duplicate was accepted, or later writes failed with "guards are out of
step"), or reported a backfill that met duplicates as a success.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import pytest

import singletable as st
from singletable.errors import ServiceError
from singletable.operations.protocol import Call, Operation, Step
from singletable.tooling.jobs.local import run_units
from singletable.tooling.migrations.rewrite_item import RewriteItem
from singletable.tooling.migrations.runner import migrate_async
from singletable.tooling.migrations.snapshot import dumps
from singletable.tooling.migrations.work import MIGRATE_KIND, build_routes
from tests.cli.running import model_module, run
from tests.integration._executors import connect
from tests.integration.uniqueness import assert_guards_exact, raw_items

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any


def customers(
    table_name: str, *, name: str = "Customer", pk: str = "C#{cid}", width: int = 4
) -> tuple[st.Table, Any]:
    table = st.Table(table_name)

    class Customer(st.Entity, table=table, pk=pk, sk="C", name=name, unique=["email", "badge"]):
        cid: str
        email: str
        badge: Annotated[int, st.KeyFormat(width=width)]
        note: str = ""

    return table, Customer


def seeded(client: DynamoDBClient, table_name: str, **options: Any) -> tuple[st.Connection, Any]:
    db = connect(client)
    table, cls = customers(table_name, **options)
    db.create_table(table)
    for i in range(5):
        cls.create(cls(cid=f"c{i}", email=f"User{i}@Example.org", badge=i)).run(db)
    return db, st.load_snapshot(st.snapshot_json(table))


def rewrite_plan(table_name: str, ident: str) -> st.MigrationPlan:
    """A rewrite the model does not call for: only the transform changes the items."""
    change = st.Change(
        st.ChangeClass.ITEM_REWRITE,
        table_name,
        f"entity {ident}",
        "normalise emails",
        {"op": "rewrite", "old": ident, "new": ident},
    )
    return st.MigrationPlan((change,))


def lower(values: Mapping[str, Any]) -> dict[str, Any]:
    return {**values, "email": str(values["email"]).lower()}


def test_a_transform_that_changes_a_unique_value_moves_its_guard(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, before = seeded(dynamodb_client, table_name)
    table, cls = customers(table_name)
    plan = rewrite_plan(table_name, "Customer@1")
    report = st.migrate(db, table, before, plan=plan, transform=lower, out=io.StringIO())
    [stats] = report.rewrites.values()
    assert (stats.rewritten, stats.failed) == (5, 0)
    assert (stats.guards_claimed, stats.guards_released) == (5, 5)
    assert assert_guards_exact(dynamodb_client, table) == (5, 10)
    with pytest.raises(st.UniqueConstraintError):
        cls.create(cls(cid="x", email="user1@example.org", badge=99)).run(db)
    # The old spelling is free again: its guard went with the rewrite.
    cls.create(cls(cid="y", email="User1@Example.org", badge=98)).run(db)


def test_a_transform_that_makes_two_values_equal_fails_the_second_and_lists_it(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, _ = seeded(dynamodb_client, table_name)
    table, cls = customers(table_name)
    cls.create(cls(cid="d", email="USER1@example.org", badge=50)).run(db)
    before = st.load_snapshot(st.snapshot_json(table))
    plan = rewrite_plan(table_name, "Customer@1")
    report = st.migrate(db, table, before, plan=plan, transform=lower, out=io.StringIO())
    [stats] = report.rewrites.values()
    assert (stats.rewritten, stats.failed) == (5, 1)
    assert report.failed == 1
    [(values, holders)] = stats.duplicates
    assert values == {"email": "user1@example.org"}
    assert sorted(h["cid"] for h in holders) == ["c1", "d"]
    assert "duplicate" in report.to_text()
    assert_guards_exact(dynamodb_client, table)  # the loser kept its old value and guard


def test_renaming_an_entity_plans_and_moves_its_guards(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, before = seeded(dynamodb_client, table_name, name="C")
    table, cls = customers(table_name, name="Customer")
    plan = st.plan_changes(table, before)
    guard_changes = [c for c in plan.changes if "unique" in c.subject]
    assert {c.subject.rpartition(", ")[2] for c in guard_changes} == {
        "unique email",
        "unique badge",
    }
    assert all(c.kind is st.ChangeClass.ITEM_REWRITE for c in guard_changes)
    report = st.migrate(db, table, before, out=io.StringIO())
    [stats] = report.rewrites.values()
    assert (stats.rewritten, stats.failed, stats.guards_claimed) == (5, 0, 10)
    assert assert_guards_exact(dynamodb_client, table) == (5, 10)
    with pytest.raises(st.UniqueConstraintError):
        cls.create(cls(cid="x", email="User2@Example.org", badge=77)).run(db)


def test_a_key_format_used_only_by_unique_is_planned_and_rewrites_the_guards(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, before = seeded(dynamodb_client, table_name, width=4)
    entity = before["tables"][table_name]["entities"]["Customer@1"]
    badge = next(c for c in entity["unique"] if c["fields"] == ["badge"])
    assert badge["codecs"]["badge"] == {
        "kind": "fixed_int",
        "width": 4,
        "format": "key-int-fixed/1",
    }
    table, cls = customers(table_name, width=6)
    plan = st.plan_changes(table, before)
    assert plan.to_text() != "No changes: the model matches the snapshot.\n"
    [change] = plan.changes
    assert (change.kind, change.subject) == (
        st.ChangeClass.ITEM_REWRITE,
        "entity Customer@1, unique badge",
    )
    report = st.migrate(db, table, before, out=io.StringIO())
    [stats] = report.rewrites.values()
    # The items are as the new model writes them already; only the guards move.
    assert (stats.unchanged, stats.guards_claimed, stats.guards_released) == (5, 5, 5)
    assert assert_guards_exact(dynamodb_client, table) == (5, 10)
    with pytest.raises(st.UniqueConstraintError):
        cls.create(cls(cid="x", email="new@x", badge=3)).run(db)
    again = st.migrate(db, table, before, out=io.StringIO())
    [stats] = again.rewrites.values()
    assert (stats.guards_claimed, stats.guards_released, stats.unchanged) == (0, 0, 5)


def test_a_key_move_leaves_guards_naming_the_new_key(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, before = seeded(dynamodb_client, table_name, pk="C#{cid}")
    table, cls = customers(table_name, pk="CUST#{cid}")
    report = st.migrate(db, table, before, out=io.StringIO())
    [stats] = report.rewrites.values()
    assert (stats.moved, stats.failed) == (5, 0)
    assert assert_guards_exact(dynamodb_client, table) == (5, 10)
    # Later writes find the guards in step: an update of a unique field, a delete.
    cls.update(cid="c1").set(email="changed@x").run(db)
    cls.delete(cid="c2").run(db)
    assert assert_guards_exact(dynamodb_client, table) == (4, 8)


def members(table_name: str, *, unique: bool) -> tuple[st.Table, Any]:
    table = st.Table(table_name)
    options: dict[str, Any] = {"unique": "email"} if unique else {}

    class Member(st.Entity, table=table, pk="M#{mid}", sk="M", **options):
        mid: str
        email: str

    return table, Member


def seeded_members(client: DynamoDBClient, table_name: str) -> tuple[st.Connection, Any]:
    db = connect(client)
    table, cls = members(table_name, unique=False)
    db.create_table(table)
    for mid, email in [("1", "a@x"), ("2", "a@x"), ("3", "b@x"), ("4", "c@x")]:
        cls.put(cls(mid=mid, email=email)).run(db)
    return db, st.load_snapshot(st.snapshot_json(table))


def test_a_backfill_that_meets_duplicates_fails_and_lists_them(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, before = seeded_members(dynamodb_client, table_name)
    table, cls = members(table_name, unique=True)
    report = st.migrate(db, table, before, segments=2, out=io.StringIO())
    [backfill] = report.backfills.values()
    assert (backfill.scanned, backfill.claimed) == (4, 3)
    assert backfill.duplicates == [({"email": "a@x"}, [{"mid": "1"}, {"mid": "2"}])]
    assert report.failed == 1
    # The duplicated value is guarded (by one of its holders): no third item takes it.
    with pytest.raises(st.UniqueConstraintError):
        cls.create(cls(mid="5", email="a@x")).run(db)


def test_cli_backfill_with_duplicates_exits_non_zero(
    dynamodb_client: DynamoDBClient,
    dynamodb_endpoint: str | None,
    table_name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, before = seeded_members(dynamodb_client, table_name)
    snap = tmp_path / "snap.json"
    snap.write_text(dumps(before))
    source = f"""
        import singletable as st
        table = st.Table({table_name!r})
        class Member(st.Entity, table=table, pk="M#{{mid}}", sk="M", unique="email"):
            mid: str
            email: str
    """
    argv = ["--region", "us-east-1", "--segments", "2", "--workers", "1", "--max-wcu", "500"]
    if dynamodb_endpoint is not None:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
        argv += ["--endpoint-url", dynamodb_endpoint]
    with model_module(tmp_path, "members", source) as module:
        code, out = run("migrate", f"{module.path}:table", str(snap), *argv)
    assert code != 0, out
    assert "duplicate {'email': 'a@x'}" in out


def test_dry_runs_say_would_and_re_runs_count_guards_in_place(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, before = seeded_members(dynamodb_client, table_name)
    table, _ = members(table_name, unique=True)
    out = io.StringIO()
    dry = st.migrate(db, table, before, dry_run=True, segments=1, out=out)
    text = out.getvalue()
    assert "would claim 3 guard(s)" in text
    assert "written" not in text
    assert not [i for i in raw_items(dynamodb_client, table_name) if i["PK"]["S"][0] == "%"]
    [backfill] = dry.backfills.values()
    assert backfill.duplicates == [({"email": "a@x"}, [{"mid": "1"}, {"mid": "2"}])]
    assert backfill.write_units == pytest.approx(3 * 2.0)  # one transactional guard put each
    assert "estimate:" in dry.to_text()

    st.migrate(db, table, before, segments=1, out=io.StringIO())
    again = st.migrate(db, table, before, segments=1, out=io.StringIO())
    [backfill] = again.backfills.values()
    assert (backfill.claimed, backfill.present) == (0, 3)
    assert "claimed 0 guard(s), 3 already in place" in again.to_text()


def test_a_dry_run_estimates_every_step(dynamodb_client: DynamoDBClient, table_name: str) -> None:
    db, before = seeded(dynamodb_client, table_name, pk="C#{cid}")
    table, _ = customers(table_name, pk="CUST#{cid}")
    dry = st.migrate(db, table, before, dry_run=True, segments=1, out=io.StringIO())
    [stats] = dry.rewrites.values()
    assert stats.moved == 5
    # A key move: a transaction per item (put, delete and a claim per guard), 2x per 1 KB.
    assert stats.write_units == pytest.approx(5 * 2 * 4)
    assert stats.read_units > 0
    assert "would rewrite 5" in dry.to_text()


def mixed(table_name: str, *, new: bool) -> tuple[st.Table, Any, Any, Any]:
    """A key move (with a guard), an index change and a unique backfill in one table."""
    table = st.Table(table_name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Doc(st.Entity, table=table, pk="DOC#{did}" if new else "D#{did}", sk="D", unique="email"):
        did: str
        email: str
        body: str
        if new:
            # The moved item is larger, so that the put and the delete of a move differ in
            # size: DynamoDB Local reports the entries of a transaction that come to the
            # same figures as one (tests/integration/test_capacity_oracle.py); DynamoDB
            # bills each.
            extra: str = "e" * 1100

    class Note(
        st.Entity,
        table=table,
        pk="N#{nid}",
        sk="N",
        indexes={"GSI1": st.IndexKeys(pk="NOTE#{group}" if new else "N#{group}", sk="{nid}")},
    ):
        nid: str
        group: str
        body: str

    options: dict[str, Any] = {"unique": "handle"} if new else {}

    class Member(st.Entity, table=table, pk="M#{mid}", sk="M", **options):
        mid: str
        handle: str
        body: str  # over 4 KB: the check of the item costs more than its guard's claim

    return table, Doc, Note, Member


@pytest.mark.dynamodb_local_only(
    "moto reports ConsumedCapacity as a flat guess (and none for transactions)"
)
def test_dry_run_estimate_of_a_key_move_a_backfill_and_an_index_change_is_within_ten_percent(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db = connect(dynamodb_client)
    table_a, doc, note, member = mixed(table_name, new=False)
    db.create_table(table_a)
    for i in range(20):
        doc.put(doc(did=f"d{i:02d}", email=f"{i}@x", body="x" * (1100 + i * 37 % 800))).run(db)
        note.put(note(nid=f"n{i:02d}", group=f"g{i % 3}", body="y" * (i * 151 % 3000))).run(db)
        member.put(member(mid=f"m{i:02d}", handle=f"h{i}", body="z" * (4200 + i * 53))).run(db)
    before = st.load_snapshot(st.snapshot_json(table_a))
    table_b, *_ = mixed(table_name, new=True)
    plan = st.plan_changes(table_b, before)
    ops = {(c.action or {}).get("op") for c in plan.changes}
    assert {"rewrite", "backfill_unique"} <= ops

    dry = st.migrate(db, table_b, before, dry_run=True, segments=2, page_size=15)
    run = st.migrate(db, table_b, before, segments=2, page_size=15, out=io.StringIO())
    assert run.failed == 0, run.to_text()
    [estimate], [reported] = dry.scans.values(), run.scans.values()
    [move] = [s for t, s in run.rewrites.items() if "Doc" in t]
    assert move.moved == 20
    [backfill] = run.backfills.values()
    assert backfill.claimed == 20
    assert estimate.write_units > 20 * 2 * 3  # each move: put, delete and claim, doubled
    total = estimate.read_units + estimate.write_units
    assert total == pytest.approx(
        reported.reported_read_units + reported.reported_write_units, rel=0.10
    ), (dry.to_text(), run.to_text())


class AsyncOnly:
    """An asyncio executor (its ``execute`` is a coroutine), over the test's executor."""

    def __init__(self, db: st.Connection) -> None:
        self.db = db
        self.calls = 0

    async def execute(self, operation: Any) -> Any:
        self.calls += 1
        return self.db.execute(operation)


def test_an_asyncio_executor_runs_a_migration(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, before = seeded(dynamodb_client, table_name, pk="C#{cid}")
    table, _ = customers(table_name, pk="CUST#{cid}")
    adb = AsyncOnly(db)
    report = asyncio.run(migrate_async(adb, table, before, segments=2, out=io.StringIO()))
    [stats] = report.rewrites.values()
    assert (stats.moved, stats.failed) == (5, 0)
    assert adb.calls > 5  # every request went through the asyncio executor
    assert assert_guards_exact(dynamodb_client, table) == (5, 10)


def test_the_migrate_job_kind_rebuilds_the_work_from_its_spec(
    dynamodb_client: DynamoDBClient, table_name: str, tmp_path: Path
) -> None:
    # What a worker on another machine has: the job's JSON spec and a connection.
    db, before = seeded(dynamodb_client, table_name, pk="C#{cid}")
    source = f"""
        from typing import Annotated
        import singletable as st
        table = st.Table({table_name!r})
        class Customer(
            st.Entity, table=table, pk="CUST#{{cid}}", sk="C", unique=["email", "badge"]
        ):
            cid: str
            email: str
            badge: Annotated[int, st.KeyFormat(width=4)]
            note: str = ""
        def lower(values):
            return {{**values, "email": values["email"].lower()}}
    """
    with model_module(tmp_path, "customers", source) as module:
        spec = {
            "model": f"{module.__name__}:table",
            "snapshot": dumps(before),
            "transform": f"{module.__name__}:lower",
            "segments": 3,
            "page_size": 2,
            "job_id": "job-1",
        }
        spec = json.loads(json.dumps(spec))  # as stored in the job record
        units = MIGRATE_KIND.units(spec)
        assert [(u.kind, u.spec["segment"], u.total) for u in units] == [
            ("migrate", 0, 3),
            ("migrate", 1, 3),
            ("migrate", 2, 3),
        ]
        contexts = run_units(units, MIGRATE_KIND.work(spec, db), workers=2)
        table = module.table
    assert all(ctx.done for ctx in contexts)
    counts: dict[str, int] = {}
    for ctx in contexts:
        for name, n in ctx.counts.items():
            counts[name] = counts.get(name, 0) + n
    task = f"{table_name}/Customer@1->Customer@1"
    assert (counts[f"{task}|rewritten"], counts[f"{task}|moved"]) == (5, 5)
    assert assert_guards_exact(dynamodb_client, table) == (5, 10)
    stored = dynamodb_client.scan(TableName=table_name)["Items"]
    assert sorted(i["email"]["S"] for i in stored if "email" in i) == [
        f"user{i}@example.org" for i in range(5)
    ]


def _rewrite_of(table: st.Table, before: Mapping[str, Any], item: dict[str, Any]) -> Any:
    """The rewrite operation a migration's scan would run for ``item`` (as read then)."""
    plan = st.plan_changes(table, before)
    [route] = build_routes({table.name: table}, before, plan, None)[table.name].values()
    return RewriteItem(route.rewrite, item, dry_run=False, max_attempts=3)


def test_an_item_another_worker_moved_meanwhile_is_gone_not_a_clash(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    # Two holders of one unit (a worker whose lease lapsed and the one that took over)
    # may read the same page: the second to write finds the new key taken by the very
    # item it read, already moved. That is no clash of two old keys (it counted as a
    # failed item, once in a CI run of the kill -9 fault test).
    db, before = seeded(dynamodb_client, table_name)
    stale = next(i for i in raw_items(dynamodb_client, table_name) if i["PK"]["S"] == "C#c0")
    table, _ = customers(table_name, pk="CUST#{cid}")
    report = st.migrate(db, table, before, out=io.StringIO())
    assert not report.failed
    outcome = db.execute(_rewrite_of(table, before, stale))
    assert outcome.status == "gone"
    assert assert_guards_exact(dynamodb_client, table) == (5, 10)


def test_a_new_key_held_by_another_item_is_still_a_clash(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, before = seeded(dynamodb_client, table_name)
    stale = next(i for i in raw_items(dynamodb_client, table_name) if i["PK"]["S"] == "C#c0")
    table, cls = customers(table_name, pk="CUST#{cid}")
    # An item of the new shape already sits at c0's new key; c0 is still stored as it was.
    db.execute(st.Put(cls(cid="c0", email="other@example.org", badge=99)))
    outcome = db.execute(_rewrite_of(table, before, stale))
    assert outcome.status == "failed"
    assert "its new key already holds an item" in (outcome.error or "")


class _Interleaved(Operation[Any]):
    """A rewrite with another holder's move of the same item committing just before its
    call number ``at`` is sent; with ``in_flight``, its first write meets that move in
    flight (refused: TransactionConflict) and the item, read again, is still at its old
    key."""

    action = "transact_write_items"

    def __init__(
        self, inner: Operation[Any], meanwhile: Callable[[], object], at: int, in_flight: bool
    ) -> None:
        self.inner = inner
        self.meanwhile = meanwhile
        self.at = at
        self.in_flight = in_flight
        self.ran = False

    def params(self) -> dict[str, Any]:
        return self.inner.params()

    def steps(self) -> Step[Any]:
        steps = self.inner.steps()
        step = next(steps)
        calls = 0
        try:
            while True:
                if isinstance(step, Call):
                    if calls == self.at:
                        self.meanwhile()
                        self.ran = True
                    calls += 1
                    if self.in_flight and calls == 1:
                        conflict = ServiceError("TransactionConflictException", "in flight")
                        step = steps.throw(conflict)
                        continue
                try:
                    answer = yield step
                except ServiceError as exc:  # the executor's, passed on
                    step = steps.throw(exc)
                else:
                    step = steps.send(answer)
        except StopIteration as done:
            return done.value


@pytest.mark.parametrize("in_flight", [False, True])
@pytest.mark.parametrize("at", range(6))
def test_an_item_another_holder_moves_at_any_step_of_its_rewrite_is_moved_once(
    dynamodb_client: DynamoDBClient, table_name: str, at: int, in_flight: bool
) -> None:
    # The paused-worker fault test in CI: a zombie holder and the one that took its unit
    # over moved one item at once. The zombie read the item again before the other's move
    # committed and its guards after: each guard named the item's own new key, which it
    # reported as a duplicate ("held by [c0125, c0125]") and counted as failed. Here the
    # other move commits before each of the rewrite's calls in turn.
    db, before = seeded(dynamodb_client, table_name)
    stale = next(i for i in raw_items(dynamodb_client, table_name) if i["PK"]["S"] == "C#c0")
    table, _ = customers(table_name, pk="CUST#{cid}")

    # The other holder: another worker, with its own (synchronous) connection. It runs
    # inside a step of the rewrite, so it cannot borrow the executor driving that step.
    other = st.Connection(dynamodb_client)

    def moved() -> st.MigrationReport:
        return st.migrate(other, table, before, out=io.StringIO())

    rewrite = _Interleaved(_rewrite_of(table, before, stale), moved, at, in_flight)
    outcome = db.execute(rewrite)
    assert (outcome.duplicate, outcome.error) == (None, None)
    if rewrite.ran:
        assert outcome.status == "gone"
    else:  # the rewrite was done first: the other holder finds the item moved
        assert outcome.status == "rewritten"
        assert not moved().failed
    assert sorted(
        i["PK"]["S"] for i in raw_items(dynamodb_client, table_name) if i["SK"]["S"] == "C"
    ) == [f"CUST#c{i}" for i in range(5)]
    assert assert_guards_exact(dynamodb_client, table) == (5, 10)
