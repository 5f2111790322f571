"""A job's record and its units' leases, as pure operations on the job's own table.

The design follows the lease table of Amazon's Kinesis Client Library (KCL): one item per
unit holds its owner, the lease expiry, a fencing counter, the checkpoint and the counts.

* **Claim** (`ClaimUnit`): a conditional update that succeeds only if the unit is not
  done, is free or its lease has expired (by the claimant's clock), *and* its counter is
  still the one the claimant read. It bumps the counter, so of two workers that read the
  same expired lease one wins, and the loser's write fails.
* **Renew** (`RenewLease`), **save** and **finish** (`SaveUnit`) are conditional on the
  owner *and* the counter the holder claimed with. After a takeover the counter has moved:
  the old holder's next write fails (`LeaseLost`), so it cannot move the checkpoint back
  or add its page's counts a second time. The checkpoint and the counts of a page are
  written by the same UpdateItem, so they move together or not at all.
* What a holder did in a page it could not save is not dropped (`KeepRefused`): its
  writes landed, and the new holder's redo of the page finds them done (the kinds' data
  writes are conditional), so the job would undercount them. They go to an attribute of
  their own, ``refused#<counter>``, beside the unit's one-pass ``counts``; a job's totals
  add both.
* Every save also bumps a per-unit ``saves`` number and is conditional on it. A save whose
  first attempt landed but whose answer was lost (a retried request) then fails its
  condition; the item returned with the failure shows the write already in place, and the
  save counts as done instead of adding the counts twice.

Unlike KCL, which decides expiry from how long it has watched a counter stand still, a
lease here stores its expiry as a time of the holder's clock, so that any process (a
status command, a worker that just started) can tell a live lease from a dead one with one
read. Clocks may disagree by less than the lease time minus the renew interval (two thirds
of a lease) without any lease being taken early; beyond that a fast clock only takes
leases early, which the fencing makes safe (the work is repeated, never double-counted).

Each operation is a value with ``params()`` (the exact request) like every operation of
`singletable.operations`, and runs with ``.run(db)``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from singletable.errors import ServiceError
from singletable.expressions.conditions import Condition, and_, or_, render_condition
from singletable.expressions.fields import FieldRef
from singletable.expressions.paths import Placeholders
from singletable.expressions.updates import UpdateAction, render_update
from singletable.model.jobs import (
    INDEX_DIGITS,
    check_job_table,
    record_key,
    unit_key,
    unit_sort_prefix,
)
from singletable.model.table import Table
from singletable.operations.common import key_ref
from singletable.operations.protocol import Call, Operation, Step
from singletable.tooling.jobs.units import JsonValue, LeaseLost, WorkUnit
from singletable.types import AttributeValue, Item

__all__ = [
    "ClaimUnit",
    "JobItems",
    "JobRecord",
    "JobState",
    "KeepRefused",
    "Lease",
    "PutJob",
    "PutUnit",
    "ReadJob",
    "ReleaseUnit",
    "RenewLease",
    "SaveUnit",
    "SetJobState",
    "UnitState",
    "add_counts",
]

JobState = Literal["running", "cancelled", "done"]

# The attributes of a job record.
KIND = "kind"
SPEC = "spec"
STATE = "state"
TOTAL = "units"
CREATED = "created"
MAX_RCU = "max_rcu"
MAX_WCU = "max_wcu"
EXPECTED = "expected"
MEASURE = "measure"
# The attributes of a unit.
INDEX = "index"
OWNER = "owner"
EXPIRES = "expires"
COUNTER = "counter"
CHECKPOINT = "checkpoint"
COUNTS = "counts"
DONE = "done"
SAVES = "saves"
TAKEOVERS = "takeovers"
ERROR = "error"
#: The prefix of the attributes holding the counts of the pages a lost lease could not save.
REFUSED = "refused#"

_CONDITION_FAILED = "ConditionalCheckFailedException"


def _ref(attribute: str) -> FieldRef[Any]:
    return key_ref(attribute)


def _number(av: AttributeValue | None, default: float = 0) -> float:
    return float(av["N"]) if av is not None and "N" in av else default


def _json(value: JsonValue) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _text(av: AttributeValue | None) -> str | None:
    return av["S"] if av is not None and "S" in av else None


@dataclass(frozen=True)
class JobRecord:
    """A job as its record stores it.

    Attributes:
        job_id: The job's id.
        kind: The name of its `JobKind`.
        spec: The job's own JSON, from which any worker rebuilds the work.
        state: ``running``, ``cancelled`` or ``done``.
        total: How many units it has.
        created: When it was started (seconds since the epoch, the starter's clock).
        max_rcu: Read capacity per second for the whole job (None: unlimited).
        max_wcu: Write capacity per second for the whole job (None: unlimited).
        expected: How many of the main count the job expects (an estimate; None: unknown).
        measure: The count progress is measured in (``"scanned"``, ``"written"``...).
    """

    job_id: str
    kind: str
    spec: Mapping[str, JsonValue]
    state: JobState = "running"
    total: int = 0
    created: float = 0.0
    max_rcu: float | None = None
    max_wcu: float | None = None
    expected: int | None = None
    measure: str = "scanned"

    def item(self, table: Table) -> Item:
        """The record as a stored item."""
        item = record_key(table, self.job_id)
        item[KIND] = {"S": self.kind}
        item[SPEC] = {"S": _json(self.spec)}
        item[STATE] = {"S": self.state}
        item[TOTAL] = {"N": str(self.total)}
        item[CREATED] = {"N": repr(self.created)}
        item[MEASURE] = {"S": self.measure}
        for name, value in ((MAX_RCU, self.max_rcu), (MAX_WCU, self.max_wcu)):
            if value is not None:
                item[name] = {"N": repr(float(value))}
        if self.expected is not None:
            item[EXPECTED] = {"N": str(self.expected)}
        return item

    @classmethod
    def from_item(cls, job_id: str, item: Mapping[str, AttributeValue]) -> JobRecord:
        """Read a stored record."""
        state = _text(item.get(STATE)) or "running"
        assert state in ("running", "cancelled", "done"), state
        rcu, wcu, expected = item.get(MAX_RCU), item.get(MAX_WCU), item.get(EXPECTED)
        return cls(
            job_id=job_id,
            kind=_text(item.get(KIND)) or "",
            spec=json.loads(_text(item.get(SPEC)) or "{}"),
            state=state,  # type: ignore[arg-type]
            total=int(_number(item.get(TOTAL))),
            created=_number(item.get(CREATED)),
            max_rcu=None if rcu is None else _number(rcu),
            max_wcu=None if wcu is None else _number(wcu),
            expected=None if expected is None else int(_number(expected)),
            measure=_text(item.get(MEASURE)) or "scanned",
        )


@dataclass(frozen=True)
class UnitState:
    """A unit's lease item as read.

    Attributes:
        index: The unit's index.
        spec: What the unit covers (`WorkUnit.spec`).
        owner: The worker holding (or last holding) it; None when it was never claimed or
            was released.
        expires: When the lease ends (seconds since the epoch, the holder's clock).
        counter: The fencing counter: bumped by every claim.
        checkpoint: Where the work stands (None: at the start, or done).
        counts: What the unit has done so far, summed over its saved pages: one pass over
            the unit (each page once, whoever did it).
        refused: What holders that lost their lease did in the pages they could not save,
            summed (a later holder redid those pages; `KeepRefused`).
        done: Whether it is finished.
        saves: How many saves it has taken (each save is conditional on it).
        takeovers: How many claims found another worker's lease not done (it expired).
        error: The last error a holder released it with.
    """

    index: int
    spec: Mapping[str, JsonValue] = field(default_factory=dict)
    owner: str | None = None
    expires: float = 0.0
    counter: int = 0
    checkpoint: Mapping[str, JsonValue] | None = None
    counts: Mapping[str, int] = field(default_factory=dict)
    done: bool = False
    saves: int = 0
    takeovers: int = 0
    error: str | None = None
    refused: Mapping[str, int] = field(default_factory=dict)

    @property
    def totals(self) -> dict[str, int]:
        """Everything the unit's holders did: its saved pages' counts plus the refused ones.

        A write counts once wherever it landed (a redone page finds the writes of the lost
        holder done, as the kinds' writes are conditional); an item read counts each time
        it was read (a redone page was read twice).
        """
        return _sum(self.counts, self.refused)

    def claimable(self, now: float) -> bool:
        """Whether a worker may claim it at ``now`` (not done; free or expired)."""
        return not self.done and (self.owner is None or self.expires < now)

    def live(self, now: float) -> bool:
        """Whether a worker holds an unexpired lease on it."""
        return not self.done and self.owner is not None and self.expires >= now

    @classmethod
    def from_item(cls, item: Mapping[str, AttributeValue]) -> UnitState:
        """Read a stored unit."""
        checkpoint = _text(item.get(CHECKPOINT))
        refused = [_counts(av) for name, av in item.items() if name.startswith(REFUSED)]
        return cls(
            index=int(_number(item.get(INDEX))),
            spec=json.loads(_text(item.get(SPEC)) or "{}"),
            owner=_text(item.get(OWNER)),
            expires=_number(item.get(EXPIRES)),
            counter=int(_number(item.get(COUNTER))),
            checkpoint=None if checkpoint is None else json.loads(checkpoint),
            counts=_counts(item.get(COUNTS)),
            done=bool(item.get(DONE, {}).get("BOOL", False)),
            saves=int(_number(item.get(SAVES))),
            takeovers=int(_number(item.get(TAKEOVERS))),
            error=_text(item.get(ERROR)),
            refused=_sum(*refused),
        )


def _counts(av: AttributeValue | None) -> dict[str, int]:
    """A stored map of counts."""
    return {name: int(_number(n)) for name, n in (av or {}).get("M", {}).items()}


def add_counts(total: dict[str, int], counts: Mapping[str, int]) -> None:
    """Add ``counts`` into ``total`` (a count of 0 is not kept, as none is stored)."""
    for name, n in counts.items():
        if n:
            total[name] = total.get(name, 0) + n


def _sum(*counts: Mapping[str, int]) -> dict[str, int]:
    total: dict[str, int] = {}
    for each in counts:
        add_counts(total, each)
    return total


@dataclass(frozen=True)
class Lease:
    """A unit held by a worker: what every write of the holder is conditional on.

    Attributes:
        job_id: The job.
        index: The unit.
        owner: The holder's worker id.
        counter: The fencing counter the holder claimed with.
        saves: The unit's ``saves`` the holder's next save expects.
        checkpoint: Where the holder starts (the unit's checkpoint at the claim).
        expires: When the lease ends, unless renewed (the holder's clock).
    """

    job_id: str
    index: int
    owner: str
    counter: int
    saves: int
    checkpoint: Mapping[str, JsonValue] | None
    expires: float

    def held(self) -> Condition:
        """The condition of every write of the holder: it still holds the lease."""
        return and_(
            _ref(OWNER) == self.owner, _ref(COUNTER) == self.counter, _ref(DONE) == {"BOOL": False}
        )


def _update_request(
    table: Table, key: Item, actions: list[UpdateAction], condition: Condition
) -> dict[str, Any]:
    ph = Placeholders()
    request: dict[str, Any] = {
        "TableName": table.name,
        "Key": key,
        "UpdateExpression": render_update(actions, ph),
        "ConditionExpression": render_condition(condition, ph),
    }
    ph.apply(request)
    return request


def _put_new_request(table: Table, item: Item) -> dict[str, Any]:
    ph = Placeholders()
    request: dict[str, Any] = {
        "TableName": table.name,
        "Item": item,
        "ConditionExpression": render_condition(_ref(table.pk).not_exists(), ph),
    }
    ph.apply(request)
    return request


def _applied(action: str, request: dict[str, Any]) -> Step[bool]:
    """Send a conditional write: whether it was applied (False: its condition failed)."""
    try:
        yield Call(action, request)
    except ServiceError as exc:
        if not _condition_failed(exc):
            raise
        return False
    return True


def _condition_failed(exc: ServiceError) -> bool:
    return exc.code == _CONDITION_FAILED


# -- creating a job ----------------------------------------------------------------------


class PutJob(Operation[bool]):
    """Write a job's record unless it exists; the result says whether it was written."""

    action = "put_item"

    def __init__(self, table: Table, record: JobRecord) -> None:
        check_job_table(table)
        self.table = table
        self.record = record

    def params(self) -> dict[str, Any]:
        """The exact ``PutItem`` request (conditional on no record at the key)."""
        return _put_new_request(self.table, self.record.item(self.table))

    def steps(self) -> Step[bool]:
        """Put; a record already there is not an error (starting a job is idempotent)."""
        return (yield from _applied(self.action, self.params()))


class PutUnit(Operation[bool]):
    """Write a fresh unit (free, counter 0, no checkpoint) unless it exists.

    The unit's own spec is stored with it, so a worker runs exactly the units the job was
    started with, whatever its own copy of the kind would plan now.
    """

    action = "put_item"

    def __init__(self, table: Table, unit: WorkUnit) -> None:
        check_job_table(table)
        self.table = table
        self.unit = unit

    def params(self) -> dict[str, Any]:
        """The exact ``PutItem`` request (conditional on no unit at the key)."""
        unit = self.unit
        item = unit_key(self.table, unit.job_id, unit.index)
        item[INDEX] = {"N": str(unit.index)}
        item[SPEC] = {"S": _json(unit.spec)}
        item[COUNTER] = {"N": "0"}
        item[EXPIRES] = {"N": "0"}
        item[SAVES] = {"N": "0"}
        item[TAKEOVERS] = {"N": "0"}
        item[DONE] = {"BOOL": False}
        item[COUNTS] = {"M": {}}
        return _put_new_request(self.table, item)

    def steps(self) -> Step[bool]:
        """Put; a unit already there is kept as it is (a job started twice)."""
        return (yield from _applied(self.action, self.params()))


# -- reading a job -----------------------------------------------------------------------


@dataclass(frozen=True)
class JobItems:
    """A job's record (None: no such job) and its units, in index order."""

    record: JobRecord | None
    units: list[UnitState]


class ReadJob(Operation[JobItems]):
    """Read a job's record and every unit with strongly consistent reads.

    On a table with a sort key, one query of the job's partition (paged); without one, a
    GetItem of the record and one per unit.
    """

    # On a table without a sort key the calls are GetItems instead.
    action = "query"

    def __init__(self, table: Table, job_id: str) -> None:
        check_job_table(table)
        self.table = table
        self.job_id = job_id

    def params(self) -> dict[str, Any]:
        """The exact first request: the query of the job's partition (or the record's get)."""
        key = record_key(self.table, self.job_id)
        if self.table.sk is None:
            return {"TableName": self.table.name, "Key": key, "ConsistentRead": True}
        ph = Placeholders()
        request: dict[str, Any] = {
            "TableName": self.table.name,
            "KeyConditionExpression": render_condition(
                _ref(self.table.pk) == key[self.table.pk], ph
            ),
            "ConsistentRead": True,
        }
        ph.apply(request)
        return request

    def steps(self) -> Step[JobItems]:
        """Read the record and the units."""
        if self.table.sk is None:
            return (yield from self._get_each())
        record: JobRecord | None = None
        units: list[UnitState] = []
        request = self.params()
        prefix = unit_sort_prefix(self.table)
        while True:
            response = yield Call(self.action, request)
            for item in response.get("Items", []):
                sort = item[self.table.sk]["S"]
                if sort.startswith(prefix):
                    units.append(UnitState.from_item(item))
                else:
                    record = JobRecord.from_item(self.job_id, item)
            last = response.get("LastEvaluatedKey")
            if not last:
                break
            request = {**request, "ExclusiveStartKey": last}
        units.sort(key=lambda unit: unit.index)
        return JobItems(record, units)

    def _get_each(self) -> Step[JobItems]:
        response = yield Call("get_item", self.params())
        if "Item" not in response:
            return JobItems(None, [])
        record = JobRecord.from_item(self.job_id, response["Item"])
        units = []
        for index in range(record.total):
            key = unit_key(self.table, self.job_id, index)
            got = yield Call(
                "get_item", {"TableName": self.table.name, "Key": key, "ConsistentRead": True}
            )
            if "Item" in got:
                units.append(UnitState.from_item(got["Item"]))
        return JobItems(record, units)


# -- leases ------------------------------------------------------------------------------


class ClaimUnit(Operation["Lease | None"]):
    """Take a unit that is free or whose lease has expired; None when another worker won.

    Conditional on the unit being as the claimant read it (its counter), not done, and free
    or expired at ``now``; bumps the counter, so the previous holder is fenced off.
    """

    action = "update_item"

    def __init__(
        self,
        table: Table,
        job_id: str,
        seen: UnitState,
        *,
        owner: str,
        now: float,
        lease_seconds: float,
    ) -> None:
        check_job_table(table)
        self.table = table
        self.job_id = job_id
        self.seen = seen
        self.owner = owner
        self.now = now
        self.expires = now + lease_seconds

    def params(self) -> dict[str, Any]:
        """The exact ``UpdateItem`` request."""
        seen = self.seen
        condition = and_(
            _ref(COUNTER) == seen.counter,
            _ref(DONE) == {"BOOL": False},
            or_(_ref(OWNER).not_exists(), _ref(EXPIRES) < self.now),
        )
        actions = [
            _ref(OWNER).set(self.owner),
            _ref(EXPIRES).set(self.expires),
            _ref(COUNTER).set(seen.counter + 1),
            _ref(TAKEOVERS).set(seen.takeovers + (seen.owner is not None)),
        ]
        request = _update_request(
            self.table, unit_key(self.table, self.job_id, seen.index), actions, condition
        )
        request["ReturnValues"] = "ALL_NEW"
        request["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        return request

    def steps(self) -> Step[Lease | None]:
        """Claim; a lost race is None, unless the unit shows this very claim in place."""
        try:
            response = yield Call(self.action, self.params())
            item = response["Attributes"]
        except ServiceError as exc:
            if not _condition_failed(exc):
                raise
            item = exc.response.get("Item") or {}
            stored = UnitState.from_item(item) if item else None
            # A retried request whose first attempt landed: the claim is ours.
            if (
                stored is None
                or stored.owner != self.owner
                or stored.counter != self.seen.counter + 1
                or stored.expires != self.expires
            ):
                return None
        unit = UnitState.from_item(item)
        return Lease(
            self.job_id,
            unit.index,
            self.owner,
            unit.counter,
            unit.saves,
            unit.checkpoint,
            unit.expires,
        )


class RenewLease(Operation[bool]):
    """Extend a held lease to ``now + lease_seconds``; False when it was lost."""

    action = "update_item"

    def __init__(self, table: Table, lease: Lease, *, now: float, lease_seconds: float) -> None:
        check_job_table(table)
        self.table = table
        self.lease = lease
        self.expires = now + lease_seconds

    def params(self) -> dict[str, Any]:
        """The exact ``UpdateItem`` request (conditional on the owner and the counter)."""
        key = unit_key(self.table, self.lease.job_id, self.lease.index)
        return _update_request(
            self.table, key, [_ref(EXPIRES).set(self.expires)], self.lease.held()
        )

    def steps(self) -> Step[bool]:
        """Renew; a failed condition means another worker took the unit (or it is done)."""
        return (yield from _applied(self.action, self.params()))


class SaveUnit(Operation[Lease]):
    """Record a page (its checkpoint and counts together), or the end of the unit.

    Conditional on the lease (owner and counter) and on the unit's ``saves``, which it
    bumps. Returns the lease to use for the next save. Raises `LeaseLost` when the lease was
    taken over.
    """

    action = "update_item"

    def __init__(
        self,
        table: Table,
        lease: Lease,
        checkpoint: Mapping[str, JsonValue] | None,
        counts: Mapping[str, int],
        *,
        now: float,
        lease_seconds: float,
        done: bool = False,
    ) -> None:
        check_job_table(table)
        self.table = table
        self.lease = lease
        self.checkpoint = None if done else checkpoint
        self.text = None if self.checkpoint is None else json.dumps(self.checkpoint)
        self.counts = {name: n for name, n in counts.items() if n}
        self.expires = now + lease_seconds
        self.done = done

    def params(self) -> dict[str, Any]:
        """The exact ``UpdateItem`` request."""
        lease = self.lease
        actions: list[UpdateAction] = [
            _ref(SAVES).set(lease.saves + 1),
            _ref(EXPIRES).set(self.expires),
            _ref(CHECKPOINT).remove() if self.text is None else _ref(CHECKPOINT).set(self.text),
        ]
        if self.done:
            actions.append(_ref(DONE).set({"BOOL": True}))
        for name, n in sorted(self.counts.items()):
            count = _ref(COUNTS)[name]
            actions.append(count.set(count.if_not_exists(0) + n))
        condition = and_(lease.held(), _ref(SAVES) == lease.saves)
        key = unit_key(self.table, lease.job_id, lease.index)
        request = _update_request(self.table, key, actions, condition)
        request["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        return request

    def steps(self) -> Step[Lease]:
        """Save; `LeaseLost` unless the unit still (or already, after a retry) shows it."""
        lease = self.lease
        try:
            yield Call(self.action, self.params())
        except ServiceError as exc:
            if not _condition_failed(exc):
                raise
            item = exc.response.get("Item")
            if not item or not self._landed(UnitState.from_item(item)):
                raise LeaseLost(
                    f"job {lease.job_id!r}: unit {lease.index:0{INDEX_DIGITS}d} is no longer "
                    f"held by {lease.owner!r} (another worker took it over): this worker's "
                    "save was refused, and its page will be redone by the new holder"
                ) from None
        return Lease(
            lease.job_id,
            lease.index,
            lease.owner,
            lease.counter,
            lease.saves + 1,
            self.checkpoint,
            self.expires,
        )

    def _landed(self, stored: UnitState) -> bool:
        """Whether the stored unit is exactly this save, in place (an earlier try landed)."""
        lease = self.lease
        return (
            stored.owner == lease.owner
            and stored.counter == lease.counter
            and stored.saves == lease.saves + 1
            and stored.done == self.done
            and stored.checkpoint == self.checkpoint
        )


class KeepRefused(Operation[bool]):
    """Keep the counts of the pages a holder did but could not save (its lease was lost).

    Their writes landed: without these counts a job reports fewer writes than it made
    (the new holder's redo finds them done). They go to ``refused#<counter>``, one
    attribute per lost lease, beside the one-pass ``counts``. The request SETs the lease's
    whole refused sum, so a retried request (or the next refused page's) writes a value
    that includes the earlier one: idempotent without a condition on the lease, which is
    gone. Conditional on the unit existing only; False when it does not.
    """

    action = "update_item"

    def __init__(self, table: Table, lease: Lease, counts: Mapping[str, int]) -> None:
        check_job_table(table)
        self.table = table
        self.lease = lease
        self.counts = {name: n for name, n in counts.items() if n}

    def params(self) -> dict[str, Any]:
        """The exact ``UpdateItem`` request."""
        key = unit_key(self.table, self.lease.job_id, self.lease.index)
        counts = {name: {"N": str(n)} for name, n in sorted(self.counts.items())}
        action = _ref(f"{REFUSED}{self.lease.counter}").set({"M": counts})
        return _update_request(self.table, key, [action], _ref(COUNTER).exists())

    def steps(self) -> Step[bool]:
        """Update; False when the unit is gone."""
        return (yield from _applied(self.action, self.params()))


class ReleaseUnit(Operation[bool]):
    """Give a held unit back (its holder failed): free at once, with the error noted."""

    action = "update_item"

    def __init__(self, table: Table, lease: Lease, error: str) -> None:
        check_job_table(table)
        self.table = table
        self.lease = lease
        self.error = error[:1000]

    def params(self) -> dict[str, Any]:
        """The exact ``UpdateItem`` request (conditional on the lease)."""
        key = unit_key(self.table, self.lease.job_id, self.lease.index)
        actions = [_ref(OWNER).remove(), _ref(EXPIRES).set(0), _ref(ERROR).set(self.error)]
        return _update_request(self.table, key, actions, self.lease.held())

    def steps(self) -> Step[bool]:
        """Release; False when the lease was already lost."""
        return (yield from _applied(self.action, self.params()))


class SetJobState(Operation[bool]):
    """Move a job from one state to another; False when it was not in ``expect``."""

    action = "update_item"

    def __init__(self, table: Table, job_id: str, state: JobState, *, expect: JobState) -> None:
        check_job_table(table)
        self.table = table
        self.job_id = job_id
        self.state = state
        self.expect = expect

    def params(self) -> dict[str, Any]:
        """The exact ``UpdateItem`` request (conditional on the current state)."""
        return _update_request(
            self.table,
            record_key(self.table, self.job_id),
            [_ref(STATE).set(self.state)],
            _ref(STATE) == self.expect,
        )

    def steps(self) -> Step[bool]:
        """Update; a job in another state (or none) is False."""
        return (yield from _applied(self.action, self.params()))
