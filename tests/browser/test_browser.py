"""The browser in a real (headless Debian) Chromium: the worked examples, order, forms, XSS."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import FloatRect, Locator, Page

from singletable.examples import AuditEvent, File, Folder, Reading, activity, drive
from tests.browser.conftest import UNKNOWN_ITEM, XSS_IMG, XSS_SCRIPT, Served, column, keys_of
from tests.browser.wide_model import Comment, Project, Task, board

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "img" / "browser.png"


def open_query(page: Page, served: Served, source: str) -> None:
    page.goto(f"{served.url}/query?{urlencode({'source': source})}")


def follow(page: Page, target: Locator) -> None:
    """Click a link or submit button and wait for the page it loads.

    A click returns once the click is dispatched, not when the next page is there: reading
    the page straight after it could read the old one (seen on a loaded machine).
    """
    with page.expect_navigation():
        target.click()


def test_worked_examples_pages_load(page: Page, served: Served) -> None:
    page.goto(served.url + "/")
    for name in ("Actor", "AuditEvent", "Reading", "Folder", "File"):
        assert page.locator(f"#entity-{name}").is_visible()
    assert "FLEET#{day}" in page.locator(".lint").inner_text()
    # 1. audit log, 2. sensor readings (GSI1), 3. file tree: query pages run from the forms.
    for source, fields in (
        ("singletable-demo/collection/activity", {"pk.actor_id": "u_8814"}),
        ("singletable-demo/Reading@1", {"pk.device_id": "dev-9"}),
        ("singletable-demo/Reading@1/GSI1", {"pk.day": "2026-06-23"}),
        ("singletable-demo/collection/drive", {"pk.account": "acme"}),
    ):
        open_query(page, served, source)
        for name, value in fields.items():
            page.fill(f"#query-form [name='{name}']", value)
        follow(page, page.locator("#run"))
        assert page.locator("#side-ascending .row.item").count() > 0, source
        assert page.locator("#side-descending .row.item").count() > 0, source
        assert "KeyConditionExpression" in page.locator("#side-ascending pre.params").inner_text()
        assert page.locator("#side-ascending .estimated").inner_text() != ""
        assert page.locator("#side-ascending .reported").inner_text() != ""
    assert not page.dialogs  # type: ignore[attr-defined]


def test_ascending_and_descending_columns_equal_the_query_api(page: Page, served: Served) -> None:
    open_query(page, served, "singletable-demo/AuditEvent@1")
    page.fill("#query-form [name='pk.actor_id']", "u_8814")
    page.fill("#limit", "50")
    follow(page, page.locator("#run"))
    query = AuditEvent.query(actor_id="u_8814")
    assert column(page, "ascending") == keys_of(query.all(served.db))
    assert column(page, "descending") == keys_of(query.descending().all(served.db))
    assert column(page, "descending") == column(page, "ascending")[::-1]


def test_collection_rows_mark_unknown_items_in_key_order(page: Page, served: Served) -> None:
    open_query(page, served, "singletable-demo/collection/activity")
    page.fill("#query-form [name='pk.actor_id']", "u_8814")
    page.fill("#limit", "50")
    follow(page, page.locator("#run"))
    result = activity.query(actor_id="u_8814").all(served.db)
    expected = sorted([*keys_of(list(result)), UNKNOWN_ITEM["SK"]["S"]])
    assert column(page, "ascending") == expected
    unknown = page.locator("#side-ascending .row.unknown")
    assert unknown.count() == 1
    assert "RetiredNote@1 is declared by no class" in unknown.inner_text()
    assert column(page, "ascending", ".entity") == [
        "unknown"
        if key == UNKNOWN_ITEM["SK"]["S"]
        else ("Actor" if key == "PROFILE" else "AuditEvent")
        for key in expected
    ]


def test_sort_key_conditions_from_the_form(page: Page, served: Served) -> None:
    open_query(page, served, "singletable-demo/Reading@1")
    page.fill("#query-form [name='pk.device_id']", "dev-7")
    page.select_option("#op", "between")
    page.fill("#v1", "2026-06-23T08:10:00Z")
    page.fill("#v2", "2026-06-23T08:20:00Z")
    follow(page, page.locator("#run"))
    low = datetime(2026, 6, 23, 8, 10, tzinfo=timezone.utc)
    high = datetime(2026, 6, 23, 8, 20, tzinfo=timezone.utc)
    window = Reading.query(device_id="dev-7").between(ts=(low, high)).all(served.db)
    assert len(window) == 3
    assert column(page, "ascending") == keys_of(window)
    # begins_with on a collection's shared sort key: the photos subtree in path order.
    open_query(page, served, "singletable-demo/collection/drive")
    page.fill("#query-form [name='pk.account']", "acme")
    page.select_option("#op", "begins_with")
    page.fill("#v1", "root/photos/")
    follow(page, page.locator("#run"))
    subtree = drive.query(account="acme").begins_with(path="root/photos/").all(served.db)
    # The page shows the stored key: "#" inside a segment is escaped ("%23").
    assert column(page, "ascending") == keys_of(list(subtree))
    assert "root/photos/2026/%231%20best.png" in column(page, "ascending")
    assert "root/photos-old.zip" not in column(page, "ascending")
    paths = column(page, "ascending", "[data-field=path] dd")
    assert paths == [n.path for n in subtree if isinstance(n, (Folder, File))]
    # A bad value is refused with the field named, and nothing is read.
    open_query(page, served, "singletable-demo/Reading@1")
    page.fill("#query-form [name='pk.device_id']", "dev-7")
    page.select_option("#op", "gt")
    page.fill("#v1", "not a time")
    follow(page, page.locator("#run"))
    assert "Reading.ts" in page.locator("#error").inner_text()
    assert page.locator("#side-ascending").count() == 0


def test_pagination_with_cursors_from_the_form(page: Page, served: Served) -> None:
    open_query(page, served, "singletable-demo/AuditEvent@1")
    page.fill("#query-form [name='pk.actor_id']", "u_8814")
    page.fill("#limit", "4")
    follow(page, page.locator("#run"))
    ascending: list[str] = []
    descending_first = column(page, "descending")
    for _ in range(10):
        ascending += column(page, "ascending")
        next_link = page.locator("#side-ascending a.next")
        if next_link.count() == 0:
            break
        follow(page, next_link)
        # Paging one side leaves the other where it was.
        assert column(page, "descending") == descending_first
    assert ascending == keys_of(AuditEvent.query(actor_id="u_8814").all(served.db))
    assert len(ascending) > 4
    # An edited cursor is refused, not followed.
    page.goto(page.url.split("&acur=")[0] + "&acur=AAAA")
    assert "cursor" in page.locator("#side-ascending .error").inner_text()


def test_xss_payloads_are_inert(page: Page, served: Served) -> None:
    open_query(page, served, "singletable-demo/AuditEvent@1")
    page.fill("#query-form [name='pk.actor_id']", "mallory")
    follow(page, page.locator("#run"))
    text = page.locator("#side-ascending").inner_text()
    assert XSS_SCRIPT in text  # shown literally
    assert XSS_IMG in text
    assert page.locator("main img").count() == 0
    assert page.locator("main script").count() == 0
    assert page.evaluate("document.querySelectorAll('[onerror]').length") == 0
    # The item page (values and the escaped JSON of the map field) and the form echo.
    follow(page, page.locator("#side-ascending .entity a").first)
    assert (
        XSS_SCRIPT in page.locator("main").inner_text()
        or XSS_IMG in page.locator("main").inner_text()
    )
    assert page.evaluate("document.querySelectorAll('img, script, [onerror]').length") == 0
    open_query(page, served, "singletable-demo/AuditEvent@1")
    page.fill("#query-form [name='pk.actor_id']", XSS_IMG)
    page.select_option("#op", "gt")
    page.fill("#v1", XSS_SCRIPT)
    follow(page, page.locator("#run"))
    assert page.input_value("#v1") == XSS_SCRIPT
    assert page.evaluate("document.querySelectorAll('img, script, [onerror]').length") == 0
    assert not page.dialogs  # type: ignore[attr-defined]


def test_side_by_side_screenshot_for_the_docs(page: Page, served: Served) -> None:
    page.set_viewport_size({"width": 1600, "height": 900})
    open_query(page, served, "singletable-demo/collection/drive")
    page.fill("#query-form [name='pk.account']", "acme")
    page.fill("#limit", "6")
    follow(page, page.locator("#run"))
    assert page.locator("#side-ascending .row.result").count() == 6
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=False)
    assert SCREENSHOT.stat().st_size > 10_000


def _boxes(page: Page, side: str) -> list[FloatRect]:
    boxes = []
    for row in page.locator(f"#side-{side} .row.result").all():
        box = row.bounding_box()
        assert box is not None
        boxes.append(box)
    return boxes


def test_a_wide_three_entity_collection_is_readable_side_by_side(
    page: Page, served: Served, tmp_path: Path
) -> None:
    # Issue 26, item 13: ten fields per entity, three entities in one collection.
    page.set_viewport_size({"width": 1600, "height": 1000})
    open_query(page, served, "singletable-wide/collection/board")
    page.fill("#query-form [name='pk.tenant']", "acme")
    page.fill("#limit", "8")
    follow(page, page.locator("#run"))
    shot = tmp_path / "wide.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    plans = {cls.__name__: cls.plan() for cls in (Project, Task, Comment)}
    ascending, descending = _boxes(page, "ascending"), _boxes(page, "descending")
    assert len(ascending) == len(descending) == 8
    # Row N of one side lines up with row N of the other: same top, same height.
    for n, (a, d) in enumerate(zip(ascending, descending, strict=True)):
        assert abs(a["y"] - d["y"]) < 0.5, n
        assert abs(a["height"] - d["height"]) < 0.5, n
        assert a["x"] + a["width"] <= d["x"], n  # the halves do not overlap
        assert d["x"] + d["width"] <= 1600, n  # nor leave the window
    # Nothing is clipped: no element of a row is wider than its box, and the page does
    # not scroll sideways.
    overflowing = page.evaluate(
        "[...document.querySelectorAll('.row, .row *')]"
        ".filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.className)"
    )
    assert overflowing == []
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    # A row shows its own entity's fields (every one, partition key left out), no other's.
    for side in ("ascending", "descending"):
        for row in page.locator(f"#side-{side} .row.item").all():
            entity = row.get_attribute("data-entity")
            assert entity in plans
            shown = row.locator(".field").evaluate_all("fs => fs.map(f => f.dataset.field)")
            assert shown == [name for name in plans[entity].fields if name != "tenant"]
            for field in row.locator(".field").all():
                assert field.is_visible()
    assert column(page, "ascending") == keys_of(
        list(board.query(tenant="acme").limit(8).page(served.db).items)
    )
