"""The runner's guarantees one at a time: conflicts retried, transforms, TTL switches, cost."""

from __future__ import annotations

import io
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import singletable as st
from docs_src.live_migration import add_hits
from singletable.cli import main
from singletable.cli.codes import ExitCode
from singletable.tooling.migrations.planner import plan_changes
from tests.integration._executors import connect

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any


def counter_model(
    name: str, *, gsi_pk: str = "G#{group}", sk: str = "C", versioned: bool = False
) -> tuple[st.Table, Any]:
    table = st.Table(name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
    options: dict[str, Any] = {"version_field": "version"} if versioned else {}

    class Counter(
        st.Entity,
        table=table,
        pk="C#{cid}",
        sk=sk,
        indexes={"GSI1": st.IndexKeys(pk=gsi_pk, sk="{cid}")},
        **options,
    ):
        cid: str
        group: str
        hits: int = 0
        note: str = ""
        version: int = 0

    return table, Counter


class Interfering(st.Connection):
    """Before the runner's write of each item, another writer adds 1 to its counter.

    That write lands between the runner's read (the scan) and its conditional write, every
    time: the case a plain put would overwrite.
    """

    def __init__(self, client: DynamoDBClient, old: Any, new: Any) -> None:
        super().__init__(client)
        self.writer = st.Connection(client)
        self.old, self.new = old, new
        self.interfered: set[str] = set()
        self.conditions: list[str] = []
        self.lock = threading.Lock()

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        if action in ("put_item", "transact_write_items"):
            if action == "put_item":
                item, condition = params["Item"], params["ConditionExpression"]
            else:
                item = params["TransactItems"][0]["Put"]["Item"]
                condition = params["TransactItems"][1]["Delete"]["ConditionExpression"]
            cid = item["cid"]["S"]
            with self.lock:
                first = cid not in self.interfered
                self.interfered.add(cid)
                self.conditions.append(condition)
            if first:
                add_hits(self.writer, self.old, self.new, cid)
        return super().call(action, params)


@pytest.mark.parametrize("versioned", [False, True], ids=["attributes", "version"])
@pytest.mark.parametrize("move", [False, True], ids=["in-place", "key-move"])
def test_a_write_between_read_and_rewrite_is_retried_not_lost(
    dynamodb_client: DynamoDBClient, table_name: str, move: bool, versioned: bool
) -> None:
    db = connect(dynamodb_client)
    table_a, old = counter_model(table_name, versioned=versioned)
    db.create_table(table_a)
    for i in range(6):
        old.put(old(cid=f"c{i}", group="g", hits=10)).run(db)
    snapshot = st.load_snapshot(st.snapshot_json(table_a))
    changes: dict[str, Any] = {"sk": "CNT"} if move else {"gsi_pk": "GRP#{group}"}
    table_b, new = counter_model(table_name, versioned=versioned, **changes)

    runner = Interfering(dynamodb_client, old, new)
    report = st.migrate(runner, table_b, snapshot, segments=1, out=io.StringIO())
    [stats] = report.rewrites.values()
    assert (stats.rewritten, stats.moved, stats.failed) == (6, 6 if move else 0, 0)
    assert stats.conflicts == 6  # each item's first write was refused, then retried
    stored = new.scan().all(db)
    assert sorted(c.cid for c in stored) == [f"c{i}" for i in range(6)]
    assert all(c.hits == 11 for c in stored)  # the interfering increment survived
    if versioned:
        # The version alone is compared, and the rewrite bumps it: 1 (the put) -> 2 (the
        # interfering update) -> 3 (the rewrite).
        assert set(runner.conditions) == {"#n0 = :v0"}  # the version attribute alone
        assert all(c.version == 3 for c in stored)
    else:
        # Every attribute read, by value.
        assert all(c.startswith("#n0 = :v0 AND #n1 = :v1 AND ") for c in runner.conditions)


def test_concurrent_add_to_a_missing_attribute_is_detected(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    # The stored item lacks `hits` (written by code that predates the field); a concurrent
    # ADD creates it. Comparing the attributes read is not enough: the condition also
    # requires every attribute either model writes that the item lacked to be still absent.
    db = connect(dynamodb_client)
    table_a, old = counter_model(table_name)
    db.create_table(table_a)
    old.put(old(cid="c0", group="g")).run(db)
    dynamodb_client.update_item(
        TableName=table_name,
        Key={"PK": {"S": "C#c0"}, "SK": {"S": "C"}},
        UpdateExpression="REMOVE hits",
    )
    snapshot = st.load_snapshot(st.snapshot_json(table_a))
    table_b, new = counter_model(table_name, gsi_pk="GRP#{group}")
    report = st.migrate(Interfering(dynamodb_client, old, new), table_b, snapshot, segments=1)
    [stats] = report.rewrites.values()
    assert (stats.conflicts, stats.rewritten) == (1, 1)
    assert new.get(cid="c0").run(db).hits == 1


# -- transforms ---------------------------------------------------------------------------


def numbered(name: str, kind: type) -> tuple[st.Table, Any]:
    table = st.Table(name)

    class Ticket(st.Entity, table=table, pk="T", sk="N#{n}"):
        n: kind  # type: ignore[valid-type]
        title: str

    return table, Ticket


def pad(values: Any) -> dict[str, Any]:
    """The transform of the tests: int ticket numbers become 5-digit strings."""
    return {"n": f"{int(values['n']):05d}", "title": values["title"]}


def flagged_plan(table_name: str) -> st.MigrationPlan:
    # The rewrite as the planner flags it: decoding an int as a str fails for every item.
    return st.MigrationPlan(
        (
            st.Change(
                st.ChangeClass.ITEM_REWRITE,
                table_name,
                "entity Ticket@1, attribute n",
                "type int -> str",
                {"op": "rewrite", "old": "Ticket@1", "new": "Ticket@1"},
                needs_transform="field n: stored numbers do not decode as str",
            ),
        )
    )


def test_rewrite_that_needs_a_transform_is_counted_refused_then_done_with_one(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db = connect(dynamodb_client)
    table_a, old = numbered(table_name, int)
    db.create_table(table_a)
    for n in range(5):
        old.put(old(n=n, title=f"t{n}")).run(db)
    snapshot = st.load_snapshot(st.snapshot_json(table_a))
    table_b, new = numbered(table_name, str)
    plan = flagged_plan(table_name)

    out = io.StringIO()
    dry = st.migrate(db, table_b, snapshot, plan=plan, dry_run=True, segments=1, out=out)
    [stats] = dry.rewrites.values()
    assert (stats.scanned, stats.failed) == (5, 5)  # counted before any write
    assert "needs a transform: entity Ticket@1, attribute n: field n" in out.getvalue()

    with pytest.raises(st.MigrationError, match="Supply a transform"):
        st.migrate(db, table_b, snapshot, plan=plan, segments=1, out=io.StringIO())
    assert len(old.query().all(db)) == 5  # nothing was written

    dry = st.migrate(
        db, table_b, snapshot, plan=plan, dry_run=True, transform=pad, out=io.StringIO()
    )
    assert next(iter(dry.rewrites.values())).failed == 0
    report = st.migrate(
        db, table_b, snapshot, plan=plan, transform={"Ticket": pad}, segments=1, out=io.StringIO()
    )
    [stats] = report.rewrites.values()
    assert (stats.rewritten, stats.moved, stats.failed) == (5, 5, 0)
    assert [t.n for t in new.query().all(db)] == [f"{n:05d}" for n in range(5)]


def broken(values: Any) -> dict[str, Any]:
    if int(values["n"]) == 3:
        raise KeyError("no mapping for ticket 3")
    return pad(values)


def test_a_transform_that_fails_on_some_items_counts_them(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db = connect(dynamodb_client)
    table_a, old = numbered(table_name, int)
    db.create_table(table_a)
    for n in range(5):
        old.put(old(n=n, title=f"t{n}")).run(db)
    snapshot = st.load_snapshot(st.snapshot_json(table_a))
    table_b, _ = numbered(table_name, str)
    plan = flagged_plan(table_name)
    dry = st.migrate(
        db, table_b, snapshot, plan=plan, dry_run=True, transform=broken, out=io.StringIO()
    )
    [stats] = dry.rewrites.values()
    assert stats.failed == 1
    assert "transform raised KeyError: 'no mapping for ticket 3'" in stats.errors[0]


def test_cli_transform_option(
    dynamodb_client: DynamoDBClient,
    dynamodb_endpoint: str | None,
    table_name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = connect(dynamodb_client)
    table_a, old = numbered(table_name, int)
    db.create_table(table_a)
    for n in range(3):
        old.put(old(n=n, title=f"t{n}")).run(db)
    snap = tmp_path / "snap.json"
    snap.write_text(st.snapshot_json(table_a))
    models = tmp_path / "after_models.py"
    models.write_text(
        "import singletable as st\n"
        f"table = st.Table({table_name!r})\n"
        "class Ticket(st.Entity, table=table, pk='T', sk='N#{n}'):\n"
        "    n: str\n    title: str\n"
        "def pad(values):\n"
        "    return {'n': '%05d' % int(values['n']), 'title': values['title']}\n"
    )
    argv = ["migrate", f"{models}:table", str(snap), "--region", "us-east-1", "--segments", "1"]
    if dynamodb_endpoint is not None:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
        argv += ["--endpoint-url", dynamodb_endpoint]
    import singletable.tooling.migrations.runner as runner

    real = plan_changes
    monkeypatch.setattr(runner, "plan_changes", lambda *a: flagged_plan(table_name))
    assert main(argv, out=io.StringIO()) == ExitCode.MIGRATION_REFUSED
    assert "Supply a transform" in capsys.readouterr().err
    out = io.StringIO()
    assert main([*argv, "--transform", f"Ticket={models}:pad"], out=out) == 0, out.getvalue()
    monkeypatch.setattr(runner, "plan_changes", real)
    keys = sorted(i["SK"]["S"] for i in dynamodb_client.scan(TableName=table_name)["Items"])
    assert keys == ["N#00000", "N#00001", "N#00002"]


# -- TTL switch ---------------------------------------------------------------------------


def ttl_model(name: str, attribute: str) -> tuple[st.Table, Any]:
    table = st.Table(name, ttl_attribute=attribute)

    class Session(st.Entity, table=table, pk="S#{sid}", sk="S", ttl="expires_at"):
        sid: str
        expires_at: datetime

    return table, Session


def ttl_plan(model: st.Table, snapshot: dict[str, Any]) -> st.MigrationPlan:
    plan = st.plan_changes(model, snapshot)
    if any((c.action or {}).get("op") == "switch_ttl" for c in plan.changes):
        return plan
    switch = st.Change(
        st.ChangeClass.ITEM_REWRITE,
        model.name,
        "setting ttl_attribute",
        "expires -> ttl",
        {"op": "switch_ttl", "old": "expires", "new": "ttl"},
    )
    return st.MigrationPlan((*plan.changes, switch))


class RefusingTTL(st.Connection):
    """DynamoDB's answer to a second TTL change within the hour."""

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        if action == "update_time_to_live" and params["TimeToLiveSpecification"]["Enabled"]:
            raise st.ServiceError(
                "ValidationException",
                "Time to live has been modified multiple times within a fixed interval",
            )
        return super().call(action, params)


def test_ttl_switch_keeps_both_attributes_then_moves_the_setting(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db = connect(dynamodb_client)
    table_a, old = ttl_model(table_name, "expires")
    db.create_table(table_a)
    soon = datetime.now(timezone.utc) + timedelta(days=30)  # not expired: DynamoDB Local deletes
    for i in range(3):
        old.put(old(sid=f"s{i}", expires_at=soon + timedelta(days=i))).run(db)
    snapshot = st.load_snapshot(st.snapshot_json(table_a))
    table_b, _ = ttl_model(table_name, "ttl")
    plan = ttl_plan(table_b, snapshot)

    out = io.StringIO()
    st.migrate(db, table_b, snapshot, plan=plan, dry_run=True, segments=1, out=out)
    assert "one TTL change per table per hour" in out.getvalue()

    pending = st.migrate(
        RefusingTTL(dynamodb_client), table_b, snapshot, plan=plan, segments=1, out=io.StringIO()
    )
    [text] = pending.ttl_pending
    assert "one TTL change per table per hour" in text
    assert "run migrate again" in text
    items = dynamodb_client.scan(TableName=table_name)["Items"]
    # Both attributes, same instant: items expire whichever attribute TTL reads.
    assert all(i["expires"] == i["ttl"] for i in items)
    assert len(items) == 3

    done = st.migrate(db, table_b, snapshot, plan=plan, segments=1, out=io.StringIO())
    assert done.ttl_pending == []
    assert any("enabled on 'ttl'" in s for s in done.ttl_steps)
    ttl = dynamodb_client.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
    assert (ttl["TimeToLiveStatus"], ttl.get("AttributeName")) == ("ENABLED", "ttl")


# -- cost ---------------------------------------------------------------------------------


def sized_model(name: str, gsi_pk: str) -> tuple[st.Table, Any, Any]:
    table = st.Table(name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Doc(
        st.Entity,
        table=table,
        pk="D#{did}",
        sk="D",
        indexes={"GSI1": st.IndexKeys(pk=gsi_pk, sk="{did}")},
    ):
        did: str
        group: str
        body: str

    class Other(st.Entity, table=table, pk="O#{oid}", sk="O"):
        oid: str
        body: str = ""

    return table, Doc, Other


@pytest.mark.dynamodb_local_only(
    "moto reports ConsumedCapacity as a flat guess (and none for transactions)"
)
def test_dry_run_estimate_is_within_ten_percent_of_reported_capacity(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db = connect(dynamodb_client)
    table_a, doc, other = sized_model(table_name, "G#{group}")
    db.create_table(table_a)
    for i in range(60):
        doc.put(doc(did=f"d{i:03d}", group=f"g{i % 4}", body="x" * (40 + i * 97 % 3000))).run(db)
    for i in range(40):  # read by the scan, billed, not rewritten
        other.put(other(oid=f"o{i}", body="y" * (i * 151 % 3500))).run(db)
    snapshot = st.load_snapshot(st.snapshot_json(table_a))
    table_b, _, _ = sized_model(table_name, "GRP#{group}")

    dry = st.migrate(db, table_b, snapshot, dry_run=True, segments=2, page_size=15)
    [estimate] = dry.rewrites.values()
    run = st.migrate(db, table_b, snapshot, segments=2, page_size=15, out=io.StringIO())
    [reported] = run.rewrites.values()
    assert (reported.rewritten, reported.skipped, reported.conflicts) == (60, 40, 0)
    assert estimate.read_units == pytest.approx(reported.reported_read_units, rel=0.10)
    assert estimate.write_units == pytest.approx(reported.reported_write_units, rel=0.10)
    assert estimate.write_units > 60 * 2  # item and index entry: both in the estimate
