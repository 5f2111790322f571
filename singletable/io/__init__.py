"""I/O: the executors, the only code that talks to DynamoDB.

* `connection`: `Connection`, the synchronous executor over a boto3 client.
* `async_connection`: `AsyncConnection`, the asyncio executor over aiobotocore (optional
  extra ``async``).
* `common`: what both share apart from the I/O (client configuration, error mapping,
  `CapacityMeter`, resuming an operation with an outcome).
* `embedded`: an in-memory DynamoDB (moto) for tests, notebooks and the demo.
* `telemetry`: OpenTelemetry spans, metrics and logs of what the executors run (optional
  extra ``otel``), with `lean_spans` (the lean transport's client span) and `work_spans`
  (streams and bulk jobs), whose public helpers are `stream_tracing` (a
  `singletable.StreamRouter` hook continuing the trace an item carries) and `traceparent`
  (the current trace, to store in an item).
"""

from typing import TYPE_CHECKING

from singletable.io.common import CapacityMeter
from singletable.io.connection import Connection
from singletable.io.embedded import embedded
from singletable.types import lazy_names

__all__ = [
    "AsyncConnection",
    "CapacityMeter",
    "Connection",
    "embedded",
    "stream_tracing",
    "traceparent",
]

# asyncio is loaded on first use: a synchronous program does not need it, and importing
# it is a large share of `import singletable` (issue 13). (`embedded` stays eager: its
# module is cheap, moto loads inside the function, and the module shares its name.)
# The tracing helpers of streams too, and the lean transport's modules, which `Connection`
# reaches through here only when it uses that transport (issue 24, cold start).
_LAZY = {
    "AsyncConnection": "singletable.io.async_connection",
    "lean": "singletable.io.lean",
    "lean_spans": "singletable.io.lean_spans",
    "stream_tracing": "singletable.io.work_spans",
    "traceparent": "singletable.io.work_spans",
}

if TYPE_CHECKING:
    from singletable.io import lean as lean
    from singletable.io import lean_spans as lean_spans
    from singletable.io.async_connection import AsyncConnection
    from singletable.io.work_spans import stream_tracing, traceparent


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
