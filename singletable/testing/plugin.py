"""The pytest plugin of singletable's test kit (entry point ``singletable.testing.plugin``).

Installed with the ``testing`` extra (``pip install 'singletable[testing]'``). It adds
command-line options, an ini setting and fixtures; it imports neither moto nor
hypothesis until a fixture needs them, so it never breaks a run that uses none.

Options (each defaults to an environment variable, so ``scripts/dynamodb-local run --
pytest`` needs none):

* ``--singletable-backend moto|moto-server|dynamodb-local|endpoint``
  (``$SINGLETABLE_BACKEND``, else ``moto``);
* ``--singletable-endpoint URL`` (``$SINGLETABLE_ENDPOINT``);
* ``--singletable-dynamodb-local DIR`` (``$DYNAMODB_LOCAL_DIR``): start DynamoDB Local
  from this installation for the session when no endpoint is given;
* ``--singletable-transport boto3|lean`` (``$SINGLETABLE_TRANSPORT``, else boto3).

Fixtures: ``singletable_backend`` (session), ``singletable_tables`` (the model's tables:
the ini setting ``singletable_tables``, or override it), ``singletable_session_db``
(session: tables created once, data kept between tests), ``singletable_db`` (function:
the same tables, emptied before the test), ``singletable_async_db`` (function, an open
`AsyncConnection` on the same tables, emptied) and ``singletable_env`` (function: the
credentials, region and endpoint the code under test needs to build its own clients).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from typing import Any

import pytest

from singletable.errors import SingleTableError
from singletable.io import AsyncConnection, Connection
from singletable.model.table import Table
from singletable.testing.backends import (
    BACKENDS,
    Backend,
    clear_tables,
    create_tables,
    open_backend,
)

__all__ = [
    "singletable_async_db",
    "singletable_backend",
    "singletable_db",
    "singletable_env",
    "singletable_session_db",
    "singletable_tables",
]

_TRANSPORTS = ("boto3", "lean")


def pytest_addoption(parser: pytest.Parser) -> None:
    """The options and the ini setting of the kit."""
    group = parser.getgroup("singletable", "singletable test kit")
    group.addoption(
        "--singletable-backend",
        default=None,
        help=f"where the singletable fixtures create tables: one of {', '.join(BACKENDS)} "
        "(default: $SINGLETABLE_BACKEND, else moto)",
    )
    group.addoption(
        "--singletable-endpoint",
        default=None,
        help="the DynamoDB Local or other endpoint URL (default: $SINGLETABLE_ENDPOINT)",
    )
    group.addoption(
        "--singletable-dynamodb-local",
        default=None,
        metavar="DIR",
        help="start DynamoDB Local from this installation for the session, confined to "
        "loopback (default: $DYNAMODB_LOCAL_DIR)",
    )
    group.addoption(
        "--singletable-transport",
        default=None,
        help="the Connection transport, boto3 or lean (default: $SINGLETABLE_TRANSPORT, "
        "else boto3); lean on moto runs a moto server",
    )
    parser.addini(
        "singletable_tables",
        type="linelist",
        default=[],
        help="the tables the singletable fixtures create: module:attribute, each a Table "
        "or a list of them",
    )


def _setting(config: pytest.Config, option: str, variable: str, default: str | None) -> str | None:
    value = config.getoption(option)
    return str(value) if value else os.environ.get(variable) or default


def pytest_configure(config: pytest.Config) -> None:
    """Refuse a bad backend or transport at startup, not in the first test."""
    backend = _setting(config, "singletable_backend", "SINGLETABLE_BACKEND", "moto")
    if backend not in BACKENDS:
        raise pytest.UsageError(
            f"--singletable-backend / $SINGLETABLE_BACKEND must be one of {BACKENDS}, "
            f"got {backend!r}"
        )
    transport = _setting(config, "singletable_transport", "SINGLETABLE_TRANSPORT", "boto3")
    if transport not in _TRANSPORTS:
        raise pytest.UsageError(
            f"--singletable-transport / $SINGLETABLE_TRANSPORT must be one of {_TRANSPORTS}, "
            f"got {transport!r}"
        )


def _transport(config: pytest.Config) -> Any:
    return _setting(config, "singletable_transport", "SINGLETABLE_TRANSPORT", "boto3")


@pytest.fixture(scope="session")
def singletable_backend(pytestconfig: pytest.Config) -> Iterator[Backend]:
    """The session's backend (see `singletable.testing.backends.open_backend`)."""
    kind = _setting(pytestconfig, "singletable_backend", "SINGLETABLE_BACKEND", "moto")
    if kind == "moto" and _transport(pytestconfig) == "lean":
        kind = "moto-server"  # the lean transport speaks HTTP, past the in-process mock
    try:
        with open_backend(
            str(kind),
            endpoint=_setting(pytestconfig, "singletable_endpoint", "SINGLETABLE_ENDPOINT", None),
            dynamodb_local_dir=_setting(
                pytestconfig, "singletable_dynamodb_local", "DYNAMODB_LOCAL_DIR", None
            ),
        ) as backend:
            yield backend
    except SingleTableError as exc:  # a setting missing, DynamoDB Local not startable
        pytest.fail(f"singletable backend: {exc}", pytrace=False)


def _tables_from(reference: str) -> list[Table]:
    module, _, attribute = reference.partition(":")
    if not attribute:
        raise pytest.UsageError(
            f"singletable_tables: {reference!r} is not module:attribute (e.g. myapp.model:table)"
        )
    value = getattr(importlib.import_module(module), attribute)
    tables = [value] if isinstance(value, Table) else list(value)
    for table in tables:
        if not isinstance(table, Table):
            raise pytest.UsageError(f"singletable_tables: {reference} holds {table!r}, not a Table")
    return tables


@pytest.fixture(scope="session")
def singletable_tables(pytestconfig: pytest.Config) -> list[Table]:
    """The tables the fixtures create: the ini setting ``singletable_tables``.

    Override it in a ``conftest.py`` to name them in code::

        @pytest.fixture(scope="session")
        def singletable_tables() -> list[Table]:
            return [app_table]
    """
    references = pytestconfig.getini("singletable_tables")
    if not references:
        pytest.fail(
            "the singletable fixtures need the model's tables: set `singletable_tables = "
            "myapp.model:table` in the pytest ini, or override the `singletable_tables` fixture",
            pytrace=False,
        )
    return [table for reference in references for table in _tables_from(reference)]


@pytest.fixture(scope="session")
def singletable_session_db(
    singletable_backend: Backend, singletable_tables: list[Table], pytestconfig: pytest.Config
) -> Iterator[Connection]:
    """A `Connection` for the whole session; the tables are created once, data is kept.

    On DynamoDB Local and other endpoints each table gets a name of its own for the
    session (the model's name plus `Backend.suffix`) and is deleted at the end. On the
    in-process ``moto`` backend this keeps moto's mock on from the first test that asks
    for it to the end of the session.
    """
    with singletable_backend.active():
        db = singletable_backend.connection(transport=_transport(pytestconfig))
        singletable_backend.adopt(singletable_tables)
        try:
            create_tables(db, singletable_tables)
            yield db
        finally:
            try:
                if singletable_backend.suffix:
                    for table in singletable_tables:
                        if db.table_exists(table):
                            db.delete_table(table)
            finally:
                singletable_backend.release()


@pytest.fixture
def singletable_env(singletable_backend: Backend, monkeypatch: pytest.MonkeyPatch) -> Backend:
    """Credentials, region and endpoint in the environment for the test's duration.

    So clients that the code under test builds itself (``Connection()``, a FastAPI app's
    lifespan, worker processes) reach the session's backend.
    """
    for name, value in singletable_backend.environment.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    return singletable_backend


@pytest.fixture
def singletable_db(
    singletable_backend: Backend,
    singletable_tables: list[Table],
    singletable_env: Backend,
    request: pytest.FixtureRequest,
) -> Iterator[Connection]:
    """A `Connection` whose tables hold nothing when the test starts (meter at zero).

    In-process ``moto``: a fresh mock for the test, tables created in it (milliseconds).
    Elsewhere: the session's connection and tables, emptied (a scan per table and a
    delete per item left by an earlier test), so no table is created again and no
    server restarted.
    """
    if singletable_backend.endpoint is None:
        with singletable_backend.active():
            db = singletable_backend.connection(transport=_transport(request.config))
            create_tables(db, singletable_tables)
            yield db
        return
    db = request.getfixturevalue("singletable_session_db")
    create_tables(db, singletable_tables)  # again: a test may have deleted one
    clear_tables(db, singletable_tables)
    db.meter.reset()
    yield db


@pytest.fixture(scope="session")
def _singletable_http_db(
    singletable_backend: Backend, singletable_tables: list[Table], request: pytest.FixtureRequest
) -> Iterator[tuple[Backend, Connection]]:
    # aiobotocore's requests never reach the in-process mock: give async tests a moto
    # server of their own on that backend; every other backend already has an endpoint.
    if singletable_backend.endpoint is not None:
        yield singletable_backend, request.getfixturevalue("singletable_session_db")
        return
    with open_backend("moto-server") as server:
        db = server.connection()
        create_tables(db, singletable_tables)
        yield server, db


@pytest.fixture
def singletable_async_db(
    _singletable_http_db: tuple[Backend, Connection],
    singletable_tables: list[Table],
    singletable_env: Backend,
) -> AsyncConnection:
    """An `AsyncConnection` to the tables, emptied before this test; not yet open.

    Open it in the test, on the test's own event loop (``async with
    singletable_async_db as adb:``): the fixture is synchronous, so it works with any
    async test runner, or none (``asyncio.run`` in the test).
    On the in-process ``moto`` backend it talks to a moto server of its own (aiobotocore
    is not seen by the mock); run with ``--singletable-backend moto-server`` for one
    backend shared by the sync and async fixtures.
    """
    backend, db = _singletable_http_db
    create_tables(db, singletable_tables)
    clear_tables(db, singletable_tables)
    return backend.async_connection()
