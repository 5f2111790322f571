"""The cyclic garbage collector, held off while a page of items is parsed or decoded.

A page allocates a few containers per item, and every 700 allocations start a young
collection, every 10 of those a middle-aged one, and then full ones over the whole
process: each walks the page's objects again, though none of them can be garbage while
the page is being built. Held off, they are walked once, after the page.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_held_off() -> Iterator[None]:
    """Hold the cyclic collector off for the block: one page's parse or decode.

    A collector the caller had switched off stays off. Use it only around work bounded by
    one page, with no wait inside: other threads run with the collector off too while the
    block runs (their cyclic garbage is collected after it, not lost).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
