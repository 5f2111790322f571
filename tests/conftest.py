"""Test backends: moto (in-process, the default) or DynamoDB Local (Amazon's emulator).

The backend is chosen with ``--backend moto|dynamodb-local`` (default: the environment
variable ``SINGLETABLE_BACKEND``, else ``moto``). ``scripts/dynamodb-local run -- CMD``
starts DynamoDB Local in a private network namespace and exports
``SINGLETABLE_BACKEND=dynamodb-local`` and ``SINGLETABLE_ENDPOINT``, so

    python3 -m pytest                                       # whole suite, moto
    scripts/dynamodb-local run -- python3 -m pytest tests/integration --backend dynamodb-local

Tests under ``tests/integration`` are the ones the DynamoDB Local tier runs; they get a
raw boto3 client from ``dynamodb_client``, a fresh table name from ``table_name``, and
their executor from ``tests.integration._executors.connect``.

The executor is chosen with ``--executor sync|async|both`` (default:
``$SINGLETABLE_EXECUTOR``, else ``sync``). ``async`` runs every integration test through
`singletable.AsyncConnection` (aiobotocore) instead of `singletable.Connection`; ``both``
parametrises each one as ``[sync]`` and ``[async]``. moto's in-process mock does not see
aiobotocore's HTTP, so on the moto backend the async tests talk to a moto *server*
(``ThreadedMotoServer`` on a free loopback port, reset before each test)::

    python3 -m pytest tests/integration --executor async

The sync executor's transport is chosen with ``--transport boto3|lean`` (default:
``$SINGLETABLE_TRANSPORT``, else ``boto3``); the option sets ``SINGLETABLE_TRANSPORT`` for
the session, which every `singletable.Connection` reads. The lean transport speaks HTTP
itself (past the in-process mock), so on moto it runs against the moto server too::

    python3 -m pytest tests/integration --transport lean
    scripts/dynamodb-local run -- python3 -m pytest tests/integration \
        --backend dynamodb-local --transport lean

The rule: every integration test passes on BOTH backends. Only a test whose whole point
is a backend quirk (moto accepting a 26-item BatchWriteItem, DynamoDB Local reporting
real ConsumedCapacity, ...) carries ``@pytest.mark.moto_only`` or
``@pytest.mark.dynamodb_local_only``; it is skipped, with a reason, on the other
backend. When a test fails on one backend only, fix the code or the test rather than
reaching for these markers, unless the difference is the backend's, not ours.
"""

from __future__ import annotations

import gc
import os
import re
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import boto3
import botocore.handlers
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

# Imported before any boto3 session exists: importing moto appends its request hook to
# botocore's BUILTIN_HANDLERS, which a session copies when it is created. A session made
# before that import is never mocked and sends its requests to the real AWS endpoint.
from moto import mock_aws

from singletable.errors import ConfigurationError
from singletable.io.embedded import EmbeddedServer, embedded_server
from singletable.testing.backends import LOCAL_CREDENTIALS, loopback_endpoint, serialise_moto

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

BACKENDS = ("moto", "dynamodb-local")
EXECUTOR_CHOICES = ("sync", "async", "both")
TRANSPORTS = ("boto3", "lean")
REGION = "us-east-1"
# The credentials scripts/dynamodb-local exports. DynamoDB Local keeps one database per
# (access key, region) unless started with -sharedDb, so every client must use these.
LOCAL_ACCESS_KEY, LOCAL_SECRET_KEY = LOCAL_CREDENTIALS
MARKERS = {
    "moto_only": "moto",
    "dynamodb_local_only": "dynamodb-local",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("singletable", "singletable test backends")
    group.addoption(
        "--backend",
        choices=BACKENDS,
        default=os.environ.get("SINGLETABLE_BACKEND") or "moto",
        help="DynamoDB backend for integration tests (default: $SINGLETABLE_BACKEND, else moto). "
        "dynamodb-local needs $SINGLETABLE_ENDPOINT: run under scripts/dynamodb-local run -- ...",
    )
    group.addoption(
        "--executor",
        choices=EXECUTOR_CHOICES,
        default=os.environ.get("SINGLETABLE_EXECUTOR") or "sync",
        help="executor for integration tests: sync Connection, async AsyncConnection, or both "
        "(default: $SINGLETABLE_EXECUTOR, else sync)",
    )
    group.addoption(
        "--deploy-tools",
        action="store_true",
        default=os.environ.get("SINGLETABLE_DEPLOY_TOOLS") == "1",
        help="also run the deploy_tools tests: `cdk synth` and `terraform validate` for real "
        "(see tests/tooling/definitions/test_deploy_tools.py; default: $SINGLETABLE_DEPLOY_TOOLS)",
    )
    group.addoption(
        "--transport",
        choices=TRANSPORTS,
        default=os.environ.get("SINGLETABLE_TRANSPORT") or "boto3",
        help="how singletable.Connection sends calls (default: $SINGLETABLE_TRANSPORT, else "
        "boto3); lean on the moto backend runs against a moto server over HTTP",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "moto_only(reason): documents a moto quirk; skipped on every other backend",
    )
    config.addinivalue_line(
        "markers",
        "dynamodb_local_only(reason): asserts DynamoDB Local (real DynamoDB) behaviour "
        "that moto does not reproduce; skipped on every other backend",
    )
    config.addinivalue_line(
        "markers",
        "executor_independent(reason): the test never asks for the executor under test "
        "(it builds its own connections, or none); run once, on [sync], and not in an "
        "--executor async run. Calling connect() under it fails the test",
    )
    backend = config.getoption("backend")
    if backend not in BACKENDS:  # a bad $SINGLETABLE_BACKEND bypasses argparse's choices
        raise pytest.UsageError(
            f"--backend / SINGLETABLE_BACKEND must be one of {BACKENDS}, got {backend!r}"
        )
    if backend == "dynamodb-local":
        _local_endpoint()  # fail at startup, not in the first test
    if config.getoption("executor") not in EXECUTOR_CHOICES:
        raise pytest.UsageError(
            f"--executor / SINGLETABLE_EXECUTOR must be one of {EXECUTOR_CHOICES}, "
            f"got {config.getoption('executor')!r}"
        )
    transport = config.getoption("transport")
    if transport not in TRANSPORTS:
        raise pytest.UsageError(
            f"--transport / SINGLETABLE_TRANSPORT must be one of {TRANSPORTS}, got {transport!r}"
        )
    # Every Connection the tests build reads it (an explicit transport= still wins).
    os.environ["SINGLETABLE_TRANSPORT"] = transport


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # Every integration test runs on the executor(s) chosen: one suite, not a copy.
    if "executor_kind" not in metafunc.fixturenames:
        return
    chosen = metafunc.config.getoption("executor")
    if chosen == "sync" or metafunc.definition.get_closest_marker("executor_independent"):
        # Unparametrised: test ids stay as they were, and a test that never reaches the
        # executor is not run a second time to check nothing new.
        return
    kinds = ["sync", "async"] if chosen == "both" else [chosen]
    metafunc.parametrize("executor_kind", kinds, indirect=True)


def _deselect_marked(config: pytest.Config, items: list[pytest.Item], marker: str) -> None:
    """Drop the items carrying ``marker`` and report them deselected (not skipped)."""
    marked = [item for item in items if item.get_closest_marker(marker)]
    if marked:
        config.hook.pytest_deselected(items=marked)
        items[:] = [item for item in items if not item.get_closest_marker(marker)]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("executor") == "async":
        # What they check ran on the sync tier, and nothing in them differs on this one.
        _deselect_marked(config, items, "executor_independent")
    if not config.getoption("deploy_tools"):
        # Opt-in: the tools are a large install that the default suite does not make (the
        # structural tests beside them always run).
        _deselect_marked(config, items, "deploy_tools")
    backend = config.getoption("backend")
    for item in items:
        wanted = [(name, only) for name, only in MARKERS.items() if item.get_closest_marker(name)]
        if len(wanted) > 1:
            raise pytest.UsageError(
                f"{item.nodeid}: moto_only and dynamodb_local_only exclude each other"
            )
        for name, only in wanted:
            if backend != only:
                marker = item.get_closest_marker(name)
                why = f": {marker.args[0]}" if marker is not None and marker.args else ""
                item.add_marker(pytest.mark.skip(reason=f"{only} only, backend is {backend}{why}"))


def _local_endpoint() -> str:
    endpoint = os.environ.get("SINGLETABLE_ENDPOINT", "")
    if not endpoint:
        raise pytest.UsageError(
            "--backend dynamodb-local needs SINGLETABLE_ENDPOINT; run the tests under "
            "`scripts/dynamodb-local run -- python3 -m pytest tests/integration "
            "--backend dynamodb-local`"
        )
    try:
        return loopback_endpoint(endpoint, what="SINGLETABLE_ENDPOINT")
    except ConfigurationError as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.fixture(scope="session")
def backend_name(pytestconfig: pytest.Config) -> str:
    """``"moto"`` or ``"dynamodb-local"``."""
    return str(pytestconfig.getoption("backend"))


@pytest.fixture(scope="session")
def dynamodb_endpoint(backend_name: str) -> str | None:
    """The DynamoDB Local endpoint URL, or ``None`` on moto (boto3's default endpoint, mocked)."""
    return _local_endpoint() if backend_name == "dynamodb-local" else None


@pytest.fixture(scope="session")
def _dynamodb_local_client(dynamodb_endpoint: str | None) -> DynamoDBClient | None:
    if dynamodb_endpoint is None:
        return None
    return boto3.client(
        "dynamodb",
        endpoint_url=dynamodb_endpoint,
        region_name=REGION,
        aws_access_key_id=LOCAL_ACCESS_KEY,
        aws_secret_access_key=LOCAL_SECRET_KEY,
        config=Config(
            connect_timeout=5,
            read_timeout=60,
            retries={"mode": "standard", "max_attempts": 3},
        ),
    )


serialise_moto()


@pytest.fixture(scope="session")
def _moto_session() -> boto3.Session:
    # One session for all moto tests: a client from a warm session takes ~3 ms, one from
    # boto3.client() after mock_aws() reset the default session 50-150 ms.
    # Belt and braces for the import above: never let a "moto" test reach a real endpoint.
    if not any(
        type(h[1]).__module__.startswith("moto.") for h in botocore.handlers.BUILTIN_HANDLERS
    ):
        raise RuntimeError("moto's botocore hook is not installed: refusing to make a session")
    return boto3.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION
    )


@pytest.fixture(scope="session")
def transport_name(pytestconfig: pytest.Config) -> str:
    """``"boto3"`` or ``"lean"``: the transport every `Connection` in the tests uses."""
    return str(pytestconfig.getoption("transport"))


@pytest.fixture
def executor_kind(request: pytest.FixtureRequest) -> str:
    """``"sync"`` or ``"async"``: the executor ``tests.integration._executors.connect`` builds."""
    return str(getattr(request, "param", "sync"))


@pytest.fixture
def default_collector() -> Iterator[None]:
    """The cyclic collector on, at the interpreter's default thresholds, nothing due.

    For tests about when it runs: mypy, run in-process by the typing tests, raises the
    first threshold to 200,000 and leaves it so. Restored afterwards.
    """
    enabled, thresholds = gc.isenabled(), gc.get_threshold()
    gc.enable()
    gc.set_threshold(700, 10, 10)
    gc.collect()  # counts from zero: no collection is due as the test starts
    yield
    gc.set_threshold(*thresholds)
    if not enabled:
        gc.disable()


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    """A moto server on a free loopback port (for aiobotocore); yields its endpoint URL."""
    with embedded_server() as server:
        yield server.endpoint


def reset_moto_server(endpoint: str) -> None:
    """Forget every table on the moto server (a fresh account, as ``mock_aws()`` gives)."""
    EmbeddedServer(endpoint).reset()


@pytest.fixture
def dynamodb_client(
    _dynamodb_local_client: DynamoDBClient | None,
    _moto_session: boto3.Session,
    monkeypatch: pytest.MonkeyPatch,
    executor_kind: str,
    transport_name: str,
    request: pytest.FixtureRequest,
) -> Iterator[DynamoDBClient]:
    """A raw boto3 DynamoDB client on the selected backend, with an empty account per test.

    moto: a fresh ``mock_aws()`` per test (cheap; every table vanishes with it), and dummy
    credentials and region in the environment for clients the code under test makes itself.
    DynamoDB Local: one client for the session; isolation comes from ``table_name``.
    """
    if _dynamodb_local_client is not None:
        yield _dynamodb_local_client
        return
    for var in (
        "AWS_PROFILE",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_DYNAMODB",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    if executor_kind == "async" or transport_name == "lean":
        # aiobotocore's requests, and the lean transport's, bypass the in-process mock:
        # serve every client from a moto server, emptied before the test like a fresh
        # mock_aws().
        endpoint = request.getfixturevalue("moto_server")
        reset_moto_server(endpoint)
        # Clients the code under test builds itself (the CLI, a streams client) must
        # reach the same server: botocore reads the endpoint from the environment.
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        yield _moto_session.client("dynamodb", endpoint_url=endpoint)
        return
    with mock_aws():
        yield _moto_session.client("dynamodb")


@pytest.fixture
def table_name(
    request: pytest.FixtureRequest, backend_name: str, dynamodb_client: DynamoDBClient
) -> Iterator[str]:
    """A table name unique to this test; the table, if created, is deleted afterwards."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")[:60]
    name = f"st-{stem}-{uuid.uuid4().hex[:8]}"
    yield name
    if backend_name == "dynamodb-local":
        try:
            dynamodb_client.delete_table(TableName=name)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                raise
