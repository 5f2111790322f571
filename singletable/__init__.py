"""singletable: declarative DynamoDB single-table design for Python.

Declare a `Table`, then `Entity` classes whose key templates (``pk="ACTOR#{actor_id}"``,
``sk="EVT#{ts}#{seq}"``) are compiled once into order-preserving encoders and decoders.
Every operation is a pure value with ``.params()`` before ``.run(db)`` sends it.

The everyday names are here. The layers are public subpackages too: `singletable.errors`,
`singletable.expressions`, `singletable.operations` (for people writing executors),
`singletable.model`, `singletable.keys`, `singletable.attributes`, `singletable.io` and the
modules of `singletable.tooling` (capacity, schema, snapshot, planner, lint, migrate,
load).
"""

__version__ = "0.2.0"

import dataclasses
import typing
from typing import TYPE_CHECKING, Any

from singletable.entity import Entity, EntityInput
from singletable.errors import (
    AlreadyExistsError,
    BatchGetIncompleteError,
    BatchIncompleteError,
    BatchWriteIncompleteError,
    ConditionFailedError,
    ConfigurationError,
    CursorError,
    EndpointError,
    EntityTypeError,
    EstimateError,
    ExpressionError,
    ItemDecodeError,
    ItemEncodeError,
    ItemTooDeepError,
    ItemTooLargeError,
    KeyDecodeError,
    KeyEncodeError,
    KeyTooLargeError,
    LoadError,
    MigrationError,
    ModelDefinitionError,
    NotFoundError,
    QueryError,
    RequestLimitError,
    ServiceError,
    SingleTableError,
    SnapshotError,
    StreamDecodeError,
    TextEncodeError,
    TransactionCanceledError,
    UniqueConstraintError,
    UnknownEntityError,
    UnknownFieldError,
    VersionConflictError,
)
from singletable.expressions.conditions import Condition, and_, not_, or_
from singletable.expressions.fields import FieldRef, SizeOperand
from singletable.expressions.updates import SetValue, UpdateAction
from singletable.io.common import CapacityMeter
from singletable.io.connection import Connection
from singletable.io.embedded import embedded
from singletable.keys.codecs import KeyFormat
from singletable.model.plan import EntityPlan, IndexKeys
from singletable.model.table import GSI, LSI, KeyPart, NativeGSI, Projection, Table, Throughput
from singletable.operations.items import Delete, Get, ProjectedGet, Put
from singletable.operations.protocol import Operation
from singletable.types import lazy_names

__all__ = [
    "AlreadyExistsError",
    "AsyncConnection",
    "BatchGet",
    "BatchGetIncompleteError",
    "BatchIncompleteError",
    "BatchWrite",
    "BatchWriteIncompleteError",
    "BatchWriteResult",
    "CapacityEstimate",
    "CapacityLine",
    "CapacityMeter",
    "Change",
    "ChangeClass",
    "ChangeRecord",
    "Collection",
    "CollectionResult",
    "Condition",
    "ConditionFailedError",
    "ConfigurationError",
    "Connection",
    "CursorError",
    "Delete",
    "DispatchReport",
    "EndpointError",
    "Entity",
    "EntityInput",
    "EntityPlan",
    "EntityQuery",
    "EntityTypeError",
    "EstimateError",
    "ExportResult",
    "ExpressionError",
    "FieldRef",
    "GSI",
    "Get",
    "IndexKeys",
    "ItemDecodeError",
    "ItemEncodeError",
    "ItemTooDeepError",
    "ItemTooLargeError",
    "JobStatus",
    "KeyDecodeError",
    "KeyEncodeError",
    "KeyFormat",
    "KeyPart",
    "KeyTooLargeError",
    "LSI",
    "LintWarning",
    "LoadError",
    "LoadResult",
    "MigrationError",
    "MigrationPlan",
    "MigrationReport",
    "ModelDefinitionError",
    "NativeGSI",
    "NotFoundError",
    "Operation",
    "Page",
    "ProjectedGet",
    "Projection",
    "Put",
    "QueryError",
    "RequestLimitError",
    "Scan",
    "ServiceError",
    "SetValue",
    "SingleTableError",
    "SizeOperand",
    "SnapshotError",
    "StreamDecodeError",
    "StreamRouter",
    "Table",
    "TextEncodeError",
    "Throughput",
    "TransactGet",
    "TransactWrite",
    "TransactionCanceledError",
    "UniqueConstraintError",
    "UnknownEntityError",
    "UnknownFieldError",
    "Update",
    "UpdateAction",
    "VersionConflictError",
    "WorkUnit",
    "__version__",
    "and_",
    "batch_item_failures",
    "cancel_job",
    "cloudformation_resource",
    "cloudformation_template",
    "create_table_request",
    "decode_event",
    "decode_records",
    "embedded",
    "estimate_capacity",
    "explain",
    "export",
    "job_status",
    "lint_model",
    "lint_report",
    "load",
    "load_snapshot",
    "migrate",
    "not_",
    "or_",
    "plan_changes",
    "read_snapshot",
    "run_job",
    "snapshot",
    "snapshot_json",
    "start_job",
]


def _publish_here() -> None:
    # Tracebacks, reprs and pickles name public classes where users import them
    # (``singletable.Connection``), not the internal module that defines them. Errors keep
    # their public home, `singletable.errors`.
    published = [globals()[name] for name in __all__ if _publishable(globals().get(name))]
    # Resolved while every class still names its defining module (bases included); the
    # lazy names are published when first loaded.
    for value in published:
        _resolve_field_types(value)
    for value in published:
        value.__module__ = __name__


def _publishable(value: Any) -> bool:
    return getattr(value, "__module__", "").startswith("singletable.") and not (
        isinstance(value, type) and issubclass(value, SingleTableError)
    )


def _publish(value: Any) -> None:
    if _publishable(value):
        _resolve_field_types(value)
        value.__module__ = __name__


def _resolve_field_types(value: Any) -> None:
    # pydantic (a FastAPI response model, a TypeAdapter) resolves a dataclass's string
    # annotations in the namespace of its __module__; once that is this package, names
    # private to the defining module (``Item``) would not resolve. Resolve them first.
    if not (isinstance(value, type) and dataclasses.is_dataclass(value)):
        return
    if not value.__module__.startswith("singletable."):
        return  # already published (and resolved)
    try:
        hints = typing.get_type_hints(value)
    except (NameError, TypeError):
        # Annotations naming TYPE_CHECKING-only types (EntityPlan's): not a data class a
        # pydantic model would hold; tests/test_response_models.py lists which are.
        return
    for dataclass_field in dataclasses.fields(value):
        dataclass_field.type = hints[dataclass_field.name]
    value.__annotations__ = {name: hints[name] for name in value.__annotations__}


_publish_here()

# Tooling, streams and the asyncio executor are imported on first use: most programs
# never touch them, and importing them costs start-up time (issue 13); so are collections
# and transactions, which a Lambda handler may never use (issue 24), and batches, scans,
# updates, queries and the CreateTable request (issue 24, cold start).
_LAZY: dict[str, str] = {
    "BatchGet": "singletable.operations.batch",
    "BatchWrite": "singletable.operations.batch",
    "BatchWriteResult": "singletable.operations.batch",
    "Scan": "singletable.operations.scan",
    "EntityQuery": "singletable.operations.query",
    "Page": "singletable.operations.reads",
    "Update": "singletable.operations.update",
    "create_table_request": "singletable.model.definition",
    "AsyncConnection": "singletable.io.async_connection",
    "CapacityEstimate": "singletable.tooling.cost.report",
    "CapacityLine": "singletable.tooling.cost.report",
    "Change": "singletable.tooling.migrations.planner",
    "ChangeClass": "singletable.tooling.migrations.planner",
    "ChangeRecord": "singletable.streams",
    "Collection": "singletable.operations.collection",
    "CollectionResult": "singletable.operations.collection",
    "DispatchReport": "singletable.streams",
    "ExportResult": "singletable.tooling.bulk.export",
    "JobStatus": "singletable.tooling.jobs.status",
    "LintWarning": "singletable.tooling.cost.lint",
    "LoadResult": "singletable.tooling.bulk.load",
    "MigrationPlan": "singletable.tooling.migrations.planner",
    "MigrationReport": "singletable.tooling.migrations.runner",
    "StreamRouter": "singletable.streams",
    "WorkUnit": "singletable.tooling.jobs.units",
    "batch_item_failures": "singletable.streams",
    "cancel_job": "singletable.tooling.jobs.engine",
    "cloudformation_resource": "singletable.tooling.definitions.schema",
    "cloudformation_template": "singletable.tooling.definitions.schema",
    "decode_event": "singletable.streams",
    "decode_records": "singletable.streams",
    "estimate_capacity": "singletable.tooling.cost.capacity",
    "explain": "singletable.tooling.cost.capacity",
    "export": "singletable.tooling.bulk.export",
    "job_status": "singletable.tooling.jobs.status",
    "lint_model": "singletable.tooling.cost.lint",
    "lint_report": "singletable.tooling.cost.lint",
    "load": "singletable.tooling.bulk.load",
    "load_snapshot": "singletable.tooling.migrations.snapshot",
    "migrate": "singletable.tooling.migrations.runner",
    "plan_changes": "singletable.tooling.migrations.planner",
    "read_snapshot": "singletable.tooling.migrations.snapshot",
    "run_job": "singletable.tooling.jobs.engine",
    "snapshot": "singletable.tooling.migrations.snapshot",
    "snapshot_json": "singletable.tooling.migrations.snapshot",
    "start_job": "singletable.tooling.jobs.engine",
    "TransactGet": "singletable.operations.transactions",
    "TransactWrite": "singletable.operations.transactions",
}

if TYPE_CHECKING:
    from singletable.io.async_connection import AsyncConnection
    from singletable.model.definition import create_table_request
    from singletable.operations.batch import BatchGet, BatchWrite, BatchWriteResult
    from singletable.operations.collection import Collection, CollectionResult
    from singletable.operations.query import EntityQuery
    from singletable.operations.reads import Page
    from singletable.operations.scan import Scan
    from singletable.operations.transactions import TransactGet, TransactWrite
    from singletable.operations.update import Update
    from singletable.streams import (
        ChangeRecord,
        DispatchReport,
        StreamRouter,
        batch_item_failures,
        decode_event,
        decode_records,
    )
    from singletable.tooling.bulk.export import ExportResult, export
    from singletable.tooling.bulk.load import LoadResult, load
    from singletable.tooling.cost.capacity import estimate_capacity, explain
    from singletable.tooling.cost.lint import LintWarning, lint_model, lint_report
    from singletable.tooling.cost.report import CapacityEstimate, CapacityLine
    from singletable.tooling.definitions.schema import (
        cloudformation_resource,
        cloudformation_template,
    )
    from singletable.tooling.jobs.engine import cancel_job, run_job, start_job
    from singletable.tooling.jobs.status import JobStatus, job_status
    from singletable.tooling.jobs.units import WorkUnit
    from singletable.tooling.migrations.planner import (
        Change,
        ChangeClass,
        MigrationPlan,
        plan_changes,
    )
    from singletable.tooling.migrations.runner import MigrationReport, migrate
    from singletable.tooling.migrations.snapshot import (
        load_snapshot,
        read_snapshot,
        snapshot,
        snapshot_json,
    )


__getattr__, __dir__ = lazy_names(__name__, _LAZY, _publish)
