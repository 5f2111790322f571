"""The examples of docs/uniqueness.md run and do what the page says."""

from docs_src import uniqueness


def test_uniqueness_example() -> None:
    out = uniqueness.main()
    assert out["duplicate"] == (("email",), {"email": "ada@x.org"}, {"customer_id": "c1"})
    assert out["known_request"] == ["Update", "Delete", "Put"]
    assert out["explain"] == 6.0  # the item and two guards, 2 WCU each in a transaction
    assert "unique fields" in out["batch"]
