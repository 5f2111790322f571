"""The sans-I/O protocol between operations and executors.

An operation describes its execution as a generator (`Operation.steps`) that yields `Call`
(and `Sleep`, for backoff) and receives the responses; a query or scan is a `Stream` that
also yields `Emit` values for its consumer. Executors (`singletable.io`) drive these
generators; they are the only code that performs I/O.

Two kinds of executor drive the same generators: a synchronous one (`Executor`, e.g.
`singletable.Connection`) and an asyncio one (`AsyncExecutor`, e.g.
`singletable.AsyncConnection`). The terminals (`Operation.run`, the query terminals) are
overloaded on the executor's kind, so ``op.run(db)`` is the result and ``op.run(adb)`` an
awaitable of it, each precisely typed, with the operation's behaviour written once.
"""

from __future__ import annotations

import copy
import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Generator, Mapping
from dataclasses import field
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar, cast, overload

from pydantic import BaseModel

from singletable.operations.limits import check_request_expressions, check_request_text
from singletable.types import frozen_dataclass

R = TypeVar("R")
# An operation that yields a subclass of R is an operation yielding R (a collection's
# CollectionResult is a list).
R_co = TypeVar("R_co", covariant=True)
E = TypeVar("E", bound=BaseModel)
B = TypeVar("B", bound="Builder")
M = TypeVar("M", bound=Callable[..., Any])
C = TypeVar("C")


ReturnCapacity = Literal["TOTAL", "INDEXES"]


@frozen_dataclass
class Call:
    """One DynamoDB API call: the boto3 client method name and its keyword arguments.

    Every request passes here before an executor sends it, so request-wide limits are
    checked here (`check_request_text`: no string UTF-8 cannot encode;
    `check_request_expressions`: no expression over 4 KB or 300 operators).
    """

    action: str
    params: dict[str, Any]
    #: Set by an operation that has already checked every string of ``params`` (a batch
    #: write checks all its items before its first call, so that bad text in its last
    #: chunk is refused before the first is sent, and not walked twice).
    text_checked: bool = field(default=False, compare=False, repr=False)
    #: What the call is part of, for telemetry (`singletable.io.telemetry`): the action
    #: the whole operation is named after when it differs from this call's (a guarded
    #: ``put_item`` reads and runs a transaction) and its subject (an entity or a
    #: collection). Neither is sent to DynamoDB.
    operation: str | None = field(default=None, compare=False, repr=False)
    subject: str | None = field(default=None, compare=False, repr=False)
    #: Decodes the response body (a query's page, `singletable.model.pages`) where the
    #: transport reads the bytes itself and nothing watches the responses; the step
    #: then gets back its items as entities, with the attribute-value dicts of any item
    #: left to it. Other transports ignore it.
    decode_body: Callable[[bytes], dict[str, Any] | None] | None = field(
        default=None, compare=False, repr=False
    )

    # Written out (frozen_dataclass keeps a class's own __init__): one per request, and
    # the general __init__ it builds costs about 1 µs more a call.
    def __init__(
        self,
        action: str,
        params: dict[str, Any],
        text_checked: bool = False,
        operation: str | None = None,
        subject: str | None = None,
        decode_body: Callable[[bytes], dict[str, Any] | None] | None = None,
    ) -> None:
        assign = object.__setattr__
        assign(self, "action", action)
        assign(self, "params", params)
        assign(self, "text_checked", text_checked)
        assign(self, "operation", operation)
        assign(self, "subject", subject)
        assign(self, "decode_body", decode_body)
        if not text_checked:
            check_request_text(action, params)
        check_request_expressions(action, params)


@frozen_dataclass
class Sleep:
    """A pause the executor must take (backoff before retrying unprocessed items)."""

    seconds: float


Step = Generator["Call | Sleep", Any, R]


def capacity_entries(response: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``ConsumedCapacity`` entries of a response (or of an error response).

    A single-item call, a query or a scan reports one map; a batch or a transaction a
    list of them, one per table (DynamoDB Local fills it, moto returns ``[]``); a request
    that did not ask for capacity reports nothing. Every reader of the figure goes
    through here, so none of them assumes one shape.
    """
    consumed = response.get("ConsumedCapacity")
    if consumed is None:
        return []
    return list(consumed) if isinstance(consumed, list) else [consumed]


def consumed_units(response: Mapping[str, Any]) -> float:
    """The capacity units a response reports, summed over its entries (0 when none)."""
    return sum(float(entry.get("CapacityUnits", 0.0)) for entry in capacity_entries(response))


class Executor(Protocol):
    """What runs operations synchronously (`singletable.Connection`)."""

    def execute(self, operation: Operation[R]) -> R:
        """Run ``operation`` and return its result."""
        ...


class AsyncExecutor(Protocol):
    """What runs operations on an asyncio event loop (`singletable.AsyncConnection`)."""

    def execute(self, operation: Operation[R]) -> Coroutine[Any, Any, R]:
        """Run ``operation``; awaiting the coroutine returns its result."""
        ...


class Operation(ABC, Generic[R_co]):
    """A pure description of one operation (possibly several calls, e.g. batch retries)."""

    action: ClassVar[str]
    #: The entity (or collection) the operation is about, for telemetry (``None``: none).
    subject: str | None = None

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """The exact keyword arguments of the (first) boto3 client call."""

    def steps(self) -> Step[R_co]:
        """The calls this operation makes, as a generator the executor drives."""
        response = yield Call(self.action, self.params(), subject=self.subject)
        return self.parse(response)

    def wire_steps(self, fragment: Callable[[bytes], Any]) -> Step[R_co]:
        """`steps` for an executor that serialises requests itself (the lean transport).

        An operation that holds items as ready JSON text may put ``fragment(text)`` (a
        value the executor's JSON encoder embeds as it is) in their place; the default
        is `steps`.
        """
        del fragment
        return self.steps()

    def parse(self, response: dict[str, Any]) -> R_co:
        """Turn the boto3 response into the operation's result."""
        raise NotImplementedError

    @overload
    def run(self, db: AsyncExecutor) -> Coroutine[Any, Any, R_co]: ...
    @overload
    def run(self, db: Executor) -> R_co: ...
    def run(self, db: Executor | AsyncExecutor) -> R_co | Coroutine[Any, Any, R_co]:
        """Execute with ``db`` and return the result (an awaitable of it with an async ``db``).

        ``Order.get(...).run(db)`` with a `singletable.Connection`;
        ``await Order.get(...).run(adb)`` with a `singletable.AsyncConnection`.
        """
        return db.execute(self)


class Builder:
    """A value built by chained calls, each returning a new value (the receiver unchanged).

    Subclasses list their mutable containers in `_containers` (copied by `_copy`) and mark
    each chain method with `chain`, so that ``u1 = base.set(x=1); base.set(y=2)`` leaves
    ``u1`` with ``x`` only.
    """

    #: Attributes holding lists, dicts or sets that chain methods add to.
    _containers: ClassVar[tuple[str, ...]] = ()

    def _copy(self: B) -> B:
        clone = shallow_copy(self)
        for name in self._containers:
            setattr(clone, name, copy.copy(getattr(self, name)))
        return clone


def shallow_copy(obj: C) -> C:
    """``copy.copy`` of a builder or query: a new instance sharing the attribute values.

    What ``copy.copy`` makes of an instance of a plain class (no ``__slots__``, no
    ``__copy__``/``__reduce__`` of its own, as every builder and query here), without
    the reduce protocol it goes through: 0.22-0.30x the time of a copy of an `Update`,
    an `EntityQuery` or a `TransactWrite`, which each chained call pays (bench_micro
    ``copies``).
    """
    clone: C = object.__new__(type(obj))
    clone.__dict__.update(obj.__dict__)
    return clone


def chain(method: M) -> M:
    """Run a builder method on a copy of the receiver, so the receiver never changes."""

    @functools.wraps(method)
    def on_a_copy(self: Builder, /, *args: Any, **kwargs: Any) -> Any:
        return method(self._copy(), *args, **kwargs)

    return cast(M, on_a_copy)
