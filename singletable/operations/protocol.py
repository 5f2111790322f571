"""The sans-I/O protocol between operations and executors.

An operation describes its execution as a generator (`Operation.steps`) that yields `Call`
(and `Sleep`, for backoff) and receives the responses; a query or scan is a `Stream` that
also yields `Emit` values for its consumer. Executors (`singletable.io`) drive these
generators; they are the only code that performs I/O.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel

from singletable.operations.limits import check_request_text

R = TypeVar("R")
E = TypeVar("E", bound=BaseModel)


ReturnCapacity = Literal["TOTAL", "INDEXES"]


@dataclass(frozen=True)
class Call:
    """One DynamoDB API call: the boto3 client method name and its keyword arguments.

    Every request passes here before an executor sends it, so request-wide limits are
    checked here (`check_request_text`: no string UTF-8 cannot encode).
    """

    action: str
    params: dict[str, Any]

    def __post_init__(self) -> None:
        check_request_text(self.action, self.params)


@dataclass(frozen=True)
class Sleep:
    """A pause the executor must take (backoff before retrying unprocessed items)."""

    seconds: float


Step = Generator["Call | Sleep", Any, R]


class Executor(Protocol):
    """What runs operations: `singletable.Connection` is the synchronous one."""

    def execute(self, operation: Operation[R]) -> R:
        """Run ``operation`` and return its result."""
        ...


class Operation(ABC, Generic[R]):
    """A pure description of one operation (possibly several calls, e.g. batch retries)."""

    action: ClassVar[str]

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """The exact keyword arguments of the (first) boto3 client call."""

    def steps(self) -> Step[R]:
        """The calls this operation makes, as a generator the executor drives."""
        response = yield Call(self.action, self.params())
        return self.parse(response)

    def parse(self, response: dict[str, Any]) -> R:
        """Turn the boto3 response into the operation's result."""
        raise NotImplementedError

    def run(self, db: Executor) -> R:
        """Execute with ``db`` (a `singletable.Connection`) and return the result."""
        return db.execute(self)
