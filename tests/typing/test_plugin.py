"""The ``singletable.mypy`` plugin, checked by running mypy as CI does.

One mypy run covers every file of this directory: the ``check_*.py`` files must raise
no error (their ``assert_type`` lines pin the types the plugin gives), and each file in
``negative/`` must raise exactly the errors its ``# E: <message>`` comments spell out,
on those lines and no others. mypy's cache lives in the temporary directory, so only the
first run in a fresh environment analyses pydantic, boto3 and singletable from scratch.
"""

from __future__ import annotations

import importlib
import inspect
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import mypy.api
import pytest

import singletable as st
import singletable.mypy

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
_MARKER = "  # E: "
_REPORTED = re.compile(r"(?P<path>[^:]+):(?P<line>\d+): error: (?P<message>.*)")

Error = tuple[str, int, str]


def expected_errors(path: Path) -> set[Error]:
    expected: set[Error] = set()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        for message in line.split(_MARKER)[1:]:
            expected.add((path.name, number, message.strip()))
    return expected


@pytest.fixture(scope="module")
def reported(monkeypatch_module: pytest.MonkeyPatch) -> set[Error]:
    # Paths relative to the repository, as CI runs mypy there with pyproject.toml's config.
    monkeypatch_module.chdir(ROOT)
    files = sorted(str(p.relative_to(ROOT)) for p in HERE.rglob("*.py"))
    cache = Path(tempfile.gettempdir()) / "singletable-typing-mypy-cache"
    stdout, stderr, _ = mypy.api.run(
        ["--config-file", "pyproject.toml", "--cache-dir", str(cache), "--no-pretty", *files]
    )
    assert not stderr, stderr
    errors: set[Error] = set()
    for line in stdout.splitlines():
        match = _REPORTED.fullmatch(line)
        if match:
            name = Path(match["path"]).name
            errors.add((name, int(match["line"]), match["message"]))
    assert "error" not in stdout or errors, stdout  # an output format this test cannot read
    return errors


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.mark.parametrize("path", sorted(HERE.glob("*.py")), ids=lambda p: p.name)
def test_positive_files_type_check(path: Path, reported: set[Error]) -> None:
    assert {e for e in reported if e[0] == path.name} == set()


@pytest.mark.parametrize("path", sorted((HERE / "negative").glob("[!_]*.py")), ids=lambda p: p.name)
def test_negative_files_report_exactly_the_expected_errors(
    path: Path, reported: set[Error]
) -> None:
    expected = expected_errors(path)
    assert expected, f"{path.name} states no expected error"
    assert sorted(e for e in reported if e[0] == path.name) == sorted(expected)


def test_every_message_names_the_entity() -> None:
    plugin_messages = [
        message
        for path in (HERE / "negative").glob("*.py")
        for _, _, message in expected_errors(path)
        if message.endswith("[singletable]")
    ]
    assert plugin_messages
    for message in plugin_messages:
        assert re.search(r"\b(Order|Device|Audit|Note)\b", message), message


@pytest.mark.parametrize(
    "fullname",
    [
        singletable.mypy._ENTITY,
        singletable.mypy._FIELD_REFS,
        singletable.mypy._FIELD_REF,
        singletable.mypy._QUERY,
        singletable.mypy._UPDATE,
        singletable.mypy._GET,
    ],
)
def test_the_plugin_names_classes_where_they_are_defined(fullname: str) -> None:
    # mypy knows a class by the module that defines it; a moved class would silently
    # switch a check off.
    module, _, name = fullname.rpartition(".")
    source = inspect.getsource(importlib.import_module(module))
    assert re.search(rf"^class {name}\b", source, re.MULTILINE), f"{name} not in {module}"
    assert st.IndexKeys.__qualname__ == singletable.mypy._INDEX_KEYS_NAME


def test_the_docs_show_only_messages_the_tests_expect() -> None:
    # docs/typing.md quotes mypy's messages: each must be one a negative file expects.
    expected = {m for p in (HERE / "negative").glob("*.py") for _, _, m in expected_errors(p)}
    quoted = re.findall(r"^error: (.*)$", (ROOT / "docs" / "typing.md").read_text(), re.MULTILINE)
    assert quoted
    assert sorted(set(quoted) - expected) == []
