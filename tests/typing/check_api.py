"""Static checks of the fluent API's result types (run by mypy in CI, never executed).

``assert_type`` fails type checking when an operation or query loses its entity type.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Any

from typing_extensions import assert_type

import singletable as st

table = st.Table("typing")


class Event(st.Entity, table=table, pk="ACTOR#{actor_id}", sk="EVT#{ts}"):
    actor_id: str
    ts: datetime
    action: str


def check(db: st.Connection, event: Event, when: datetime) -> None:
    query = Event.query(actor_id="a").between(ts=(when, when)).descending().limit(5)
    assert_type(query, st.EntityQuery[Event])
    assert_type(query.all(db), list[Event])
    assert_type(query.first(db), Event | None)
    assert_type(query.page(db), st.Page[Event])
    assert_type(query.count(db), int)
    assert_type(query.params(), dict[str, Any])
    assert_type(Event.get(actor_id="a", ts=when).run(db), Event | None)
    assert_type(Event.put(event).run(db), Event)
    assert_type(Event.create(event).run(db), Event)
    assert_type(Event.update(actor_id="a", ts=when).set(action="x").run(db), Event)
    assert_type(Event.delete(event).run(db), Event | None)
    assert_type(Event.from_item(event.to_item()), Event)
    assert_type(Event.f.action == "x", st.Condition)


async def check_async(adb: st.AsyncConnection, event: Event, when: datetime) -> None:
    # The same builders, awaited: each terminal's result type is the sync one's.
    query = Event.query(actor_id="a").between(ts=(when, when)).descending().limit(5)
    assert_type(await query.all(adb), list[Event])
    assert_type(await query.first(adb), Event | None)
    assert_type(await query.page(adb), st.Page[Event])
    assert_type(await query.count(adb), int)
    assert_type(await Event.get(actor_id="a", ts=when).run(adb), Event | None)
    assert_type(await Event.put(event).run(adb), Event)
    assert_type(await Event.create(event).run(adb), Event)
    assert_type(await Event.update(actor_id="a", ts=when).set(action="x").run(adb), Event)
    assert_type(await Event.delete(event).run(adb), Event | None)
    async for item in query.iter(adb):
        assert_type(item, Event)
    async for page in query.pages(adb):
        assert_type(page, st.Page[Event])
    assert_type(await adb.create_table(table), dict[str, Any])


def check_iterators(db: st.Connection, adb: st.AsyncConnection) -> None:
    query = Event.query(actor_id="a")
    assert_type(query.iter(db), Iterator[Event])
    assert_type(query.iter(adb), AsyncIterator[Event])
    assert_type(query.pages(db), Iterator[st.Page[Event]])
    assert_type(query.pages(adb), AsyncIterator[st.Page[Event]])
    collection = st.Collection("events", Event)
    assert_type(collection.query(actor_id="a").all(db), st.CollectionResult)


async def check_async_collection(adb: st.AsyncConnection) -> None:
    collection = st.Collection("events", Event)
    assert_type(await collection.query(actor_id="a").all(adb), st.CollectionResult)
    assert_type(await Event.scan().all(adb), list[Event])


EventInput = Event.input_model(exclude=["actor_id"])


def check_input_model(body: EventInput) -> None:
    # The plugin makes the assignment a class: usable as an annotation (a FastAPI body).
    assert_type(body.to_entity(actor_id="a"), Event)
    assert_type(Event.input_model(), type[st.EntityInput[Event]])
