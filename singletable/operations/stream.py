"""Streams: the query/scan side of the sans-I/O protocol (see `protocol`)."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from singletable.operations.protocol import Call, Sleep

T = TypeVar("T")


@dataclass(frozen=True)
class Emit(Generic[T]):
    """A value a stream hands to its consumer (an item or a page)."""

    value: T


Stream = Generator["Call | Sleep | Emit[T]", Any, None]


class StreamExecutor(Protocol):
    """An executor able to drive streams (`singletable.Connection`)."""

    def stream(self, stream: Stream[T]) -> Iterator[T]:
        """Run ``stream``, yielding what it emits."""
        ...
