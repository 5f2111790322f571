"""An in-memory DynamoDB (moto) for tests, notebooks and the demo.

moto is an optional dependency (``pip install singletable[embedded]``); it runs in this
process, needs no network and no credentials, and forgets everything when closed.
`embedded_server` serves the same over HTTP on a loopback port (moto's server mode, the
``server`` extra of moto) for clients whose requests the in-process mock never sees:
`AsyncConnection` (aiobotocore) and the lean transport.
"""

from __future__ import annotations

import logging
import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from singletable.errors import SingleTableError
from singletable.io.connection import Connection
from singletable.model.table import Table
from singletable.types import frozen_dataclass

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


@frozen_dataclass
class EmbeddedServer:
    """A moto server on a loopback port (see `embedded_server`)."""

    #: ``http://127.0.0.1:<port>``.
    endpoint: str

    def reset(self) -> None:
        """Forget every table (a fresh account, as a new ``mock_aws()`` gives)."""
        request = urllib.request.Request(f"{self.endpoint}/moto-api/reset", method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()


@contextmanager
def embedded_server() -> Iterator[EmbeddedServer]:
    """A moto server on a free port of 127.0.0.1, stopped on exit.

    Any client reaches it with ``endpoint_url=server.endpoint`` and any credentials.
    """
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:  # pragma: no cover - depends on the installation
        raise SingleTableError(
            "the embedded server needs moto's server mode: pip install 'moto[dynamodb,server]'"
        ) from None
    # werkzeug logs every request to stderr; callers read responses, not logs.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield EmbeddedServer(f"http://{host}:{port}")
    finally:
        server.stop()
