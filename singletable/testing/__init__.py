"""A test kit for applications built on singletable (the ``testing`` extra).

* `singletable.testing.plugin`: the pytest plugin (fixtures for tables on moto, DynamoDB
  Local or any endpoint); registered through the ``pytest11`` entry point.
* `singletable.testing.strategies`: hypothesis strategies (`instances`, `items`).
* here: the request recorder and the assertions on what was sent (`record`,
  `assert_single_query`, `assert_max_capacity`, `assert_no_scan`), and the backends
  (`open_backend`, `dynamodb_local`) for code outside pytest.
"""

from singletable.testing.backends import Backend, open_backend
from singletable.testing.local import DynamoDBLocalError, dynamodb_local
from singletable.testing.recorder import (
    Recorded,
    Request,
    assert_max_capacity,
    assert_no_scan,
    assert_single_query,
    record,
)

__all__ = [
    "Backend",
    "DynamoDBLocalError",
    "Recorded",
    "Request",
    "assert_max_capacity",
    "assert_no_scan",
    "assert_single_query",
    "dynamodb_local",
    "open_backend",
    "record",
]
