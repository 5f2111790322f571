"""Where a test run's tables live: moto, DynamoDB Local or any endpoint.

moto runs in-process or as a loopback server; DynamoDB Local is an endpoint or is
started for the session.

The pytest plugin (`singletable.testing.plugin`) builds one `Backend` per session; code
outside pytest can use it too::

    with open_backend("moto-server") as backend:
        db = backend.connection()
"""

from __future__ import annotations

import contextlib
import ipaddress
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3

from singletable.errors import ConfigurationError
from singletable.io import AsyncConnection, Connection
from singletable.io.embedded import embedded_server
from singletable.model.table import Table
from singletable.testing.local import dynamodb_local

__all__ = [
    "BACKENDS",
    "Backend",
    "clear_tables",
    "create_tables",
    "loopback_endpoint",
    "open_backend",
    "serialise_moto",
]

#: ``moto``: in-process mock; ``moto-server``: moto on a loopback port; ``dynamodb-local``:
#: an endpoint on loopback (``$SINGLETABLE_ENDPOINT``) or one started for the session;
#: ``endpoint``: any endpoint, with the credentials of the environment.
BACKENDS = ("moto", "moto-server", "dynamodb-local", "endpoint")
REGION = "us-east-1"
#: DynamoDB Local keeps one database per (access key, region) unless started with
#: -sharedDb: every client of a run uses these (``scripts/dynamodb-local`` exports them).
LOCAL_CREDENTIALS = ("local", "local")
_MOTO_CREDENTIALS = ("testing", "testing")
#: Variables that would send a test's clients elsewhere or sign with real credentials.
_AMBIENT = (
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_DYNAMODB",
)


def loopback_endpoint(endpoint: str, *, what: str) -> str:
    """``endpoint`` if its host is a loopback address.

    Raises:
        ConfigurationError: It is not (``what`` names the setting in the message).
    """
    host = urlsplit(endpoint).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ConfigurationError(f"{what} must be a loopback address, got {endpoint!r}")
    return endpoint


def serialise_moto() -> None:
    """Make moto handle one request at a time, in-process and behind its server alike.

    moto's backends take no lock: two threads can interleave inside one request (a
    conditional put checked, another thread's ADD, then the put stored), and a cancelled
    TransactWriteItems restores a copy of the whole table taken before it, erasing what
    other threads wrote meanwhile. DynamoDB makes each request atomic; a lock around
    moto's request handler (every service's, the one place both paths go through) gives
    tests that run threads on moto that much, and leaves moto's answers as they are.
    """
    from moto.core.responses import BaseResponse

    if getattr(BaseResponse.call_action, "singletable_serialised", False):
        return
    handle = BaseResponse.call_action
    lock = threading.RLock()

    def call_action(self: BaseResponse) -> Any:
        with lock:
            return handle(self)

    call_action.singletable_serialised = True  # type: ignore[attr-defined]
    BaseResponse.call_action = call_action  # type: ignore[method-assign]


@dataclass
class Backend:
    """One test session's DynamoDB: how to reach it and what its clients need.

    Attributes:
        kind: One of `BACKENDS`.
        endpoint: The endpoint URL, or ``None`` for the in-process mock.
        environment: The variables a test's own clients need (credentials, region,
            endpoint); ``None`` removes one. The plugin sets them for each test.
        suffix: Appended to each table's name while the session uses it, on shared
            endpoints, so a run never touches a table of the same name (``""`` on moto).
    """

    kind: str
    endpoint: str | None
    environment: dict[str, str | None]
    suffix: str = ""
    _renamed: dict[int, tuple[Table, str]] = field(default_factory=dict, repr=False)
    _session: boto3.Session | None = field(default=None, repr=False)

    def _credentials(self) -> tuple[str, str] | None:
        key = self.environment.get("AWS_ACCESS_KEY_ID")
        secret = self.environment.get("AWS_SECRET_ACCESS_KEY")
        return (key, secret) if key and secret else None

    def connection(self, *, transport: Any = None) -> Connection:
        """A new `Connection` to this backend (``transport``: as `Connection`'s)."""
        if self._session is None:
            # One session for the run: a client from a warm session takes milliseconds,
            # from a new one 50-150 ms (and the in-process backend makes one per test).
            credentials = self._credentials()
            self._session = boto3.Session(
                aws_access_key_id=credentials[0] if credentials else None,
                aws_secret_access_key=credentials[1] if credentials else None,
                region_name=self.environment.get("AWS_DEFAULT_REGION") or None,
            )
        session = self._session
        return Connection(session=session, endpoint_url=self.endpoint, transport=transport)

    def async_connection(self) -> AsyncConnection:
        """A new, unopened `AsyncConnection` to this backend (needs an HTTP endpoint).

        Raises:
            ConfigurationError: The backend is the in-process mock, which aiobotocore's
                requests never reach (use ``moto-server``).
        """
        if self.endpoint is None:
            raise ConfigurationError(
                "AsyncConnection cannot reach the in-process moto mock: run with "
                "--singletable-backend moto-server (the plugin does so for async fixtures)"
            )
        from aiobotocore.session import get_session

        session = get_session()
        credentials = self._credentials()
        if credentials is not None:
            session.set_credentials(*credentials)
        return AsyncConnection(
            session=session,
            endpoint_url=self.endpoint,
            region_name=self.environment.get("AWS_DEFAULT_REGION") or REGION,
        )

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """The backend switched on: moto's in-process mock, for ``kind == "moto"``.

        The mock is global to the process: kept to the block, so that tests of the same
        run that start moto themselves get a fresh one (moto resets its data only when
        the outermost mock starts).
        """
        if self.endpoint is not None:
            yield
            return
        from moto import mock_aws

        with mock_aws():
            yield

    def adopt(self, tables: Iterable[Table]) -> None:
        """Give ``tables`` this session's names (the model's name plus `suffix`)."""
        for table in tables:
            if self.suffix and id(table) not in self._renamed:
                self._renamed[id(table)] = (table, table.name)
                table.name = f"{table.name}{self.suffix}"

    def release(self) -> None:
        """Give every adopted table its model name back."""
        for table, name in self._renamed.values():
            table.name = name
        self._renamed.clear()


def create_tables(db: Connection, tables: Iterable[Table]) -> None:
    """Create each table that does not exist yet."""
    for table in tables:
        if not db.table_exists(table):
            db.create_table(table)


def clear_tables(db: Connection, tables: Iterable[Table]) -> int:
    """Delete every item of ``tables`` (entities, guards, job records); returns the count.

    Cheaper than deleting and creating the tables for the few items a test writes, and
    it keeps the tables' indexes and settings.
    """
    deleted = 0
    for table in tables:
        keys = [a for a in (table.pk, table.sk) if a is not None]
        params: dict[str, Any] = {
            "TableName": table.name,
            "ProjectionExpression": ", ".join(f"#k{i}" for i in range(len(keys))),
            "ExpressionAttributeNames": {f"#k{i}": k for i, k in enumerate(keys)},
            "ConsistentRead": True,
        }
        while True:
            page = db.call("scan", params)
            items = page.get("Items", [])
            for start in range(0, len(items), 25):
                requests = [{"DeleteRequest": {"Key": k}} for k in items[start : start + 25]]
                _write_all(db, {table.name: requests})
            deleted += len(items)
            if "LastEvaluatedKey" not in page:
                break
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return deleted


def _write_all(db: Connection, requests: Mapping[str, list[Any]]) -> None:
    pending = dict(requests)
    while pending:
        pending = db.call("batch_write_item", {"RequestItems": pending}).get("UnprocessedItems", {})


def _fake_environment(credentials: tuple[str, str], endpoint: str | None) -> dict[str, str | None]:
    environment: dict[str, str | None] = dict.fromkeys(_AMBIENT)
    environment.update(
        AWS_ACCESS_KEY_ID=credentials[0],
        AWS_SECRET_ACCESS_KEY=credentials[1],
        AWS_DEFAULT_REGION=REGION,
        AWS_REGION=REGION,
    )
    if endpoint is not None:
        # Clients the code under test builds itself reach the same backend.
        environment["AWS_ENDPOINT_URL"] = endpoint
    return environment


@contextlib.contextmanager
def open_backend(
    kind: str,
    *,
    endpoint: str | None = None,
    dynamodb_local_dir: str | Path | None = None,
) -> Iterator[Backend]:
    """The backend ``kind`` (one of `BACKENDS`) for a session; stopped on exit.

    Args:
        kind: Which backend.
        endpoint: ``dynamodb-local``: a running DynamoDB Local on loopback (else one is
            started from ``dynamodb_local_dir``); ``endpoint``: the endpoint (required).
        dynamodb_local_dir: Where DynamoDB Local is installed, to start it for the session.

    Raises:
        ConfigurationError: An unknown kind, or a setting the kind needs is missing.
    """
    if kind not in BACKENDS:
        raise ConfigurationError(f"backend must be one of {BACKENDS}, got {kind!r}")
    suffix = f"-t{uuid.uuid4().hex[:8]}"
    if kind in ("moto", "moto-server"):
        try:
            import moto  # noqa: F401 - only to say what is missing, before starting
        except ImportError:
            raise ConfigurationError(
                f"the {kind} backend needs moto: pip install 'singletable[testing]'"
            ) from None
    if kind == "moto":
        serialise_moto()
        # Nothing runs yet: `Backend.active` starts the mock where a fixture needs it.
        yield Backend(kind, None, _fake_environment(_MOTO_CREDENTIALS, None))
    elif kind == "moto-server":
        serialise_moto()
        with embedded_server() as server:
            environment = _fake_environment(_MOTO_CREDENTIALS, server.endpoint)
            yield Backend(kind, server.endpoint, environment)
    elif kind == "dynamodb-local":
        with contextlib.ExitStack() as stack:
            if endpoint is not None:
                loopback_endpoint(endpoint, what="the DynamoDB Local endpoint")
            elif dynamodb_local_dir is not None:
                endpoint = stack.enter_context(dynamodb_local(dynamodb_local_dir))
            else:
                raise ConfigurationError(
                    "the dynamodb-local backend needs an endpoint (--singletable-endpoint, "
                    "$SINGLETABLE_ENDPOINT: `scripts/dynamodb-local run -- pytest ...` sets it) "
                    "or an installation to start (--singletable-dynamodb-local DIR, "
                    "$DYNAMODB_LOCAL_DIR)"
                )
            yield Backend(kind, endpoint, _fake_environment(LOCAL_CREDENTIALS, endpoint), suffix)
    else:
        if endpoint is None:
            raise ConfigurationError(
                "the endpoint backend needs --singletable-endpoint or $SINGLETABLE_ENDPOINT"
            )
        # Real credentials and region come from the environment, as for any client.
        yield Backend(kind, endpoint, {"AWS_ENDPOINT_URL": endpoint}, suffix)
