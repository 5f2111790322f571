"""Static checks of the fluent API's result types (run by mypy in CI, never executed).

``assert_type`` fails type checking when an operation or query loses its entity type.
"""

from __future__ import annotations

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
