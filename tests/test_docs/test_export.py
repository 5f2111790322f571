"""The export example of docs/load.md runs and does what the page says."""

from docs_src import export


def test_export_example() -> None:
    out = export.main()
    # 10 customers, 30 orders, 10 unique-email guards (read, not exported), 1 stranger.
    assert out["exported"] == (51, 40, {"Customer": 10, "Order": 30})
    assert out["skipped"] == {"unknown entity": 1}
    assert out["last_line"].startswith("export: 51 of ~51 scanned (100%), 40 written, 1 skipped; ")
    assert out["first"] == '{"_et":"Customer","cid":"c0","email":"c0@example.org"}'
    assert out["rejected"] == (
        '{"table": "shop", "reason": "no entity attribute \'_et\' (string)", '
        '"item": {"PK": {"S": "X"}, "SK": {"S": "Y"}}}\n'
    )
    assert out["same"]
    # One scan (the table is empty) then one batch: no single put per versioned item.
    assert out["versions"] == {
        "calls": 1,
        "copied": {"a": 1, "b": 2, "c": 3},
        "moved": 4,
        "refused": "table inventory is not empty (it holds the item PK='SKU#a', SK='STOCK')",
    }
