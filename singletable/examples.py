"""The three worked examples of single-table design, as importable models.

* **Audit log** (`Actor`, `AuditEvent`): ``PK = ACTOR#<id>``, ``SK = EVT#<ts>#<seq>``;
  newest-first stream and a time window from one collection, no index.
* **Sensor readings** (`Reading`): ``PK = DEV#<id>``, ``SK = READING#<ts>``; latest-first,
  a 10-minute window, and "above 30 °C across the fleet" through ``GSI1``, keyed by day
  with the temperature as the order-preserving sort key.
* **File tree** (`Folder`, `File`): ``PK = DRIVE#<account>``, ``SK = <path>`` with folders
  ending in ``/``; a subtree in path order with one ``begins_with``, and direct children
  through the ``GSI2`` parent index.

Used by ``singletable demo`` and usable with ``singletable synth singletable.examples:demo``.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Annotated

from pydantic import Field

from singletable.entity import Entity
from singletable.keys.codecs import KeyFormat
from singletable.model.plan import IndexKeys
from singletable.model.table import GSI, Projection, Table
from singletable.operations.collection import Collection

__all__ = [
    "Actor",
    "AuditEvent",
    "File",
    "Folder",
    "Reading",
    "T0",
    "activity",
    "children",
    "demo",
    "drive",
    "sample_audit_log",
    "sample_drive",
    "sample_items",
    "sample_readings",
]

demo = Table(
    "singletable-demo",
    indexes=[
        GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        GSI("GSI2", pk="GSI2PK", sk="GSI2SK", projection=Projection.all()),
    ],
    ttl_attribute="expires",
)


# -- 1. actor-scoped audit log ------------------------------------------------------------


class Actor(Entity, table=demo, pk="ACTOR#{actor_id}", sk="PROFILE"):
    """An actor's profile, stored in the same collection as its events."""

    actor_id: str
    display_name: str


class AuditEvent(Entity, table=demo, pk="ACTOR#{actor_id}", sk="EVT#{ts}#{seq}"):
    """One audited action; ``seq`` keeps events with the same timestamp apart."""

    actor_id: str
    ts: datetime
    seq: Annotated[int, KeyFormat(width=6)]
    action: str
    target: str
    ip: str | None = None
    details: dict[str, str] = Field(default_factory=dict)


activity = Collection("activity", Actor, AuditEvent)


# -- 2. sensor readings -------------------------------------------------------------------


class Reading(
    Entity,
    table=demo,
    pk="DEV#{device_id}",
    sk="READING#{ts}",
    indexes={"GSI1": IndexKeys(pk="FLEET#{day}", sk="{celsius}#{device_id}#{ts}")},
):
    """A temperature reading; GSI1 orders a day's readings fleet-wide by temperature."""

    device_id: str
    ts: datetime
    day: date
    celsius: Decimal
    humidity: Decimal | None = None


# -- 3. file tree per account -------------------------------------------------------------


class Folder(
    Entity,
    table=demo,
    pk="DRIVE#{account}",
    sk="{path}",
    indexes={"GSI2": IndexKeys(pk="DRIVE#{account}#{parent}", sk="{path}")},
):
    """A folder: its path ends with ``/``; the root has no parent (so no GSI2 keys)."""

    account: str
    path: str
    parent: str | None = None


class File(
    Entity,
    table=demo,
    pk="DRIVE#{account}",
    sk="{path}",
    indexes={"GSI2": IndexKeys(pk="DRIVE#{account}#{parent}", sk="{path}")},
):
    """A file: its path has no trailing ``/``."""

    account: str
    path: str
    parent: str
    size: int
    content_type: str = "application/octet-stream"


drive = Collection("drive", Folder, File)
#: Direct children of a folder: both entity types, through the parent index.
children = Collection("children", Folder, File, index="GSI2")


# -- sample data --------------------------------------------------------------------------

T0 = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)


def sample_audit_log() -> list[Entity]:
    """An actor and a day of its events (two of them in the same microsecond)."""
    items: list[Entity] = [Actor(actor_id="u_8814", display_name="Ada")]
    actions = ["login", "view", "edit", "share", "logout"]
    for i in range(12):
        ts = T0 + timedelta(hours=i * 2)
        items.append(
            AuditEvent(
                actor_id="u_8814",
                ts=ts,
                seq=i,
                action=actions[i % len(actions)],
                target=f"doc/{i % 4}",
                ip="198.51.100.7",
            )
        )
    # Same timestamp as event 3: kept apart by seq.
    items.append(
        AuditEvent(
            actor_id="u_8814", ts=T0 + timedelta(hours=6), seq=42, action="edit", target="doc/3"
        )
    )
    items.append(
        AuditEvent(actor_id="u_8814", ts=T0 - timedelta(days=1), seq=0, action="login", target="-")
    )
    return items


def sample_readings() -> list[Entity]:
    """Readings every 5 minutes from three devices, one of them running hot."""
    items: list[Entity] = []
    for device, base in (
        ("dev-7", Decimal("21.5")),
        ("dev-9", Decimal("28.0")),
        ("dev-12", Decimal("-4.25")),
    ):
        for i in range(12):
            ts = T0 + timedelta(minutes=5 * i)
            swing = Decimal(i % 5) * Decimal("1.25")
            items.append(
                Reading(
                    device_id=device,
                    ts=ts,
                    day=ts.date(),
                    celsius=base + swing,
                    humidity=Decimal("40"),
                )
            )
    return items


def sample_drive() -> list[Entity]:
    """A small file tree, including a file whose name contains the delimiter ``#``."""
    acct = "acme"
    folders = ["root/", "root/photos/", "root/photos/2026/", "root/docs/"]
    items: list[Entity] = []
    for path in folders:
        parent = None if path == "root/" else path[: path.rstrip("/").rfind("/") + 1]
        items.append(Folder(account=acct, path=path, parent=parent))
    files = [
        ("root/photos/beach.jpg", 2_400_000, "image/jpeg"),
        ("root/photos/2026/june.png", 1_100_000, "image/png"),
        ("root/photos/2026/#1 best.png", 900_000, "image/png"),
        ("root/docs/plan.md", 4_200, "text/markdown"),
        ("root/photos-old.zip", 77_000_000, "application/zip"),
    ]
    for path, size, ctype in files:
        items.append(
            File(
                account=acct,
                path=path,
                parent=path[: path.rfind("/") + 1],
                size=size,
                content_type=ctype,
            )
        )
    return items


def sample_items() -> list[Entity]:
    """Every sample item of the three examples."""
    return [*sample_audit_log(), *sample_readings(), *sample_drive()]
