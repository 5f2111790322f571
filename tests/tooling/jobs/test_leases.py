"""The lease operations as exact requests: every write of a holder is fenced."""

from __future__ import annotations

from typing import Any

import pytest

from singletable.errors import ModelDefinitionError, ServiceError
from singletable.model.table import Table
from singletable.operations.protocol import Call
from singletable.tooling.jobs.leases import (
    ClaimUnit,
    JobRecord,
    KeepRefused,
    Lease,
    PutJob,
    PutUnit,
    ReadJob,
    ReleaseUnit,
    RenewLease,
    SaveUnit,
    SetJobState,
    UnitState,
)
from singletable.tooling.jobs.units import LeaseLost, WorkUnit

TABLE = Table("app")
KEY = {"PK": {"S": "%JOB#j"}, "SK": {"S": "UNIT#000003"}}
LEASE = Lease("j", 3, "b", counter=3, saves=5, checkpoint=None, expires=230.0)


def drive(op: Any, *responses: Any) -> Any:
    """Run an operation's steps against canned responses (an exception is raised into it)."""
    steps = op.steps()
    step = next(steps)
    try:
        for response in responses:
            assert isinstance(step, Call)
            step = (
                steps.throw(response) if isinstance(response, Exception) else steps.send(response)
            )
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the operation made more calls than answered")


def condition_failed(item: dict[str, Any] | None = None) -> ServiceError:
    return ServiceError(
        "ConditionalCheckFailedException", "failed", response={"Item": item} if item else {}
    )


def test_a_claim_is_conditional_on_the_counter_read_and_on_the_lease_being_free_or_expired() -> (
    None
):
    seen = UnitState(index=3, owner="a", expires=100.0, counter=2, takeovers=1)
    params = ClaimUnit(TABLE, "j", seen, owner="b", now=200.0, lease_seconds=30).params()
    assert params == {
        "TableName": "app",
        "Key": KEY,
        "UpdateExpression": "SET #n0 = :v0, #n1 = :v1, #n2 = :v2, #n3 = :v3",
        "ConditionExpression": (
            "#n2 = :v4 AND #n4 = :v5 AND (attribute_not_exists (#n0) OR #n1 < :v6)"
        ),
        "ExpressionAttributeNames": {
            "#n0": "owner",
            "#n1": "expires",
            "#n2": "counter",
            "#n3": "takeovers",
            "#n4": "done",
        },
        "ExpressionAttributeValues": {
            ":v0": {"S": "b"},
            ":v1": {"N": "230.0"},
            ":v2": {"N": "3"},
            ":v3": {"N": "2"},
            ":v4": {"N": "2"},
            ":v5": {"BOOL": False},
            ":v6": {"N": "200.0"},
        },
        "ReturnValues": "ALL_NEW",
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }


def test_a_claim_of_a_free_unit_is_not_a_takeover() -> None:
    seen = UnitState(index=0)
    values = ClaimUnit(TABLE, "j", seen, owner="b", now=1.0, lease_seconds=1).params()[
        "ExpressionAttributeValues"
    ]
    assert values[":v2"] == {"N": "1"}  # the counter
    assert values[":v3"] == {"N": "0"}  # takeovers


def unit_item(**attributes: Any) -> dict[str, Any]:
    item = {**KEY, "index": {"N": "3"}, "done": {"BOOL": False}, "counts": {"M": {}}}
    item.update(attributes)
    return item


def test_a_lost_claim_race_is_none_and_a_retried_claim_that_landed_is_the_lease() -> None:
    seen = UnitState(index=3, counter=2)
    claim = ClaimUnit(TABLE, "j", seen, owner="b", now=200.0, lease_seconds=30)
    other = unit_item(owner={"S": "c"}, counter={"N": "3"}, expires={"N": "230.0"})
    assert drive(claim, condition_failed(other)) is None
    ours = unit_item(owner={"S": "b"}, counter={"N": "3"}, expires={"N": "230.0"}, saves={"N": "4"})
    lease = drive(claim, condition_failed(ours))
    assert lease == Lease("j", 3, "b", 3, 4, None, 230.0)
    won = drive(claim, {"Attributes": ours})
    assert won == lease


def test_renew_and_release_are_conditional_on_owner_and_counter() -> None:
    renew = RenewLease(TABLE, LEASE, now=220.0, lease_seconds=30).params()
    assert renew["UpdateExpression"] == "SET #n0 = :v0"
    assert renew["ConditionExpression"] == "#n1 = :v1 AND #n2 = :v2 AND #n3 = :v3"
    assert renew["ExpressionAttributeNames"] == {
        "#n0": "expires",
        "#n1": "owner",
        "#n2": "counter",
        "#n3": "done",
    }
    assert renew["ExpressionAttributeValues"] == {
        ":v0": {"N": "250.0"},
        ":v1": {"S": "b"},
        ":v2": {"N": "3"},
        ":v3": {"BOOL": False},
    }
    assert drive(RenewLease(TABLE, LEASE, now=0, lease_seconds=1), condition_failed()) is False
    release = ReleaseUnit(TABLE, LEASE, "boom").params()
    assert release["UpdateExpression"] == "SET #n0 = :v0, #n1 = :v1 REMOVE #n2"
    assert release["ExpressionAttributeNames"]["#n2"] == "owner"


def test_a_save_writes_the_checkpoint_and_the_counts_in_one_fenced_update() -> None:
    save = SaveUnit(
        TABLE, LEASE, {"cursor": "c"}, {"scanned": 10, "written": 0}, now=210.0, lease_seconds=30
    )
    params = save.params()
    assert params["UpdateExpression"] == (
        "SET #n0 = :v0, #n1 = :v1, #n2 = :v2, #n3.#n4 = if_not_exists(#n3.#n4, :v3) + :v4"
    )
    assert params["ConditionExpression"] == "#n5 = :v5 AND #n6 = :v6 AND #n7 = :v7 AND #n0 = :v8"
    assert params["ExpressionAttributeNames"] == {
        "#n0": "saves",
        "#n1": "expires",
        "#n2": "checkpoint",
        "#n3": "counts",
        "#n4": "scanned",
        "#n5": "owner",
        "#n6": "counter",
        "#n7": "done",
    }
    assert params["ExpressionAttributeValues"][":v0"] == {"N": "6"}
    assert params["ExpressionAttributeValues"][":v2"] == {"S": '{"cursor": "c"}'}
    assert params["ExpressionAttributeValues"][":v8"] == {"N": "5"}
    assert params["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"
    assert drive(save, {}) == Lease("j", 3, "b", 3, 6, {"cursor": "c"}, 240.0)


def test_a_finish_marks_the_unit_done_and_drops_its_checkpoint() -> None:
    params = SaveUnit(
        TABLE, LEASE, {"cursor": "c"}, {}, now=0.0, lease_seconds=1, done=True
    ).params()
    assert params["UpdateExpression"] == "SET #n0 = :v0, #n1 = :v1, #n2 = :v2 REMOVE #n3"
    assert params["ExpressionAttributeNames"]["#n2"] == "done"
    assert params["ExpressionAttributeNames"]["#n3"] == "checkpoint"
    assert params["ExpressionAttributeValues"][":v2"] == {"BOOL": True}


def test_a_refused_save_is_lease_lost_unless_the_unit_shows_this_very_save() -> None:
    save = SaveUnit(TABLE, LEASE, {"cursor": "c"}, {"scanned": 1}, now=0.0, lease_seconds=1)
    taken = unit_item(owner={"S": "c"}, counter={"N": "4"}, saves={"N": "5"})
    with pytest.raises(LeaseLost, match="no longer held by 'b'"):
        drive(save, condition_failed(taken))
    with pytest.raises(LeaseLost):
        drive(save, condition_failed())
    # A retry of a save that landed: same holder, one save more, the same checkpoint.
    landed = unit_item(
        owner={"S": "b"}, counter={"N": "3"}, saves={"N": "6"}, checkpoint={"S": '{"cursor": "c"}'}
    )
    assert drive(save, condition_failed(landed)).saves == 6
    # Another save of the same holder in between (not this one) is not taken for it.
    moved = unit_item(
        owner={"S": "b"}, counter={"N": "3"}, saves={"N": "6"}, checkpoint={"S": '{"cursor": "d"}'}
    )
    with pytest.raises(LeaseLost):
        drive(save, condition_failed(moved))


def test_a_refused_page_is_kept_per_lost_lease_beside_the_one_pass_counts() -> None:
    keep = KeepRefused(TABLE, LEASE, {"scanned": 10, "written": 4, "skipped": 0})
    assert keep.params() == {
        "TableName": "app",
        "Key": KEY,
        # The lease's whole refused sum: a retried request writes the same value.
        "UpdateExpression": "SET #n0 = :v0",
        "ConditionExpression": "attribute_exists (#n1)",
        "ExpressionAttributeNames": {"#n0": "refused#3", "#n1": "counter"},
        "ExpressionAttributeValues": {
            ":v0": {"M": {"scanned": {"N": "10"}, "written": {"N": "4"}}}
        },
    }
    assert drive(keep, {}) is True
    assert drive(keep, condition_failed()) is False  # no such unit (any more)
    # Two lost leases, each with its refused pages: summed apart from the one pass.
    stored = UnitState.from_item(
        unit_item(
            counts={"M": {"scanned": {"N": "30"}, "written": {"N": "20"}}},
            **{
                "refused#3": {"M": {"scanned": {"N": "10"}, "written": {"N": "4"}}},
                "refused#5": {"M": {"scanned": {"N": "2"}}},
            },
        )
    )
    assert stored.counts == {"scanned": 30, "written": 20}
    assert stored.refused == {"scanned": 12, "written": 4}
    assert stored.totals == {"scanned": 42, "written": 24}


def test_other_errors_pass_through() -> None:
    throttled = ServiceError("ProvisionedThroughputExceededException", "slow down")
    with pytest.raises(ServiceError, match="slow down"):
        drive(RenewLease(TABLE, LEASE, now=0, lease_seconds=1), throttled)


def test_creating_a_job_puts_its_items_only_where_none_is() -> None:
    record = JobRecord("j", "touch", {"b": [1], "a": "x"}, total=2, created=5.0, max_wcu=10)
    params = PutJob(TABLE, record).params()
    assert params["ConditionExpression"] == "attribute_not_exists (#n0)"
    assert params["Item"]["SK"] == {"S": "JOB"}
    assert params["Item"]["spec"] == {"S": '{"a":"x","b":[1]}'}
    assert params["Item"]["max_wcu"] == {"N": "10.0"}
    assert "max_rcu" not in params["Item"]
    assert JobRecord.from_item("j", params["Item"]) == record
    unit = PutUnit(TABLE, WorkUnit("j", "touch", 1, 2, {"segment": 1})).params()
    assert unit["Item"]["SK"] == {"S": "UNIT#000001"}
    assert UnitState.from_item(unit["Item"]) == UnitState(index=1, spec={"segment": 1})
    assert drive(PutJob(TABLE, record), condition_failed()) is False


def test_a_job_is_read_with_one_consistent_query_of_its_partition() -> None:
    read = ReadJob(TABLE, "a#b")
    assert read.params() == {
        "TableName": "app",
        "KeyConditionExpression": "#n0 = :v0",
        "ConsistentRead": True,
        "ExpressionAttributeNames": {"#n0": "PK"},
        "ExpressionAttributeValues": {":v0": {"S": "%JOB#a%23b"}},
    }
    record = PutJob(TABLE, JobRecord("a#b", "touch", {}, total=2)).params()["Item"]
    units = [PutUnit(TABLE, WorkUnit("a#b", "touch", i, 2)).params()["Item"] for i in (1, 0)]
    items = drive(
        read, {"Items": [record, units[0]], "LastEvaluatedKey": {"x": 1}}, {"Items": [units[1]]}
    )
    assert items.record is not None
    assert items.record.total == 2
    assert [u.index for u in items.units] == [0, 1]


def test_a_table_without_a_sort_key_reads_the_record_and_each_unit() -> None:
    table = Table("flat", sk=None)
    record = PutJob(table, JobRecord("j", "touch", {}, total=1)).params()["Item"]
    unit = PutUnit(table, WorkUnit("j", "touch", 0, 1)).params()["Item"]
    assert unit["PK"] == {"S": "%JOB#j#UNIT#000000"}
    items = drive(ReadJob(table, "j"), {"Item": record}, {"Item": unit})
    assert [u.index for u in items.units] == [0]


def test_the_state_moves_only_from_the_expected_one() -> None:
    params = SetJobState(TABLE, "j", "cancelled", expect="running").params()
    assert params["Key"] == {"PK": {"S": "%JOB#j"}, "SK": {"S": "JOB"}}
    assert params["UpdateExpression"] == "SET #n0 = :v0"
    assert params["ConditionExpression"] == "#n0 = :v1"
    assert params["ExpressionAttributeValues"] == {
        ":v0": {"S": "cancelled"},
        ":v1": {"S": "running"},
    }


def test_a_table_with_number_keys_cannot_hold_jobs() -> None:
    with pytest.raises(ModelDefinitionError, match="strings"):
        ReadJob(Table("nums", pk_type="N"), "j")


def test_claimable_and_live() -> None:
    assert UnitState(index=0).claimable(10.0)
    assert not UnitState(index=0).live(10.0)
    held = UnitState(index=0, owner="a", expires=20.0)
    assert held.live(10.0)
    assert not held.claimable(10.0)
    assert held.claimable(21.0)
    assert not held.live(21.0)
    assert not UnitState(index=0, done=True).claimable(10.0)
