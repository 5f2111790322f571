"""Writes on the worked examples: conditions, index-key rewriting, batches, transactions."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import singletable as st
from singletable.examples import T0, Actor, AuditEvent, Reading, demo


def index_key_rewrite() -> dict[str, Any]:
    """Change the field that orders GSI1: the update rewrites GSI1SK in the same request."""
    update = (
        Reading.update(device_id="dev-7", ts=T0)
        .set(celsius=Decimal("35.5"))
        # GSI1's templates also need `day`, which this update does not change:
        .known(day=T0.date())
    )
    return update.params()  # SET celsius, GSI1PK and GSI1SK in one UpdateItem


def main() -> dict[str, Any]:
    """Write, fail on purpose, and read back; return what happened."""
    out: dict[str, Any] = {}
    with st.embedded(demo) as db:
        ada = Actor(actor_id="u_1", display_name="Ada")
        Actor.put(ada).run(db)  # overwrites whatever has this key
        try:
            Actor.create(ada).run(db)  # refuses an existing key
        except st.AlreadyExistsError as exc:
            out["create_again"] = type(exc).__name__
        out["missing"] = Actor.get(actor_id="nobody").run(db)  # None

        reading = Reading(device_id="dev-7", ts=T0, day=T0.date(), celsius=Decimal("21.5"))
        Reading.put(reading).run(db)
        out["updated"] = (
            Reading.update(device_id="dev-7", ts=T0)
            .set(celsius=Decimal("35.5"))
            .known(day=T0.date())
            .run(db)
        )
        # The index now orders the reading by its new temperature:
        out["hot"] = Reading.query(index="GSI1", day=T0.date()).ge(celsius=Decimal(35)).all(db)
        try:
            # Without .known(day=...), the GSI1 key cannot be rebuilt: refused before sending.
            Reading.update(device_id="dev-7", ts=T0).set(celsius=Decimal(1)).params()
        except st.ExpressionError as exc:
            out["refused"] = str(exc)
        try:
            Actor.update(actor_id="nobody").set(display_name="?").run(db)
        except st.NotFoundError as exc:
            out["update_missing"] = type(exc).__name__

        # A batch: 25 writes per call, unprocessed items retried with backoff.
        events = [
            AuditEvent(actor_id="u_1", ts=T0, seq=i, action="view", target=f"doc/{i}")
            for i in range(30)
        ]
        result = st.BatchWrite(events).run(db)
        out["batch"] = (result.put, result.calls)

        # A transaction: all or nothing, with a reason per item when it is cancelled.
        transaction = (
            st.TransactWrite()
            .put(Actor.put(Actor(actor_id="u_2", display_name="Grace")))
            .delete(AuditEvent.delete(actor_id="u_1", ts=T0, seq=0))
            .put(Actor.create(ada))  # u_1 exists: cancels the whole transaction
        )
        try:
            transaction.run(db)
        except st.TransactionCanceledError as exc:
            out["reasons"] = [(r["entity"], r["code"]) for r in exc.reasons]
        out["grace"] = Actor.get(actor_id="u_2").run(db)  # None: nothing was written
        out["deleted"] = AuditEvent.delete(actor_id="u_1", ts=T0, seq=0, return_old=True).run(db)
    return out
