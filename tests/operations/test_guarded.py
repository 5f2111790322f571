"""The guarded-write mechanism on its own: plain request values in, transactions and retries out.

Nothing here goes through `Put`, `Update` or `Delete`: the writes are `ItemRequest` values,
as a bulk job (a migration) builds them, and the steps are driven by a scripted server.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

import singletable as st
from singletable.model.plan import EntityPlan
from singletable.operations.common import ItemRequest, key_ref
from singletable.operations.guarded import (
    MAX_ATTEMPTS,
    GuardedWrite,
    first_request,
    guard_writes,
    guarded_steps,
    item_entry,
    replacement_entries,
    transact_request,
    write_entries,
)
from singletable.operations.protocol import Call, Sleep
from singletable.types import Item

CANCELLED = "TransactionCanceledException"


def make_models() -> tuple[Any, Any]:
    table = st.Table("g")

    class User(st.Entity, table=table, pk="USER#{user_id}", sk="PROFILE", unique=["email"]):
        user_id: str
        email: str
        name: str = ""

    # The same fields under another stored name: what a rename leaves behind.
    class Member(
        st.Entity, table=table, pk="USER#{user_id}", sk="PROFILE", name="Member", unique=["email"]
    ):
        user_id: str
        email: str
        name: str = ""

    return User, Member


def put_write(plan: EntityPlan, item: Item, *, create: bool = False) -> GuardedWrite:
    """A guarded put made of plain values, as a bulk job would make it."""
    condition = key_ref(plan.table.pk).not_exists() if create else None
    key = plan.key_of_item(item)
    request = ItemRequest("Put", "g", key, item=item, condition=condition, capacity="TOTAL")
    values = plan.from_item(item).__dict__
    return GuardedWrite(plan, request, plan.unique, values, absent=create)


def delete_write(plan: EntityPlan, key: Item, *, condition: bool = False) -> GuardedWrite:
    own = key_ref("name") == {"S": "x"} if condition else None
    request = ItemRequest("Delete", "g", key, condition=own)
    return GuardedWrite(plan, request, plan.unique, None, missing="done")


def cancelled(*codes: str, item: Item | None = None) -> st.ServiceError:
    """A cancelled transaction: one reason per entry, the first one carrying ``item``."""
    reasons: list[dict[str, Any]] = []
    for i, code in enumerate(codes):
        reason: dict[str, Any] = {"Code": code}
        if i == 0 and item is not None:
            reason["Item"] = item
        reasons.append(reason)
    return st.ServiceError(CANCELLED, "cancelled", response={"CancellationReasons": reasons})


def drive(steps: Generator[Any, Any, Any], replies: list[Any]) -> tuple[Any, list[Call]]:
    """Run ``steps`` against scripted replies (a response, or an error to raise)."""
    calls: list[Call] = []
    try:
        step = next(steps)
        while True:
            if isinstance(step, Sleep):
                step = steps.send(None)
                continue
            calls.append(step)
            reply = replies.pop(0)
            step = steps.throw(reply) if isinstance(reply, Exception) else steps.send(reply)
    except StopIteration as stop:
        assert replies == [], "replies left unused"
        return stop.value, calls


# -- what changes ----------------------------------------------------------------------


def test_guard_writes_release_the_old_value_and_claim_the_new_one() -> None:
    User, _ = make_models()
    (email,) = User.plan().unique
    moved = guard_writes([email], {"email": "a@x"}, {"email": "b@x"})
    assert [(w.claim, w.values) for w in moved] == [
        (False, {"email": "a@x"}),
        (True, {"email": "b@x"}),
    ]
    assert guard_writes([email], {"email": "a@x"}, {"email": "a@x"}) == []
    assert [w.claim for w in guard_writes([email], None, {"email": "a@x"})] == [True]
    assert [w.claim for w in guard_writes([email], {"email": "a@x"}, None)] == [False]
    assert guard_writes([email], {"email": None}, {"email": None}) == []


def test_a_plain_put_request_becomes_the_item_and_its_guards() -> None:
    User, _ = make_models()
    plan = User.plan()
    item = User(user_id="u1", email="a@x").to_item()
    entries = write_entries(put_write(plan, item, create=True), None)
    put, claim = (e.request for e in entries)
    # The item keeps its own condition; capacity and return values stay out of the entry.
    assert put == {
        "Put": {
            "TableName": "g",
            "Item": item,
            "ConditionExpression": "attribute_not_exists (#n0)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            "ExpressionAttributeNames": {"#n0": "PK"},
        }
    }
    assert claim["Put"]["Item"]["PK"] == {"S": "%UNIQUE#User#email#a@x"}
    assert claim["Put"]["Item"]["_uq_pk"] == {"S": "USER#u1"}
    assert entries[1].guard is not None
    assert entries[1].guard.claim
    # The same as the entity's own create, request for request.
    assert first_request(put_write(plan, item, create=True)) == transact_request(entries, "TOTAL")
    assert transact_request(entries, None) == User.create(User(user_id="u1", email="a@x")).params()


def test_a_read_first_write_is_conditioned_on_what_it_read() -> None:
    User, _ = make_models()
    plan = User.plan()
    write = put_write(plan, User(user_id="u1", email="b@x").to_item())
    assert first_request(write) == {
        "TableName": "g",
        "Key": {"PK": {"S": "USER#u1"}, "SK": {"S": "PROFILE"}},
        "ConsistentRead": True,
        "ReturnConsumedCapacity": "TOTAL",
    }
    # Over nothing: the item must still be absent. Over a stored value: it must still be it.
    absent = write_entries(write, None)[0].request["Put"]
    assert absent["ConditionExpression"] == "attribute_not_exists (#n0)"
    put, release, claim = write_entries(write, {"user_id": "u1", "email": "a@x"})
    assert put.request["Put"]["ConditionExpression"] == "#n0 = :v0"
    assert put.request["Put"]["ExpressionAttributeValues"] == {":v0": {"S": "a@x"}}
    assert release.request["Delete"]["Key"]["PK"] == {"S": "%UNIQUE#User#email#a@x"}
    assert claim.request["Put"]["Item"]["PK"] == {"S": "%UNIQUE#User#email#b@x"}


# -- running ---------------------------------------------------------------------------


def test_a_read_first_put_reads_transacts_and_returns_what_it_read() -> None:
    User, _ = make_models()
    plan = User.plan()
    stored = User(user_id="u1", email="a@x").to_item()
    write = put_write(plan, User(user_id="u1", email="b@x").to_item())
    result, calls = drive(guarded_steps(write), [{"Item": stored}, {}])
    assert [c.action for c in calls] == ["get_item", "transact_write_items"]
    assert len(calls[1].params["TransactItems"]) == 3  # item, release, claim
    assert result == stored


def test_a_failed_item_condition_is_the_single_requests_error() -> None:
    User, _ = make_models()
    plan = User.plan()
    stored = User(user_id="u1", email="a@x").to_item()
    write = put_write(plan, stored, create=True)
    with pytest.raises(st.ServiceError) as caught:
        drive(guarded_steps(write), [cancelled("ConditionalCheckFailed", "None", item=stored)])
    assert caught.value.code == "ConditionalCheckFailedException"
    assert caught.value.response == {"Item": stored}


def test_a_claimed_value_names_its_holder() -> None:
    User, _ = make_models()
    plan = User.plan()
    write = put_write(plan, User(user_id="u2", email="a@x").to_item(), create=True)
    guard = {"_uq_pk": {"S": "USER#u1"}, "_uq_sk": {"S": "PROFILE"}}
    reasons = {
        "CancellationReasons": [{"Code": "None"}, {"Code": "ConditionalCheckFailed", "Item": guard}]
    }
    error = st.ServiceError(CANCELLED, "cancelled", response=reasons)
    with pytest.raises(st.UniqueConstraintError, match="already held by the item") as caught:
        drive(guarded_steps(write), [error])
    assert caught.value.holder == {"user_id": "u1"}


def test_a_lost_race_reads_again_and_retries_then_gives_up() -> None:
    User, _ = make_models()
    plan = User.plan()
    before = User(user_id="u1", email="a@x").to_item()
    changed = User(user_id="u1", email="c@x").to_item()
    write = put_write(plan, User(user_id="u1", email="b@x").to_item())
    # The item changed after the read: read again (and a conflict is retried too).
    race = cancelled("ConditionalCheckFailed", "None", "None", item=changed)
    conflict = cancelled("None", "TransactionConflict", "None")
    _, calls = drive(
        guarded_steps(write),
        [{"Item": before}, race, {"Item": changed}, conflict, {"Item": changed}, {}],
    )
    assert [c.action for c in calls].count("get_item") == 3
    replies: list[Any] = []
    for _ in range(MAX_ATTEMPTS):
        replies += [{"Item": before}, race]
    with pytest.raises(st.TransactionCanceledError, match=r"lost the race .* 6 times"):
        drive(guarded_steps(write), replies)


def test_a_delete_of_nothing_sends_its_condition_alone() -> None:
    User, _ = make_models()
    plan = User.plan()
    key = {"PK": {"S": "USER#u1"}, "SK": {"S": "PROFILE"}}
    result, calls = drive(guarded_steps(delete_write(plan, key)), [{}])
    assert (result, [c.action for c in calls]) == (None, ["get_item"])
    result, calls = drive(guarded_steps(delete_write(plan, key, condition=True)), [{}, {}])
    assert [c.action for c in calls] == ["get_item", "delete_item"]
    assert calls[1].params["ConditionExpression"] == "#n0 = :v0 AND attribute_not_exists (#n1)"


def test_an_update_of_a_missing_item_fails_its_condition() -> None:
    User, _ = make_models()
    plan = User.plan()
    request = ItemRequest("Update", "g", {"PK": {"S": "USER#u1"}, "SK": {"S": "PROFILE"}})
    write = GuardedWrite(plan, request, plan.unique, {"email": "b@x"}, partial=True, missing="fail")
    with pytest.raises(st.ServiceError) as caught:
        drive(guarded_steps(write), [{}])
    assert (caught.value.code, caught.value.response) == ("ConditionalCheckFailedException", {})


# -- replacing one item by another (bulk rewrites) ------------------------------------------


def _requests(entries: list[Any]) -> list[tuple[str, str]]:
    return [
        (kind, (body.get("Item") or body["Key"])["PK"]["S"])
        for entry in entries
        for kind, body in entry.request.items()
    ]


def test_replacing_a_unique_value_releases_the_old_guard_and_claims_the_new() -> None:
    User, _ = make_models()
    old = User(user_id="u1", email="a@x").to_item()
    new = User(user_id="u1", email="b@x", name="Ann").to_item()
    entries = replacement_entries(User.plan(), old, new)
    assert _requests(entries) == [
        ("Delete", "%UNIQUE#User#email#a@x"),
        ("Put", "%UNIQUE#User#email#b@x"),
    ]
    # Each only if free or held by this item.
    holder = {":v0": {"S": "USER#u1"}, ":v1": {"S": "PROFILE"}}
    for entry in entries:
        (body,) = entry.request.values()
        assert body["ConditionExpression"] == (
            "attribute_not_exists (#n0) OR (#n1 = :v0 AND #n2 = :v1)"
        )
        assert body["ExpressionAttributeValues"] == holder
    # The same values: nothing to do.
    assert replacement_entries(User.plan(), old, old) == []


def test_replacing_the_entity_name_moves_every_guard() -> None:
    User, Member = make_models()
    old = User(user_id="u1", email="a@x").to_item()
    new = Member(user_id="u1", email="a@x").to_item()
    entries = replacement_entries(Member.plan(), old, new, old_plan=User.plan())
    assert _requests(entries) == [
        ("Delete", "%UNIQUE#User#email#a@x"),
        ("Put", "%UNIQUE#Member#email#a@x"),
    ]
    assert [e.label for e in entries] == [
        "entity User unique email (release)",
        "entity Member unique email (claim)",
    ]


def test_replacing_the_key_hands_the_guard_over_in_one_entry() -> None:
    User, _ = make_models()
    old = User(user_id="u1", email="a@x").to_item()
    new = User(user_id="u9", email="a@x").to_item()
    (entry,) = replacement_entries(User.plan(), old, new)
    body = entry.request["Put"]
    assert body["Item"]["_uq_pk"] == {"S": "USER#u9"}
    # Free, held by the new key (a rerun), or still by the old one.
    assert body["ConditionExpression"] == (
        "attribute_not_exists (#n0) OR (#n1 = :v0 AND #n2 = :v1) OR (#n1 = :v2 AND #n2 = :v3)"
    )
    assert body["ExpressionAttributeValues"][":v0"] == {"S": "USER#u9"}
    assert body["ExpressionAttributeValues"][":v2"] == {"S": "USER#u1"}
    # A new key and a new value: release under the old key, claim under the new one.
    moved = User(user_id="u9", email="b@x").to_item()
    release, claim = replacement_entries(User.plan(), old, moved)
    assert release.request["Delete"]["ExpressionAttributeValues"][":v0"] == {"S": "USER#u1"}
    assert claim.request["Put"]["Item"]["_uq_pk"] == {"S": "USER#u9"}


def test_a_replacement_is_one_transaction_with_the_item_writes() -> None:
    User, _ = make_models()
    plan = User.plan()
    old = User(user_id="u1", email="a@x").to_item()
    new = User(user_id="u1", email="b@x").to_item()
    guards = replacement_entries(plan, None, new)
    assert _requests(guards) == [("Put", "%UNIQUE#User#email#b@x")]
    assert _requests(replacement_entries(plan, old, None)) == [("Delete", "%UNIQUE#User#email#a@x")]
    put = item_entry(plan, ItemRequest("Put", "g", plan.key_of_item(new), item=new), None)
    request = transact_request([put, *replacement_entries(plan, old, new)], None)
    assert [next(iter(i)) for i in request["TransactItems"]] == ["Put", "Delete", "Put"]
