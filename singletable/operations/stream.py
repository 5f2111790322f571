"""Streams: the query/scan side of the sans-I/O protocol (see `protocol`).

A stream yields `Call`/`Sleep` steps like an operation, and `Emit` values for its
consumer. An executor's ``stream`` hands the emitted values out lazily (an iterator, or an
async iterator); `Folded` turns a stream into an ordinary `Operation` whose result is what
the stream emitted, folded (``all``, ``first``, ``count``, ``page``), so those terminals
run on any executor with one definition.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Generator, Iterator
from typing import Any, Generic, Protocol, TypeVar

from singletable.operations.protocol import Call, Operation, Sleep, Step
from singletable.types import frozen_dataclass

T = TypeVar("T")
R = TypeVar("R")


@frozen_dataclass
class Emit(Generic[T]):
    """A value a stream hands to its consumer (an item or a page)."""

    value: T

    # Written out (frozen_dataclass keeps a class's own __init__): a stream emits one per
    # item, and the general __init__ it builds costs about 1 µs more a call.
    def __init__(self, value: T) -> None:
        object.__setattr__(self, "value", value)


Stream = Generator["Call | Sleep | Emit[T]", Any, None]


class StreamExecutor(Protocol):
    """An executor able to drive streams synchronously (`singletable.Connection`)."""

    def stream(self, stream: Stream[T]) -> Iterator[T]:
        """Run ``stream``, yielding what it emits."""
        ...


class AsyncStreamExecutor(Protocol):
    """An executor able to drive streams on an event loop (`singletable.AsyncConnection`)."""

    def stream(self, stream: Stream[T]) -> AsyncIterator[T]:
        """Run ``stream``, yielding what it emits (``async for``)."""
        ...


def consume(stream: Stream[T], accept: Callable[[T], bool]) -> Step[None]:
    """Drive ``stream`` inside an operation's steps, handing each emitted value to ``accept``.

    The stream's calls and sleeps pass through to the executor (and its responses or
    errors back). When ``accept`` returns ``False`` the stream is closed: no further
    request is sent.
    """
    try:
        out = next(stream)
        while True:
            if isinstance(out, Emit):
                if not accept(out.value):
                    return
                out = stream.send(None)
                continue
            try:
                response = yield out
            except Exception as exc:  # a ServiceError thrown in by the executor
                out = stream.throw(exc)
            else:
                out = stream.send(response)
    except StopIteration:
        return
    finally:
        stream.close()


class Folded(Operation[R]):
    """An operation whose result is folded from what a stream emits (``all``, ``count``...).

    Args:
        first_request: The request of the stream's first call (for `params`).
        steps: Makes the generator that drives the stream (see `consume`) and returns
            the folded result.
    """

    def __init__(self, first_request: Callable[[], dict[str, Any]], steps: Callable[[], Step[R]]):
        self._first_request = first_request
        self._steps = steps

    def params(self) -> dict[str, Any]:
        """The exact request of the stream's first call."""
        return self._first_request()

    def steps(self) -> Step[R]:
        """The stream's calls, ending with the folded result."""
        return self._steps()
