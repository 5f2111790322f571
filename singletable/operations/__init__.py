"""Operations as values: every read and write is a pure object before it is an action.

Each operation builds the exact boto3 request (``.params()``) without a network and
describes its execution as a sans-I/O generator (`protocol`): it yields `Call` and `Sleep`
steps (queries and scans also `Emit` values, see `stream`) and receives the responses.
Executors in `singletable.io` drive them; write your own executor against `Executor` /
`StreamExecutor` (or `AsyncExecutor` / `AsyncStreamExecutor`) and the step types exported here.
"""

from typing import TYPE_CHECKING

from singletable.operations.items import Delete, Get, ProjectedGet, Put
from singletable.operations.protocol import (
    AsyncExecutor,
    Call,
    Executor,
    Operation,
    ReturnCapacity,
    Sleep,
    Step,
)
from singletable.operations.stream import AsyncStreamExecutor, Emit, Folded, Stream, StreamExecutor
from singletable.types import lazy_names

__all__ = [
    "AsyncExecutor",
    "AsyncStreamExecutor",
    "BatchGet",
    "BatchWrite",
    "BatchWriteResult",
    "Call",
    "Collection",
    "CollectionQuery",
    "CollectionResult",
    "Delete",
    "Emit",
    "EntityQuery",
    "NativeQuery",
    "Executor",
    "Folded",
    "Get",
    "Operation",
    "Page",
    "ProjectedGet",
    "Put",
    "ReturnCapacity",
    "Scan",
    "Sleep",
    "Step",
    "Stream",
    "StreamExecutor",
    "TransactGet",
    "TransactWrite",
    "Update",
]

# Collections and transactions are loaded on first use: a handler that never reads a
# collection or runs a transaction does not pay for their modules at start-up (issue 24);
# so are batches, scans, updates and queries (issue 24, cold start: a handler that only
# reads and writes items by key never loads the query modules), and two modules the
# eager ones reach through here when they need them (``operations.guarded``: writes of
# entities with unique fields; ``operations.tables``: table lifecycle).
_LAZY = {
    "guarded": "singletable.operations.guarded",
    "tables": "singletable.operations.tables",
    "BatchGet": "singletable.operations.batch",
    "BatchWrite": "singletable.operations.batch",
    "BatchWriteResult": "singletable.operations.batch",
    "NativeQuery": "singletable.operations.native",
    "EntityQuery": "singletable.operations.query",
    "Page": "singletable.operations.reads",
    "Scan": "singletable.operations.scan",
    "Update": "singletable.operations.update",
    "Collection": "singletable.operations.collection",
    "CollectionQuery": "singletable.operations.collection",
    "CollectionResult": "singletable.operations.collection",
    "TransactGet": "singletable.operations.transactions",
    "TransactWrite": "singletable.operations.transactions",
}

if TYPE_CHECKING:
    from singletable.operations import guarded as guarded
    from singletable.operations import tables as tables
    from singletable.operations.batch import BatchGet, BatchWrite, BatchWriteResult
    from singletable.operations.collection import Collection, CollectionQuery, CollectionResult
    from singletable.operations.native import NativeQuery
    from singletable.operations.query import EntityQuery
    from singletable.operations.reads import Page
    from singletable.operations.scan import Scan
    from singletable.operations.transactions import TransactGet, TransactWrite
    from singletable.operations.update import Update


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
