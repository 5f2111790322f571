"""Uniqueness constraints on a live backend: guards follow every write, also under races."""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.model.guards import read_guard
from singletable.model.unique import is_guard_item
from singletable.operations.common import ItemRequest
from singletable.operations.guarded import item_entry, replacement_entries, transact_request
from singletable.tooling.migrations import check_unique
from tests.integration._executors import connect

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any


@dataclass
class World:
    table: st.Table
    db: st.Connection
    client: DynamoDBClient
    User: Any


@pytest.fixture
def world(dynamodb_client: DynamoDBClient, table_name: str) -> World:
    table = st.Table(table_name)

    class User(
        st.Entity,
        table=table,
        pk="USER#{user_id}",
        sk="PROFILE",
        unique=["email", ("tenant", "handle")],
    ):
        user_id: str
        email: str
        tenant: str = "t1"
        handle: str | None = None
        name: str = ""

    db = connect(dynamodb_client)
    db.create_table(table)
    return World(table, db, dynamodb_client, User)


def raw_items(w: World) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": w.table.name, "ConsistentRead": True}
    while True:
        page = w.client.scan(**kwargs)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def check_invariant(w: World) -> tuple[int, int]:
    """Each unique value is held by at most one item, and guards match items exactly."""
    items = raw_items(w)
    plan = w.User.plan()
    guards = {}
    users: dict[tuple[str, str], Any] = {}
    for item in items:
        if is_guard_item(w.table, item):
            guards[(item["PK"]["S"], item["SK"]["S"])] = item
        else:
            users[(item["PK"]["S"], item["SK"]["S"])] = w.User.from_item(item)
    expected: dict[tuple[str, str], Any] = {}
    for key, user in users.items():
        for constraint in plan.unique:
            values = constraint.values(user.__dict__)
            if values is None:
                continue
            guard_key = constraint.guard_key(values)
            ident = (guard_key["PK"]["S"], guard_key["SK"]["S"])
            assert ident not in expected, (
                f"two items hold {values}: {expected.get(ident)} and {key}"
            )
            expected[ident] = key
    assert set(guards) == set(expected), (
        f"orphan guards {set(guards) - set(expected)}, missing guards {set(expected) - set(guards)}"
    )
    for ident, guard in guards.items():
        info = read_guard(w.table, guard)
        assert info.holder is not None
        assert (info.holder["PK"]["S"], info.holder["SK"]["S"]) == expected[ident]
    return len(users), len(guards)


def test_create_refuses_a_duplicate_and_names_the_holder(world: World) -> None:
    User = world.User
    User.create(User(user_id="u1", email="a@x.org")).run(world.db)
    with pytest.raises(st.UniqueConstraintError) as caught:
        User.create(User(user_id="u2", email="a@x.org")).run(world.db)
    error = caught.value
    assert (error.entity, error.fields, error.value) == ("User", ("email",), {"email": "a@x.org"})
    assert error.holder == {"user_id": "u1"}
    assert User.get(user_id="u2").run(world.db) is None
    with pytest.raises(st.AlreadyExistsError):
        User.create(User(user_id="u1", email="other@x.org")).run(world.db)
    assert check_invariant(world) == (1, 1)


def test_group_constraint_is_scoped_to_its_fields(world: World) -> None:
    User = world.User
    User.create(User(user_id="u1", email="a@x", tenant="t1", handle="ann")).run(world.db)
    User.create(User(user_id="u2", email="b@x", tenant="t2", handle="ann")).run(world.db)
    with pytest.raises(st.UniqueConstraintError, match="tenant"):
        User.create(User(user_id="u3", email="c@x", tenant="t1", handle="ann")).run(world.db)
    # None is not guarded: any number of items may leave handle unset.
    User.create(User(user_id="u4", email="d@x")).run(world.db)
    User.create(User(user_id="u5", email="e@x")).run(world.db)
    assert check_invariant(world) == (4, 6)


def test_update_moves_the_guard_and_refuses_a_taken_value(world: World) -> None:
    User = world.User
    User.create(User(user_id="u1", email="a@x")).run(world.db)
    User.create(User(user_id="u2", email="b@x")).run(world.db)
    moved = User.update(user_id="u1").set(email="c@x", name="Ann").run(world.db)
    assert (moved.email, moved.name) == ("c@x", "Ann")
    User.create(User(user_id="u3", email="a@x")).run(world.db)  # the old value is free
    with pytest.raises(st.UniqueConstraintError) as caught:
        User.update(user_id="u1").set(email="b@x").run(world.db)
    assert caught.value.holder == {"user_id": "u2"}
    assert User.get(user_id="u1").run(world.db).email == "c@x"
    # With the old value known, no read: one transaction. A wrong old value is refused.
    User.update(user_id="u1").set(email="d@x").known(email="c@x").run(world.db)
    with pytest.raises(st.ConditionFailedError, match="known"):
        User.update(user_id="u1").set(email="e@x").known(email="c@x").run(world.db)
    with pytest.raises(st.NotFoundError):
        User.update(user_id="nobody").set(email="f@x").run(world.db)
    assert check_invariant(world) == (3, 3)


def test_put_upsert_and_delete_keep_guards_in_step(world: World) -> None:
    User = world.User
    User.put(User(user_id="u1", email="a@x")).run(world.db)
    User.put(User(user_id="u1", email="b@x", handle="bee")).run(world.db)  # releases a@x
    User.create(User(user_id="u2", email="a@x")).run(world.db)
    with pytest.raises(st.UniqueConstraintError):
        User.put(User(user_id="u3", email="b@x")).run(world.db)
    User.upsert(user_id="u4").set(email="c@x").run(world.db)
    with pytest.raises(st.UniqueConstraintError):
        User.upsert(user_id="u5").set(email="c@x").run(world.db)
    assert check_invariant(world) == (3, 4)
    assert User.delete(user_id="u1", return_old=True).run(world.db).email == "b@x"
    User.delete(User(user_id="u2", email="a@x")).run(world.db)
    assert User.delete(user_id="u2").run(world.db) is None  # already gone
    assert check_invariant(world) == (1, 1)
    User.create(User(user_id="u6", email="a@x", handle="bee")).run(world.db)
    assert check_invariant(world) == (2, 3)


def test_transactions_carry_the_guards(world: World) -> None:
    User = world.User
    User.create(User(user_id="u1", email="a@x")).run(world.db)
    tx = st.TransactWrite()
    tx = tx.put(User.create(User(user_id="u2", email="b@x")))
    tx = tx.update(User.update(user_id="u1").set(email="c@x").known(email="a@x"))
    tx.run(world.db)
    assert check_invariant(world) == (2, 2)
    clash = st.TransactWrite().put(User.create(User(user_id="u3", email="b@x")))
    with pytest.raises(st.UniqueConstraintError):
        clash.run(world.db)
    st.TransactWrite().delete(User.delete(User(user_id="u2", email="b@x"))).run(world.db)
    assert check_invariant(world) == (1, 1)


def test_a_wrong_known_value_is_named_inside_a_transaction_as_outside(world: World) -> None:
    # .known(email=...) names a value another item holds: the release of its guard fails
    # too, but only because the known value is wrong. Inside a transaction the error said
    # "the guards are out of step with the items", blaming correct guards.
    User = world.User
    User.create(User(user_id="u1", email="a@x")).run(world.db)
    User.create(User(user_id="u2", email="b@x")).run(world.db)
    wrong = "the stored values of \\['email'\\] are not the ones given to .known"
    for known in ("b@x", "nobody@x"):  # another item's value, and a value no one holds
        update = User.update(user_id="u1").set(email="c@x").known(email=known)
        with pytest.raises(st.ConditionFailedError, match=wrong) as outside:
            update.run(world.db)
        update = User.update(user_id="u1").set(email="c@x").known(email=known)
        with pytest.raises(st.ConditionFailedError, match=wrong) as inside:
            st.TransactWrite().update(update).run(world.db)
        assert str(inside.value) == str(outside.value)
        assert "out of step" not in str(inside.value)
        assert "stored: {'email': 'a@x'}" in str(inside.value)
    stale = User(user_id="u1", email="b@x")  # an object whose unique value is not stored
    with pytest.raises(st.ConditionFailedError, match="given to the deleted object"):
        st.TransactWrite().delete(User.delete(stale)).run(world.db)
    assert check_invariant(world) == (2, 2)


def test_a_guard_key_of_2048_bytes_is_stored_and_one_more_is_refused(world: World) -> None:
    # The refusal stated "key is 2046 bytes; limit 2038 bytes" (the values' part against
    # a reduced budget): it states the stored guard key against DynamoDB's 2,048 bytes.
    User = world.User
    (constraint,) = [c for c in User.plan().unique if c.name == "email"]
    room = 2048 - len(constraint.guard_key({"email": ""})["PK"]["S"].encode())
    User.create(User(user_id="u1", email="x" * room)).run(world.db)  # the server takes it
    with pytest.raises(st.KeyTooLargeError, match=r"key is 2049 bytes; .* is 2048 bytes") as exc:
        User.create(User(user_id="u2", email="x" * (room + 1))).run(world.db)
    assert (exc.value.size, exc.value.limit) == (2049, 2048)
    assert check_invariant(world) == (1, 1)


def test_unique_check_reports_and_repairs_guards_broken_by_raw_writes(world: World) -> None:
    # Writes that bypass singletable: a raw DeleteItem left its guard, so the value stayed
    # blocked and the error named a deleted item. `unique check` finds each break and
    # --repair fixes what has one right answer.
    User, client, name = world.User, world.client, world.table.name
    for uid, email in (("u1", "a@x"), ("u2", "b@x"), ("u3", "c@x")):
        User.create(User(user_id=uid, email=email)).run(world.db)
    client.delete_item(TableName=name, Key=User.plan().key(User(user_id="u1", email="a@x")))
    with pytest.raises(st.UniqueConstraintError, match="u1"):  # the deleted item
        User.create(User(user_id="u6", email="a@x")).run(world.db)
    client.put_item(TableName=name, Item=User(user_id="u4", email="d@x").to_item())
    client.put_item(TableName=name, Item=User(user_id="u3", email="e@x").to_item())
    client.put_item(TableName=name, Item=User(user_id="u5", email="b@x").to_item())

    report = check_unique(world.db, [world.table], segments=2, progress_out=io.StringIO())
    found = sorted((f.kind, f.values["email"], f.item) for f in report.findings)
    assert found == [
        ("duplicate", "b@x", {"user_id": "u5"}),
        ("missing", "d@x", {"user_id": "u4"}),
        ("missing", "e@x", {"user_id": "u3"}),
        ("orphaned", "a@x", {"user_id": "u1"}),
        ("orphaned", "c@x", {"user_id": "u3"}),
    ]
    assert (report.scanned, report.guards, report.values, report.repaired) == (7, 3, 4, 0)
    assert not report.ok
    assert "orphaned: User unique email {'email': 'a@x'}" in report.to_text()

    repaired = check_unique(world.db, [world.table], repair=True, progress_out=io.StringIO())
    assert (repaired.repaired, repaired.unresolved) == (4, 1)  # the duplicate is left
    assert [f.kind for f in repaired.findings if not f.repaired] == ["duplicate"]
    User.create(User(user_id="u6", email="a@x")).run(world.db)  # free again
    with pytest.raises(st.UniqueConstraintError, match="u4"):  # guarded now
        User.create(User(user_id="u7", email="d@x")).run(world.db)
    client.delete_item(TableName=name, Key=User.plan().key(User(user_id="u5", email="b@x")))
    assert check_unique(world.db, [world.table], progress_out=io.StringIO()).ok
    assert check_invariant(world) == (4, 4)


def test_unique_check_hands_a_stale_guard_to_the_item_holding_its_value(
    world: World,
) -> None:
    # The holder was deleted raw and another item written raw with its value: the guard
    # is orphaned (seen from the guard) and the value unguarded (seen from the item). Both
    # repairs run, in either order; the guard ends up naming the item that holds it.
    User, client, name = world.User, world.client, world.table.name
    User.create(User(user_id="u1", email="a@x", tenant="t", handle="h")).run(world.db)
    client.delete_item(TableName=name, Key=User.plan().key(User(user_id="u1", email="a@x")))
    client.put_item(TableName=name, Item=User(user_id="u8", email="a@x").to_item())
    report = check_unique(world.db, [world.table], repair=True, progress_out=io.StringIO())
    found = sorted((f.kind, tuple(f.values.values()), f.repaired) for f in report.findings)
    assert found == [
        ("missing", ("a@x",), True),
        ("orphaned", ("a@x",), True),
        ("orphaned", ("t", "h"), True),
    ]
    assert report.ok
    assert check_invariant(world) == (1, 1)


def test_scans_do_not_report_guards_as_unknown(world: World) -> None:
    User = world.User
    User.create(User(user_id="u1", email="a@x", handle="ann")).run(world.db)
    pages: list[st.Page[Any]] = list(st.Scan(world.table).pages(world.db))
    assert [u.user_id for p in pages for u in p.items] == ["u1"]
    assert [i for p in pages for i in p.unknown] == []
    assert len(raw_items(world)) == 3  # the item and its two guards were all read
    assert [u.user_id for u in User.scan().all(world.db)] == ["u1"]


# -- concurrency ------------------------------------------------------------------------

EMAILS = ["a@x", "b@x", "c@x"]
IDS = ["u1", "u2", "u3", "u4"]
OPS = hs.one_of(
    hs.tuples(hs.just("create"), hs.sampled_from(IDS), hs.sampled_from(EMAILS)),
    hs.tuples(hs.just("put"), hs.sampled_from(IDS), hs.sampled_from(EMAILS)),
    hs.tuples(hs.just("update"), hs.sampled_from(IDS), hs.sampled_from(EMAILS)),
    hs.tuples(hs.just("delete"), hs.sampled_from(IDS), hs.just("")),
)
#: Rounds of concurrent operations (one list per thread); the invariant is checked after each.
ROUNDS = hs.lists(
    hs.lists(hs.lists(OPS, min_size=1, max_size=3), min_size=3, max_size=3), min_size=1, max_size=3
)

EXPECTED = (
    st.UniqueConstraintError,
    st.AlreadyExistsError,
    st.NotFoundError,
    st.TransactionCanceledError,  # lost every retry against concurrent writers
)


def _run(world: World, op: tuple[str, str, str]) -> None:
    User = world.User
    kind, user_id, email = op
    if kind == "create":
        User.create(User(user_id=user_id, email=email)).run(world.db)
    elif kind == "put":
        User.put(User(user_id=user_id, email=email)).run(world.db)
    elif kind == "update":
        User.update(user_id=user_id).set(email=email).run(world.db)
    else:
        User.delete(user_id=user_id).run(world.db)


# On moto this holds only because the tests make each moto request atomic (a cancelled
# TransactWriteItems there restores a copy of the whole table: see tests/conftest.py).
def test_concurrent_writes_never_share_a_value_nor_orphan_a_guard(
    world: World, backend_name: str
) -> None:
    examples = 40 if backend_name == "dynamodb-local" else 10
    refused: list[BaseException] = []

    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(ROUNDS)
    def scenario(rounds: list[list[list[tuple[str, str, str]]]]) -> None:
        for item in raw_items(world):  # a fresh table per example
            world.client.delete_item(
                TableName=world.table.name, Key={"PK": item["PK"], "SK": item["SK"]}
            )
        for threads_ops in rounds:
            failures: list[BaseException] = []
            barrier = threading.Barrier(len(threads_ops))

            def worker(
                ops: list[tuple[str, str, str]],
                barrier: threading.Barrier = barrier,
                failures: list[BaseException] = failures,
            ) -> None:
                barrier.wait()
                for op in ops:
                    try:
                        _run(world, op)
                    except EXPECTED as exc:
                        refused.append(exc)
                    except BaseException as exc:  # anything else fails the test
                        failures.append(exc)

            threads = [threading.Thread(target=worker, args=(ops,)) for ops in threads_ops]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert not failures, failures
            check_invariant(world)

    scenario()
    # The scenarios did contend: some writes were refused (duplicates, lost races).
    assert any(isinstance(e, st.UniqueConstraintError) for e in refused)


def test_adding_a_constraint_plans_a_backfill_that_reports_duplicates(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    before = st.Table(table_name)

    class Member(st.Entity, table=before, pk="M#{mid}", sk="M"):
        mid: str
        email: str

    db = connect(dynamodb_client)
    db.create_table(before)
    for mid, email in [("1", "a@x"), ("2", "a@x"), ("3", "b@x")]:
        Member.put(Member(mid=mid, email=email)).run(db)
    old_snapshot = st.snapshot(before)

    after = st.Table(table_name)

    class Member2(st.Entity, table=after, pk="M#{mid}", sk="M", name="Member", unique="email"):
        mid: str
        email: str

    plan = st.plan_changes(after, old_snapshot)
    (change,) = plan.changes
    assert change.kind is st.ChangeClass.ITEM_REWRITE
    assert change.action == {"op": "backfill_unique", "entity": "Member@1", "fields": ["email"]}
    report = st.migrate(db, after, old_snapshot, out=io.StringIO())
    (backfill,) = report.backfills.values()
    # Both values are guarded: b@x, and a@x by one of its holders (so no third item takes
    # it); the other holder is listed, the run fails, and a person resolves it.
    assert (backfill.scanned, backfill.claimed) == (3, 2)
    assert backfill.duplicates == [({"email": "a@x"}, [{"mid": "1"}, {"mid": "2"}])]
    assert report.failed == 1
    with pytest.raises(st.UniqueConstraintError):
        Member2.create(Member2(mid="4", email="b@x")).run(db)
    assert "duplicate {'email': 'a@x'}" in report.to_text()


def test_a_rewrite_that_changes_key_and_value_moves_the_guards_in_one_transaction(
    world: World,
) -> None:
    # What a migration does with `replacement_entries`: the old item out, the new one in,
    # and the guards with them, in one transaction.
    User = world.User
    plan = User.plan()
    User.create(User(user_id="u1", email="a@x", handle="ann")).run(world.db)
    User.create(User(user_id="u2", email="taken@x")).run(world.db)
    old = User(user_id="u1", email="a@x", handle="ann").to_item()

    def replace(new: Any) -> dict[str, Any]:
        out = item_entry(plan, ItemRequest("Delete", world.table.name, plan.key_of_item(old)), None)
        put = ItemRequest("Put", world.table.name, plan.key_of_item(new), item=new)
        entries = [out, item_entry(plan, put, None), *replacement_entries(plan, old, new)]
        return transact_request(entries, None)

    taken = User(user_id="u9", email="taken@x", handle="ann").to_item()
    with pytest.raises(ClientError, match="ConditionalCheckFailed"):
        world.client.transact_write_items(**replace(taken))
    assert check_invariant(world) == (2, 3)  # nothing moved
    new = User(user_id="u9", email="b@x", handle="ann").to_item()
    world.client.transact_write_items(**replace(new))
    assert check_invariant(world) == (2, 3)  # u9 holds b@x and (t1, ann); u2 holds taken@x
    assert User.get(user_id="u9").run(world.db).email == "b@x"
    assert User.get(user_id="u1").run(world.db) is None
