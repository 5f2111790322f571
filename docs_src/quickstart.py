"""Quickstart: an audit log in one table (the code shown in README.md and docs/index.md)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Annotated

import singletable as st

app = st.Table("app", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class AuditEvent(
    st.Entity,
    table=app,
    pk="ACTOR#{actor_id}",
    sk="EVT#{ts}#{seq}",
    indexes={"GSI1": st.IndexKeys(pk="ACTION#{action}", sk="{ts}#{actor_id}")},
):
    actor_id: str
    ts: datetime
    seq: Annotated[int, st.KeyFormat(width=6)]
    action: str
    target: str


def main() -> list[AuditEvent]:
    """Write a few events and read the newest three of one actor."""
    t0 = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)
    with st.embedded(app) as db:  # an in-memory DynamoDB (moto)
        for i in range(5):
            event = AuditEvent(
                actor_id="u_8814",
                ts=t0 + timedelta(minutes=i),
                seq=i,
                action="edit",
                target="doc/1",
            )
            AuditEvent.put(event).run(db)

        query = AuditEvent.query(actor_id="u_8814").descending().limit(3)
        print(query.params()["KeyConditionExpression"])  # #n0 = :v0 AND begins_with (#n1, :v1)
        newest = query.all(db)

        # The same events, by action, through the GSI:
        edits = AuditEvent.query(index="GSI1", action="edit").all(db)
        assert len(edits) == 5
        return newest


if __name__ == "__main__":
    for event in main():
        print(event.ts, event.seq, event.action)
