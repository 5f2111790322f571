"""Running the browser: the connection, the loopback-only socket and uvicorn.

The app binds 127.0.0.1 unless a host is named explicitly; a non-loopback host prints a
warning, since the pages show (and with ``--allow-writes`` change) the table's data to
anyone who can reach the port. Requests whose ``Host`` header is not the bound address
are refused (a DNS-rebinding page cannot talk to the browser through another name).
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Sequence
from typing import TextIO
from urllib.parse import urlsplit

import uvicorn

from singletable.io.connection import Connection
from singletable.model.table import Table
from singletable.operations.collection import Collection
from singletable.tooling.browser.app import BrowserConfig, create_app, guard_hosts

__all__ = ["bind", "endpoint_label", "is_loopback", "serve"]

LOOPBACK = "127.0.0.1"
_LOCAL_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost`` or a loopback address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def endpoint_label(endpoint: str | None, region: str | None) -> str:
    """How pages name the backend: scheme, host and port only (never user:password@)."""
    if endpoint is None:
        return f"AWS DynamoDB ({region or 'default region'})"
    parts = urlsplit(endpoint)
    host = parts.hostname or "?"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free port)."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def serve(
    tables: Sequence[Table],
    *,
    collections: Sequence[Collection] = (),
    db: Connection,
    host: str = LOOPBACK,
    port: int = 8765,
    allow_writes: bool = False,
    snapshot: str | None = None,
    endpoint: str = "DynamoDB",
    out: TextIO = sys.stderr,
) -> None:
    """Serve the browser until interrupted (Ctrl-C).

    Args:
        tables: The model's tables.
        collections: Collections to offer (see `views.collections_of`).
        db: The connection every page reads (and writes) through.
        host: The address to bind; anything but loopback prints a warning.
        port: The port (0: any free port).
        allow_writes: Offer edit and delete forms.
        snapshot: A snapshot file for the migration plan page.
        endpoint: How pages name the backend (see `endpoint_label`).
        out: Where the address and warnings are printed.
    """
    if not is_loopback(host):
        print(
            f"singletable browse: WARNING: binding {host}, not loopback: anyone who can "
            f"reach this port can read the table{' and change it' if allow_writes else ''}",
            file=out,
            flush=True,
        )
    config = BrowserConfig(
        tables=list(tables),
        collections=list(collections),
        allow_writes=allow_writes,
        snapshot=snapshot,
        endpoint_label=endpoint,
    )
    app = guard_hosts(create_app(db, config), [*_LOCAL_NAMES, host])
    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    mode = "writes allowed" if allow_writes else "read-only"
    print(
        f"singletable browse: http://{shown}:{sock.getsockname()[1]}/ ({mode}); Ctrl-C stops",
        file=out,
        flush=True,
    )
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="off", ws="none", http="h11")
    )
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
