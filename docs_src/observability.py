"""Tracing an order from the request that writes it to the stream handler that reacts to it.

The writer stores the current ``traceparent`` in the item; the Lambda stream handler's
`StreamRouter` continues that trace (``around=stream_tracing()``), so the handler's work
appears in the trace of the request that placed the order.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.instrumentation.botocore import BotocoreInstrumentor
from opentelemetry.sdk.trace import TracerProvider

import singletable as st
from singletable.io import stream_tracing, traceparent

shop = st.Table("shop", stream="NEW_IMAGE")


class Order(st.Entity, table=shop, pk="CUST#{customer_id}", sk="ORDER#{order_id}"):
    customer_id: str
    order_id: int
    total: int
    #: The trace of the request that wrote the order, for the stream handler to continue.
    traceparent: str | None = None


# --8<-- [start:writer]
def place_order(db: st.Connection, customer_id: str, order_id: int, total: int) -> Order:
    """Write an order carrying the current trace (``None`` when nothing is traced)."""
    order = Order(
        customer_id=customer_id, order_id=order_id, total=total, traceparent=traceparent()
    )
    return Order.create(order).run(db)


# --8<-- [end:writer]

# --8<-- [start:handler]
router = st.StreamRouter(shop, around=stream_tracing())
confirmed: list[int] = []


@router.on(Order, "INSERT")
def confirm(change: st.ChangeRecord) -> None:
    assert isinstance(change.new, Order)
    confirmed.append(change.new.order_id)


def handler(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """The Lambda entry point: one span per record, in the trace its order carries."""
    return router.handle(event)


# --8<-- [end:handler]


def instrument(tracer_provider: TracerProvider) -> None:
    """What an application does once at start-up, besides setting its SDK's providers."""
    BotocoreInstrumentor().instrument(tracer_provider=tracer_provider)  # type: ignore[no-untyped-call]


def stream_event(order: Order) -> dict[str, Any]:
    """The Lambda event DynamoDB Streams delivers for the order's INSERT."""
    return {
        "Records": [
            {
                "eventID": "1",
                "eventName": "INSERT",
                "eventSource": "aws:dynamodb",
                "dynamodb": {
                    "Keys": order.key(),
                    "NewImage": order.to_item(),
                    "SequenceNumber": "100",
                    "StreamViewType": "NEW_IMAGE",
                },
            }
        ]
    }


def main(db: st.Connection, tracer_provider: TracerProvider) -> dict[str, Any]:
    """Place an order inside a request's span, then run the stream handler on its record."""
    tracer = tracer_provider.get_tracer("shop")
    with tracer.start_as_current_span("POST /orders"):
        order = place_order(db, "c1", 7, 30)
    response = handler(stream_event(order))
    return {"order": order, "response": response, "confirmed": list(confirmed)}
