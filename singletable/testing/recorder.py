"""Recording the requests an application sends, and assertions on them.

``with record(db) as calls:`` watches every request the executors send, on either
transport and on `AsyncConnection` alike (they call their listeners from ``call``, the one
place a request goes out), and asks DynamoDB for the consumed capacity of each request
that can report it, so the calls show what they cost::

    with record(db) as calls:
        client.get("/customers/c1/orders")
    assert_single_query(calls, index="GSI1")
    assert_max_capacity(calls, rcu=1)
    assert_no_scan(calls)

A failed assertion prints the recorded requests, one paragraph each.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import EllipsisType
from typing import Any, Protocol, overload

from singletable.errors import SingleTableError
from singletable.io.common import RequestListener

__all__ = [
    "Recorded",
    "Request",
    "assert_max_capacity",
    "assert_no_scan",
    "assert_single_query",
    "record",
]

#: The actions whose requests take ``ReturnConsumedCapacity``.
_METERED = frozenset(
    {
        "get_item",
        "put_item",
        "update_item",
        "delete_item",
        "query",
        "scan",
        "batch_get_item",
        "batch_write_item",
        "transact_get_items",
        "transact_write_items",
    }
)
_READS = frozenset({"get_item", "query", "scan", "batch_get_item", "transact_get_items"})


class _Watched(Protocol):
    listeners: list[RequestListener]


def _pascal(action: str) -> str:
    return "".join(part.capitalize() for part in action.split("_"))


@dataclass(frozen=True)
class Request:
    """One request sent: what was asked for, and the answer.

    Attributes:
        action: The botocore action (``"query"``, ``"transact_write_items"``, ...).
        params: The parameters the application sent (without the capacity request the
            recorder added).
        response: The response, or ``None`` when the request failed.
        error: The error it raised (`ServiceError`, ...), or ``None``.
    """

    action: str
    params: dict[str, Any]
    response: dict[str, Any] | None
    error: SingleTableError | None

    @property
    def name(self) -> str:
        """The action as DynamoDB names it (``Query``, ``TransactWriteItems``)."""
        return _pascal(self.action)

    @property
    def capacity(self) -> float | None:
        """The capacity units reported, ``None`` when the backend reported none."""
        consumed = (self.response or {}).get("ConsumedCapacity")
        if not consumed:  # absent, or an empty list (moto's transactions)
            return None
        entries = consumed if isinstance(consumed, list) else [consumed]
        return sum(float(entry.get("CapacityUnits", 0.0)) for entry in entries)

    @property
    def is_read(self) -> bool:
        """Whether the request reads (its capacity is read capacity)."""
        return self.action in _READS

    @property
    def index(self) -> str | None:
        """The index a query or scan reads, ``None`` for the table."""
        name = self.params.get("IndexName")
        return str(name) if name is not None else None

    def __str__(self) -> str:
        shown = {k: v for k, v in self.params.items() if k != "ReturnConsumedCapacity"}
        units = self.capacity
        if self.error is not None:
            outcome = f"failed: {self.error}"
        else:
            count = (self.response or {}).get("Count")
            outcome = "ok" if count is None else f"ok, {count} items"
        cost = "capacity not reported" if units is None else f"{units:g} {self._unit}"
        body = json.dumps(shown, indent=2, default=repr, ensure_ascii=False)
        return f"{self.name} ({outcome}; {cost})\n{body}"

    @property
    def _unit(self) -> str:
        return "RCU" if self.is_read else "WCU"


class Recorded(Sequence[Request]):
    """The requests recorded so far, in the order they were sent."""

    def __init__(self) -> None:
        self._requests: list[Request] = []

    @overload
    def __getitem__(self, index: int) -> Request: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Request]: ...

    def __getitem__(self, index: int | slice) -> Request | Sequence[Request]:
        return self._requests[index]

    def __len__(self) -> int:
        return len(self._requests)

    def append(self, request: Request) -> None:
        """Add a request (the recorder does)."""
        self._requests.append(request)

    def clear(self) -> None:
        """Forget what was recorded (to record the next step alone)."""
        self._requests.clear()

    @property
    def actions(self) -> list[str]:
        """Each request's action as DynamoDB names it, in order."""
        return [r.name for r in self._requests]

    @property
    def read_units(self) -> float:
        """The read capacity reported, in total."""
        return sum(r.capacity or 0.0 for r in self._requests if r.is_read)

    @property
    def write_units(self) -> float:
        """The write capacity reported, in total."""
        return sum(r.capacity or 0.0 for r in self._requests if not r.is_read)

    def __str__(self) -> str:
        if not self._requests:
            return "no requests recorded"
        lines = [f"{len(self._requests)} request(s):"]
        for number, request in enumerate(self._requests, 1):
            lines.append(f"[{number}] {request}")
        return "\n".join(lines)


class _Recorder:
    """A `RequestListener` that appends to a `Recorded`."""

    def __init__(self, calls: Recorded, capacity: str | None) -> None:
        self.calls = calls
        self.capacity = capacity

    def sending(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.capacity is None or action not in _METERED or "ReturnConsumedCapacity" in params:
            return params
        return {**params, "ReturnConsumedCapacity": self.capacity}

    def answered(
        self,
        action: str,
        params: dict[str, Any],
        response: dict[str, Any] | None,
        error: SingleTableError | None,
    ) -> None:
        self.calls.append(Request(action, dict(params), response, error))


@contextmanager
def record(*executors: _Watched, capacity: str | None = "INDEXES") -> Iterator[Recorded]:
    """Record every request ``executors`` send inside the block.

    Args:
        executors: `Connection` or `AsyncConnection` objects (one or more).
        capacity: The ``ReturnConsumedCapacity`` the recorder asks for on each request
            that takes it and does not ask itself (``None``: send requests unchanged;
            the connections' meters count what is reported).
    """
    calls = Recorded()
    recorder = _Recorder(calls, capacity)
    for executor in executors:
        executor.listeners.append(recorder)
    try:
        yield calls
    finally:
        for executor in executors:
            executor.listeners.remove(recorder)


def _fail(message: str, calls: Sequence[Request]) -> AssertionError:
    listing = str(calls) if isinstance(calls, Recorded) else "\n".join(map(str, calls))
    return AssertionError(f"{message}\n{listing}")


def assert_no_scan(calls: Sequence[Request]) -> None:
    """No request was a Scan."""
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    scans = [r for r in calls if r.action == "scan"]
    if scans:
        raise _fail(f"expected no Scan, {len(scans)} were sent", calls)


def assert_single_query(
    calls: Sequence[Request], *, index: str | EllipsisType | None = ...
) -> Request:
    """Exactly one request was sent and it was a Query (on ``index``, if given).

    Pass ``index=None`` to require the table itself; leave it out to accept any.
    Returns the query request.
    """
    __tracebackhide__ = True
    if len(calls) != 1 or calls[0].action != "query":
        raise _fail(f"expected a single Query, {len(calls)} request(s) were sent", calls)
    query = calls[0]
    if index is not ... and query.index != index:
        where = "the table" if index is None else f"index {index!r}"
        found = "the table" if query.index is None else f"index {query.index!r}"
        raise _fail(f"expected the Query to read {where}, it read {found}", calls)
    return query


def assert_max_capacity(
    calls: Sequence[Request],
    *,
    rcu: float | None = None,
    wcu: float | None = None,
    reported_only: bool = False,
) -> None:
    """The requests consumed at most ``rcu`` read and ``wcu`` write capacity units.

    The figures are what the backend reported (DynamoDB Local reports DynamoDB's; moto
    its own approximation, and none for transactions). A request that reported nothing
    fails the check unless ``reported_only`` is true: an unknown cost is not a small one.
    """
    __tracebackhide__ = True
    if rcu is None and wcu is None:
        raise ValueError("assert_max_capacity: give rcu=, wcu= or both")
    unreported = [r for r in calls if r.action in _METERED and r.capacity is None]
    if unreported and not reported_only:
        names = ", ".join(r.name for r in unreported)
        raise _fail(
            f"the backend reported no consumed capacity for {names} (moto reports none "
            "for transactions); pass reported_only=True to check the others",
            calls,
        )
    reads = sum(r.capacity or 0.0 for r in calls if r.is_read)
    writes = sum(r.capacity or 0.0 for r in calls if not r.is_read)
    if rcu is not None and reads > rcu:
        raise _fail(f"expected at most {rcu:g} RCU, the requests consumed {reads:g}", calls)
    if wcu is not None and writes > wcu:
        raise _fail(f"expected at most {wcu:g} WCU, the requests consumed {writes:g}", calls)
