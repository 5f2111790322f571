"""The public API: ``singletable.__all__`` is exactly the intended set, sorted."""

from __future__ import annotations

import importlib
import re

import pytest

import singletable

PUBLIC = {
    # jobs shared by many workers (singletable.tooling.jobs)
    "start_job",
    "run_job",
    "job_status",
    "cancel_job",
    "JobStatus",
    "WorkUnit",
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
    "NativeGSI",
    "KeyPart",
    "Projection",
    "Throughput",
    "Entity",
    "EntityInput",
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
    "AsyncConnection",
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
    "load",
    "LoadResult",
    "export",
    "ExportResult",
    # errors
    "SingleTableError",
    "ModelDefinitionError",
    "KeyEncodeError",
    "KeyTooLargeError",
    "KeyDecodeError",
    "ItemEncodeError",
    "ItemDecodeError",
    "ItemTooDeepError",
    "ItemTooLargeError",
    "ExpressionError",
    "QueryError",
    "CursorError",
    "RequestLimitError",
    "BatchIncompleteError",
    "BatchWriteIncompleteError",
    "BatchGetIncompleteError",
    "ServiceError",
    "ConditionFailedError",
    "AlreadyExistsError",
    "NotFoundError",
    "VersionConflictError",
    "UniqueConstraintError",
    "StreamDecodeError",
    # typed change streams
    "ChangeRecord",
    "DispatchReport",
    "StreamRouter",
    "batch_item_failures",
    "decode_event",
    "decode_records",
    "TransactionCanceledError",
    "UnknownEntityError",
    "UnknownFieldError",
    "EntityTypeError",
    "SnapshotError",
    "TextEncodeError",
    "MigrationError",
    "LoadError",
    "ConfigurationError",
    "EndpointError",
    "__version__",
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


def test_version_is_the_distribution_version() -> None:
    from importlib.metadata import PackageNotFoundError, version

    assert re.fullmatch(r"\d+\.\d+\.\d+([.-]?\w+)?", singletable.__version__)
    try:
        installed = version("singletable")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return
    assert installed == singletable.__version__


def test_public_classes_name_the_module_users_import_them_from() -> None:
    for name in singletable.__all__:
        value = getattr(singletable, name)
        if not hasattr(value, "__module__") or isinstance(value, str):
            continue
        expected = "singletable.errors" if name.endswith("Error") else "singletable"
        assert value.__module__ == expected, name
        assert getattr(importlib.import_module(value.__module__), name) is value


@pytest.mark.parametrize(
    "module",
    [
        "singletable.attributes",
        "singletable.errors",
        "singletable.expressions",
        "singletable.io",
        "singletable.keys",
        "singletable.model",
        "singletable.operations",
    ],
)
def test_public_submodules_export_what_they_define(module: str) -> None:
    mod = importlib.import_module(module)
    names = getattr(mod, "__all__", None) or [
        n for n in vars(mod) if not n.startswith("_") and isinstance(vars(mod)[n], type)
    ]
    assert names, module
    for name in names:
        assert getattr(mod, name) is not None, (module, name)
