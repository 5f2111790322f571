"""Audit events by action and time, declared twice: a native GSI and a template GSI."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Annotated, Any

import singletable as st

T0 = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)

# -- native: the index key is the entity's own attributes --------------------------------

native = st.Table(
    "audit-native",
    indexes=[st.NativeGSI("ByAction", pk=["tenant", "action"], sk=["at", "seq"])],
)


class Event(st.Entity, table=native, pk="ACTOR#{actor_id}", sk="EVT#{at}#{seq}"):
    """One audited action. ``at`` is epoch milliseconds: a number part sorts numerically."""

    actor_id: str
    at: int
    seq: int
    tenant: str
    action: str
    target: str


# -- synthetic: a template writes GSI1PK / GSI1SK text on every item ----------------------

synthetic = st.Table("audit-synthetic", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class TemplatedEvent(
    st.Entity,
    table=synthetic,
    name="Event",
    pk="ACTOR#{actor_id}",
    sk="EVT#{at}#{seq}",
    indexes={"GSI1": st.IndexKeys(pk="ACTION#{tenant}#{action}", sk="{at}#{seq}")},
):
    """The same event; its second ordering is key text built from the same fields."""

    actor_id: str
    at: Annotated[int, st.KeyFormat(width=13)]
    seq: Annotated[int, st.KeyFormat(width=6)]
    tenant: str
    action: str
    target: str


def ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


def events() -> list[dict[str, Any]]:
    """Fourteen events of two actors over a day; every third one a login."""
    return [
        {
            "actor_id": f"u{n % 2}",
            "at": ms(T0 + timedelta(hours=n)),
            "seq": n,
            "tenant": "acme",
            "action": "login" if n % 3 == 0 else "edit",
            "target": f"doc-{n}",
        }
        for n in range(14)
    ]


def main() -> dict[str, Any]:
    """Write the events both ways; compare item size, write cost and the same query."""
    since = ms(T0 + timedelta(hours=4))
    with st.embedded(native, synthetic) as db:
        st.BatchWrite([Event(**e) for e in events()]).run(db)
        st.BatchWrite([TemplatedEvent(**e) for e in events()]).run(db)
        # Logins of tenant acme since 12:00, newest first.
        by_native = Event.query(index="ByAction", tenant="acme", action="login").ge(at=since)
        by_template = TemplatedEvent.query(index="GSI1", tenant="acme", action="login").ge(at=since)
        one = events()[0]
        native_put = st.estimate_capacity(Event.put(Event(**one)))
        template_put = st.estimate_capacity(TemplatedEvent.put(TemplatedEvent(**one)))
        return {
            "native": [e.seq for e in by_native.descending().all(db)],
            "synthetic": [e.seq for e in by_template.descending().all(db)],
            "native_item": Event.plan().to_item(Event(**one)),
            "synthetic_item": TemplatedEvent.plan().to_item(TemplatedEvent(**one)),
            "native_put": (native_put.wcu, native_put.lines[0].size),
            "synthetic_put": (template_put.wcu, template_put.lines[0].size),
            "native_request": by_native.params(),
            "synthetic_request": by_template.params(),
        }
