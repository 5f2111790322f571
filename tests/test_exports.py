"""The public API: ``singletable.__all__`` is exactly the intended set, sorted."""

from __future__ import annotations

import singletable

PUBLIC = {
    "lint_report",
    "lint_model",
    "LintWarning",
    "EstimateError",
    "explain",
    "estimate_capacity",
    "CapacityLine",
    "CapacityEstimate",
    # declarations and entities
    "Table",
    "GSI",
    "LSI",
    "Projection",
    "Throughput",
    "Entity",
    "EntityPlan",
    "IndexKeys",
    "KeyFormat",
    # expressions
    "Condition",
    "FieldRef",
    "SetValue",
    "SizeOperand",
    "UpdateAction",
    "and_",
    "or_",
    "not_",
    # operations and queries (pure builders with .params())
    "Operation",
    "Get",
    "ProjectedGet",
    "Put",
    "Update",
    "Delete",
    "BatchGet",
    "BatchWrite",
    "BatchWriteResult",
    "TransactGet",
    "TransactWrite",
    "EntityQuery",
    "Scan",
    "Collection",
    "CollectionResult",
    "Page",
    # execution and backends
    "Connection",
    "CapacityMeter",
    "embedded",
    # schema output, snapshots and migrations
    "create_table_request",
    "cloudformation_resource",
    "cloudformation_template",
    "snapshot",
    "snapshot_json",
    "read_snapshot",
    "load_snapshot",
    "plan_changes",
    "Change",
    "ChangeClass",
    "MigrationPlan",
    "MigrationReport",
    "migrate",
    # errors
    "SingleTableError",
    "ModelDefinitionError",
    "KeyEncodeError",
    "KeyDecodeError",
    "ItemEncodeError",
    "ItemDecodeError",
    "ItemTooLargeError",
    "ExpressionError",
    "QueryError",
    "CursorError",
    "RequestLimitError",
    "ServiceError",
    "ConditionFailedError",
    "AlreadyExistsError",
    "NotFoundError",
    "VersionConflictError",
    "TransactionCanceledError",
    "UnknownEntityError",
    "SnapshotError",
    "MigrationError",
}


def test_all_is_the_public_set() -> None:
    assert set(singletable.__all__) == PUBLIC
    assert len(singletable.__all__) == len(PUBLIC)  # no duplicates


def test_all_is_sorted() -> None:
    # Plain code-point order (httpx's convention; ruff's RUF022 is off in pyproject).
    assert singletable.__all__ == sorted(singletable.__all__)


def test_every_name_is_importable() -> None:
    for name in singletable.__all__:
        assert getattr(singletable, name) is not None, name


def test_errors_share_one_base() -> None:
    errors = [getattr(singletable, n) for n in singletable.__all__ if n.endswith("Error")]
    for error in errors:
        assert issubclass(error, singletable.SingleTableError), error
        assert issubclass(error, Exception)
