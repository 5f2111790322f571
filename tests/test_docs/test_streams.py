"""The examples of docs/streams.md run and do what the page says."""

from docs_src import streams


def test_streams_example() -> None:
    out = streams.main()
    assert out["decoded"] == ("MODIFY", streams.Order, {"customer_id": "c1", "order_id": 7})
    assert out["response"] == {"batchItemFailures": []}
    assert out["shipped"] == [7]
