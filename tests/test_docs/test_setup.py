"""The docs say what the code does: set-up commands, reserved names, documented arguments.

Issue 26, item 12: `docs/index.md` gave other set-up commands than the README,
`scripts/install-tests` installed into ``python3`` whatever virtualenv was meant, and the
reserved field names, `StreamRouter.on_guard` / `on_unknown`, `Connection.delete_table` /
`table_exists` and `AsyncConnection`'s arguments were documented nowhere.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
from pathlib import Path

import pytest
from pydantic import BaseModel

from singletable import AsyncConnection, Connection, Entity, StreamRouter
from singletable.model.compile import _KEY_OPTION_NAMES

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def section(path: Path, heading: str) -> str:
    """The text under a ``## heading`` up to the next heading of that level."""
    text = path.read_text()
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def sh_commands(text: str) -> list[str]:
    """The command lines of the ``sh`` code blocks in ``text``, in order."""
    blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_docs_set_up_commands_are_the_readmes() -> None:
    readme = sh_commands(section(ROOT / "README.md", "Try it"))
    index = sh_commands(section(DOCS / "index.md", "Set-up"))
    assert readme == index
    assert "bash scripts/install-tests && python3 -m pytest" in index


def _fake_python(directory: Path, log: Path) -> Path:
    """An executable that records how it was called, standing in for an interpreter."""
    directory.mkdir(parents=True)
    fake = directory / "python"
    fake.write_text(f'#!/bin/sh\necho "$0 $*" >> {log}\n')
    fake.chmod(0o755)
    return fake


def _install_tests(cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "VIRTUAL_ENV")}
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "install-tests")],
        cwd=cwd,
        env=environment | env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


PIP = "-m pip install -e .[test] --config-settings editable_mode=compat"


def test_install_tests_installs_into_the_given_interpreter(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    fake = _fake_python(tmp_path / "venv" / "bin", log)
    # A path relative to the caller's directory, as a user types it.
    done = _install_tests(tmp_path, PYTHON="venv/bin/python")
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == [f"{fake} {PIP}"]
    assert f"installing into {fake}" in done.stdout


def test_install_tests_installs_into_the_active_virtualenv(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    fake = _fake_python(tmp_path / "venv" / "bin", log)
    done = _install_tests(tmp_path, VIRTUAL_ENV=str(tmp_path / "venv"))
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == [f"{fake} {PIP}"]


def test_install_tests_refuses_a_missing_interpreter(tmp_path: Path) -> None:
    done = _install_tests(tmp_path, PYTHON="nowhere/bin/python")
    assert done.returncode == 1
    assert "no Python interpreter at" in done.stderr


def _marked(name: str) -> set[str]:
    text = (DOCS / "keys.md").read_text()
    match = re.search(f"<!-- {name} -->(.*?)<!-- /{name} -->", text, re.DOTALL)
    assert match is not None, name
    return set(re.findall(r"`([^`]+)`", match.group(1)))


def test_the_reserved_field_names_in_the_docs_are_the_models() -> None:
    entity_names = {
        name
        for base in Entity.__mro__
        if base not in BaseModel.__mro__
        for name in vars(base)
        if not name.startswith("_")
    } - {"model_config"}
    assert _marked("reserved-entity-names") == entity_names
    assert _marked("reserved-key-names") == set(_KEY_OPTION_NAMES)
    for name in sorted(entity_names):
        with pytest.raises(TypeError, match=f"shadows Entity.{name}"):
            type("Shadow", (Entity,), {"__annotations__": {"a": str, name: str}})


def _documented_arguments(path: Path, heading: str) -> set[str]:
    rows = re.findall(r"^\| `(\w+)` \|", section(path, heading), re.MULTILINE)
    return set(rows)


@pytest.mark.parametrize(
    ("cls", "page", "heading"),
    [
        (Connection, DOCS / "testing.md", "Connections and tables"),
        (AsyncConnection, DOCS / "fastapi.md", "`AsyncConnection`"),
    ],
)
def test_every_connection_argument_is_documented(cls: type, page: Path, heading: str) -> None:
    parameters = set(inspect.signature(cls).parameters)
    assert _documented_arguments(page, heading) == parameters


def test_table_management_and_router_subscriptions_are_documented() -> None:
    testing = section(DOCS / "testing.md", "Connections and tables")
    for method in ("create_table", "delete_table", "table_exists"):
        assert f"db.{method}(" in testing
        assert hasattr(Connection, method)
        assert hasattr(AsyncConnection, method)
    streams = (DOCS / "streams.md").read_text()
    public = {n for n in vars(StreamRouter) if not n.startswith("_")}
    assert public == {"on", "on_unknown", "on_guard", "dispatch", "handle"}
    for name in public:
        assert re.search(rf"`(@router\.|router\.)?{name}\b", streams), name


def test_screenshot_commands_in_the_docs_say_chromium_needs_no_sandbox_as_root() -> None:
    pages = [*DOCS.glob("*.md"), ROOT / "README.md"]
    commands = [
        (page, line)
        for page in pages
        for line in page.read_text().splitlines()
        if "--screenshot" in line
    ]
    assert commands, "the browser docs show a screenshot command"
    for page, line in commands:
        assert "--no-sandbox" in line, page
        assert "as root" in page.read_text(), page
