"""What ``singletable browse`` runs once the CLI has loaded the model."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext, suppress

from singletable.io.connection import Connection
from singletable.model.table import Table
from singletable.tooling.browser.server import demo_connection, endpoint_label, serve
from singletable.tooling.browser.views import collections_of

__all__ = ["run_browse"]


def run_browse(args: argparse.Namespace, tables: Sequence[Table]) -> None:
    """Serve the browser for ``tables`` as the parsed ``browse`` arguments say."""
    connection: AbstractContextManager[Connection]
    if args.demo:
        connection = demo_connection()
        label = "embedded (moto, in this process)"
    else:
        connection = nullcontext(Connection(endpoint_url=args.endpoint, region_name=args.region))
        label = endpoint_label(args.endpoint, args.region)
    with connection as db, suppress(KeyboardInterrupt):  # Ctrl-C is how it stops
        serve(
            tables,
            collections=collections_of(tables),
            db=db,
            host=args.host,
            port=args.port,
            allow_writes=args.allow_writes,
            snapshot=args.snapshot,
            endpoint=label,
            out=sys.stderr,
        )
