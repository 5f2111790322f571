"""Capacity estimates next to the request: ten 2 KB audit events, read four ways."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import singletable as st
from singletable.examples import T0, AuditEvent


def event(seq: int, size: int = 2048) -> AuditEvent:
    """An audit event whose stored item is exactly ``size`` bytes."""
    e = AuditEvent(
        actor_id="u_8814", ts=T0 + timedelta(minutes=seq), seq=seq, action="view", target=""
    )
    padding = size - st.estimate_capacity(AuditEvent.put(e)).lines[0].size
    return e.model_copy(update={"target": "x" * padding})


def main() -> dict[str, Any]:
    """The estimates the docs quote."""
    events = [event(i) for i in range(10)]
    items = [e.to_item() for e in events]
    query = AuditEvent.query(actor_id="u_8814").between(ts=(T0, T0 + timedelta(minutes=9)))
    gets = [AuditEvent.get(actor_id="u_8814", ts=e.ts, seq=e.seq) for e in events]
    return {
        "explain": st.explain(query, read=items),  # {"request": ..., "capacity": ...}
        "query": st.estimate_capacity(query, read=items).rcu,  # 20 KB, rounded once
        "query_consistent": st.estimate_capacity(query.consistent(), read=items).rcu,
        "gets": sum(st.estimate_capacity(g, read=i).rcu for g, i in zip(gets, items, strict=True)),
        "gets_consistent": sum(
            st.estimate_capacity(AuditEvent.get(consistent=True, **g.key_values), read=i).rcu
            for g, i in zip(gets, items, strict=True)
        ),
        "put_1024": st.estimate_capacity(AuditEvent.put(event(0, 1024))).wcu,
        "put_1025": st.estimate_capacity(AuditEvent.put(event(0, 1025))).wcu,
    }
