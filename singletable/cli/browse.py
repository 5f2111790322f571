"""What ``singletable browse`` runs once the CLI has loaded the model.

In the CLI layer because ``--demo`` serves the worked examples (``singletable.examples``,
a layer above the tooling).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress

from singletable.examples import demo, sample_items
from singletable.io.connection import Connection
from singletable.io.embedded import embedded
from singletable.model.table import Table
from singletable.operations.batch import BatchWrite
from singletable.tooling.browser.server import endpoint_label, serve
from singletable.tooling.browser.views import collections_of

__all__ = ["demo_connection", "run_browse"]


@contextmanager
def demo_connection() -> Iterator[Connection]:
    """The worked examples on the embedded backend, with their sample items written."""
    with embedded(demo) as db:
        BatchWrite(sample_items()).run(db)
        yield db


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
