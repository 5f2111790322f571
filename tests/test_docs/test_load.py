"""The example of docs/load.md runs and does what the page says."""

from docs_src import load


def test_load_example() -> None:
    out = load.main()
    assert out["written"] == (400, {"Customer": 100, "Order": 300})
    assert out["last_line"].startswith("load: 400 of 400 written (100%), 0 failed; ")
    message, written, resume_from = out["duplicate"]
    assert message.startswith("same primary key as items[0] (entity Order: PK='C#x', SK='O#011')")
    assert (written, resume_from) == (0, 0)
    assert out["invalid"] == [
        (
            3,
            "same primary key as line 2 (entity Order: PK='C#c1', SK='O#017'): the later item "
            "would silently overwrite the earlier one; give each key once",
        )
    ]
