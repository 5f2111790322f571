"""The live key-move example of docs/schema.md: updates on either shape are never lost."""

import pytest

from docs_src import live_migration


def test_updates_before_and_after_the_move_all_count(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert live_migration.main() == {"a": 2, "b": 5, "c": 0}
    assert "{'a': 2, 'b': 5, 'c': 0}" in capsys.readouterr().out
