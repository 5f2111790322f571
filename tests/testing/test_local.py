"""The DynamoDB Local launcher's refusals (it is started for real by the sample app's run
on DynamoDB Local: docs/testing-apps.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from singletable.testing import DynamoDBLocalError, dynamodb_local, local


def test_no_installation_says_how_to_install(tmp_path: Path) -> None:
    with pytest.raises(
        DynamoDBLocalError, match=r"no DynamoDBLocal\.jar under .*dynamodb-local install"
    ):
        local.find_jar(tmp_path)


def test_refuses_where_it_cannot_be_confined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "DynamoDBLocal.jar").touch()
    monkeypatch.setattr(local, "only_loopback", lambda: False)
    real_which = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda name: None if name == "unshare" else real_which(name)
    )
    with (
        pytest.raises(
            DynamoDBLocalError,
            match="refusing to start DynamoDB Local: it listens on every interface",
        ),
        dynamodb_local(tmp_path),
    ):
        pass


def test_this_namespace_is_read_from_proc() -> None:
    names = local.interfaces()
    assert "lo" in names
    assert local.only_loopback() == (names == ["lo"])
