"""An in-memory DynamoDB (moto) for tests, notebooks and the demo.

moto is an optional dependency (``pip install singletable[embedded]``); it runs in this
process, needs no network and no credentials, and forgets everything when closed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from singletable.errors import SingleTableError
from singletable.io.connection import Connection
from singletable.model.table import Table

_FAKE_ENV = {
    "AWS_ACCESS_KEY_ID": "embedded",
    "AWS_SECRET_ACCESS_KEY": "embedded",
    "AWS_SESSION_TOKEN": "embedded",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@contextmanager
def embedded(*tables: Table, region_name: str = "us-east-1") -> Iterator[Connection]:
    """A `Connection` to a fresh in-memory DynamoDB, with ``tables`` already created.

    Example::

        with singletable.embedded(app) as db:
            AuditEvent.put(event).run(db)
    """
    try:
        from moto import mock_aws
    except ImportError:  # pragma: no cover - depends on the installation
        raise SingleTableError(
            "the embedded backend needs moto: pip install 'singletable[embedded]'"
        ) from None
    saved: dict[str, Any] = {k: os.environ.get(k) for k in _FAKE_ENV}
    # Fake credentials keep botocore from looking for real ones (and from signing
    # requests with them): moto intercepts every call in-process.
    os.environ.update(_FAKE_ENV)
    try:
        with mock_aws():
            db = Connection(region_name=region_name)
            for table in tables:
                db.create_table(table)
            yield db
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
