"""Real-browser fixtures: the app on a loopback port, driven by the machine's Chromium.

Chromium comes from Debian (``apt-get install chromium``, which ``.ci/run`` does when it
is missing); Playwright only drives it (``executable_path``), it never downloads one.
A missing browser fails these tests: it is a broken environment, not a reason to skip.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from playwright.sync_api import BrowserContext, Dialog, Page, sync_playwright

from singletable import BatchWrite, Connection, embedded
from singletable.examples import demo, sample_items
from singletable.tooling.browser.app import BrowserConfig, create_app, guard_hosts
from singletable.tooling.browser.views import collections_of
from tests.browser.wide_model import wide, wide_items

CHROMIUM = os.environ.get("SINGLETABLE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: Items the browser tests add to the demo data: XSS payloads and an unknown entity.
XSS_SCRIPT = '<script>alert("xss")</script>'
XSS_IMG = '"><img src=x onerror=alert(1)>'
UNKNOWN_ITEM = {
    "PK": {"S": "ACTOR#u_8814"},
    "SK": {"S": "NOTE#retired"},
    "_et": {"S": "RetiredNote"},
    "_ev": {"N": "1"},
    "text": {"S": "an entity the model no longer declares"},
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


@dataclass
class Served:
    """The running app: its base URL and the connection behind it."""

    url: str
    db: Connection


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# Module-scoped, not session-scoped: the in-memory backend (and its singletable-demo
# table) must be gone before other modules create their own.
@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    from singletable.examples import AuditEvent

    with embedded(demo, wide) as db:
        BatchWrite(sample_items()).run(db)
        BatchWrite(wide_items()).run(db)
        for seq, payload in ((900, XSS_SCRIPT), (901, XSS_IMG)):
            event = AuditEvent(
                actor_id="mallory",
                ts=sample_items()[1].ts,  # type: ignore[attr-defined]
                seq=seq,
                action=payload,
                target=payload,
                details={payload: payload},
            )
            AuditEvent.put(event).run(db)
        db.call("put_item", {"TableName": demo.name, "Item": UNKNOWN_ITEM})
        config = BrowserConfig(
            [demo, wide], collections_of([demo, wide]), endpoint_label="embedded (moto)"
        )
        app = guard_hosts(create_app(db, config), ["127.0.0.1"])
        port = _free_port()
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                host="127.0.0.1",
                port=port,
                log_level="warning",
                lifespan="off",
                ws="none",
                http="h11",
            )
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 20
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                pytest.fail("the browser app did not start on 127.0.0.1")
            time.sleep(0.05)
        try:
            yield Served(f"http://127.0.0.1:{port}", db)
        finally:
            server.should_exit = True
            thread.join(timeout=10)


# Module-scoped too: Playwright's sync API keeps an event loop running in this thread
# until it stops, which would break later tests that run their own loop.
@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install -y "
            "chromium); the browser tests do not skip"
        )
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1600, "height": 1000},
        )
        try:
            yield context
        finally:
            context.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser_context: BrowserContext) -> Iterator[Page]:
    tab = browser_context.new_page()
    dialogs: list[str] = []

    def record_and_dismiss(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    tab.on("dialog", record_and_dismiss)
    tab.dialogs = dialogs  # type: ignore[attr-defined]
    try:
        yield tab
    finally:
        tab.close()


def column(page: Page, side: str, css: str = ".sk") -> list[str]:
    """The texts of one part of every result row of the ascending or descending side."""
    return [t.strip() for t in page.locator(f"#side-{side} .row.result {css}").all_inner_texts()]


def keys_of(items: list[Any]) -> list[str]:
    """The sort keys of decoded entities, as the pages show them."""
    return [item.to_item()["SK"]["S"] for item in items]
