"""Unique emails per customer and handles per tenant, kept by guard items."""

from __future__ import annotations

from typing import Any

import singletable as st

app = st.Table("accounts")


class Customer(
    st.Entity,
    table=app,
    pk="CUST#{customer_id}",
    sk="PROFILE",
    # One constraint on email, one on the (tenant, handle) pair.
    unique=["email", ("tenant", "handle")],
):
    customer_id: str
    email: str
    tenant: str
    handle: str | None = None  # None is not guarded: many customers may have no handle


def main() -> dict[str, Any]:
    """Create, collide, move a value, and delete; return what happened."""
    out: dict[str, Any] = {}
    with st.embedded(app) as db:
        Customer.create(Customer(customer_id="c1", email="ada@x.org", tenant="t1")).run(db)
        try:
            Customer.create(Customer(customer_id="c2", email="ada@x.org", tenant="t1")).run(db)
        except st.UniqueConstraintError as exc:
            out["duplicate"] = (exc.fields, exc.value, exc.holder)

        # Changing a unique field moves its guard in the same transaction. Without the
        # old value the update reads it first; with .known(...) it is one request.
        Customer.update(customer_id="c1").set(email="ada@y.org").run(db)
        known = Customer.update(customer_id="c1").set(email="ada@z.org").known(email="ada@y.org")
        out["known_request"] = [next(iter(i)) for i in known.params()["TransactItems"]]
        known.run(db)

        # The released value is free again.
        Customer.create(Customer(customer_id="c2", email="ada@x.org", tenant="t1")).run(db)
        Customer.delete(customer_id="c2").run(db)  # releases the guard too
        out["explain"] = st.estimate_capacity(
            Customer.create(Customer(customer_id="c3", email="c@x.org", tenant="t1", handle="cy"))
        ).total
        try:
            st.BatchWrite(puts=[Customer(customer_id="c4", email="d@x.org", tenant="t1")])
        except st.RequestLimitError as exc:
            out["batch"] = str(exc)
    return out
