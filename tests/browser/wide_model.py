"""A model as real ones are: three entities of ten fields each in one collection.

The browser's pages are checked against it in a real Chromium (issue 26, item 13): each
half of the ascending/descending view must show every field without clipping, the rows
of the two halves must line up, and a collection row shows its own entity's fields only.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Literal

from pydantic import Field

from singletable import Collection, Entity, Table

wide = Table("singletable-wide")

_START = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)


class Project(Entity, table=wide, pk="TENANT#{tenant}", sk="PROJECT#{project_id}"):
    """A project of a tenant."""

    tenant: str
    project_id: str
    title: str
    owner_email: str
    status: Literal["active", "archived"] = "active"
    budget: Decimal = Decimal("0")
    starts_on: date | None = None
    due_on: date | None = None
    labels: set[str] = Field(default_factory=set)
    description: str = ""


class Task(Entity, table=wide, pk="TENANT#{tenant}", sk="PROJECT#{project_id}#TASK#{task_id}"):
    """A task of a project."""

    tenant: str
    project_id: str
    task_id: str
    title: str
    assignee_email: str | None = None
    state: Literal["todo", "doing", "done"] = "todo"
    priority: int = 3
    estimate_hours: float = 1.0
    due_at: datetime | None = None
    watchers: list[str] = Field(default_factory=list)


class Comment(
    Entity,
    table=wide,
    pk="TENANT#{tenant}",
    sk="PROJECT#{project_id}#TASK#{task_id}#COMMENT#{posted_at}",
):
    """A comment on a task."""

    tenant: str
    project_id: str
    task_id: str
    posted_at: datetime
    author_email: str
    body: str
    edited: bool = False
    reactions: dict[str, int] = Field(default_factory=dict)
    mentions: list[str] = Field(default_factory=list)
    reply_to: str | None = None


board = Collection("board", Project, Task, Comment)


def wide_items() -> list[Entity]:
    """Two projects with tasks and comments: long values, empty ones, every field type."""
    items: list[Entity] = []
    for p in range(2):
        project_id = f"proj-{p:02d}-platform-migration"
        items.append(
            Project(
                tenant="acme",
                project_id=project_id,
                title=f"Move the billing platform to the new region, phase {p + 1}",
                owner_email="grace.hopper@acme.example",
                budget=Decimal("125000.50"),
                starts_on=date(2026, 6, 1),
                due_on=date(2026, 9, 30),
                labels={"infra", "q3", "billing"},
                description="Cut-over plan, rollback drills and the customer notice.",
            )
        )
        for t in range(3):
            task_id = f"task-{t:03d}"
            items.append(
                Task(
                    tenant="acme",
                    project_id=project_id,
                    task_id=task_id,
                    title=f"Rehearse the cut-over of shard {t} with production-sized data",
                    assignee_email=None if t == 1 else "ada.lovelace@acme.example",
                    state=("todo", "doing", "done")[t],
                    priority=t + 1,
                    estimate_hours=4.5 * (t + 1),
                    due_at=_START + timedelta(days=t),
                    watchers=["alan@acme.example", "edsger@acme.example"],
                )
            )
            items.append(
                Comment(
                    tenant="acme",
                    project_id=project_id,
                    task_id=task_id,
                    posted_at=_START + timedelta(hours=t),
                    author_email="barbara.liskov@acme.example",
                    body="Replication lag stayed under 2 s during the whole rehearsal; "
                    "the rollback took 11 minutes.",
                    edited=t == 2,
                    reactions={"+1": 3, "eyes": 1},
                    mentions=["ada.lovelace@acme.example"],
                )
            )
    return items
