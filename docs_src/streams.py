"""A Lambda function that reacts to orders, with typed records and partial-batch failures."""

from __future__ import annotations

from typing import Any

import singletable as st

shop = st.Table("shop", stream="NEW_AND_OLD_IMAGES")


class Order(st.Entity, table=shop, pk="CUST#{customer_id}", sk="ORDER#{order_id}"):
    customer_id: str
    order_id: int
    total: int
    status: str = "placed"


router = st.StreamRouter(shop)
shipped: list[int] = []


@router.on(Order, "MODIFY")
def on_order_changed(change: st.ChangeRecord) -> None:
    assert isinstance(change.old, Order)
    assert isinstance(change.new, Order)
    if change.old.status != "shipped" and change.new.status == "shipped":
        shipped.append(change.new.order_id)


def handler(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """The Lambda entry point (configure ``FunctionResponseTypes: [ReportBatchItemFailures]``)."""
    return router.handle(event)


def sample_event() -> dict[str, Any]:
    """A Lambda event as DynamoDB Streams delivers it (one MODIFY record)."""
    before = Order(customer_id="c1", order_id=7, total=30)
    after = before.model_copy(update={"status": "shipped"})
    return {
        "Records": [
            {
                "eventID": "1",
                "eventName": "MODIFY",
                "eventSource": "aws:dynamodb",
                "dynamodb": {
                    "Keys": after.key(),
                    "OldImage": before.to_item(),
                    "NewImage": after.to_item(),
                    "SequenceNumber": "100",
                    "StreamViewType": "NEW_AND_OLD_IMAGES",
                },
            }
        ]
    }


def main() -> dict[str, Any]:
    """Decode the sample event and run the handler on it."""
    (change,) = st.decode_event(shop, sample_event())
    return {
        "decoded": (change.event, change.entity, change.key),
        "response": handler(sample_event()),
        "shipped": list(shipped),
    }
