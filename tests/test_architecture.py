"""The layer table in docs/architecture.md, the import-linter contract and the tree agree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "singletable"


def _doc_layers() -> list[list[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`singletable" in line]
    return [re.findall(r"`(singletable(?:\.\w+)?)`", row.split("|")[2]) for row in rows]


def _contract_layers() -> list[list[str]]:
    # tomllib is Python 3.11+; the contract's layer list is simple enough to read directly.
    text = (ROOT / "pyproject.toml").read_text()
    (block,) = re.findall(r'type = "layers"\nlayers = \[\n(.*?)\n\]', text, re.S)
    layers = re.findall(r'"([^"]+)"', block)
    return [[name.strip() for name in layer.split("|")] for layer in layers]


def _top_level_modules() -> set[str]:
    names = set()
    for path in PACKAGE.iterdir():
        if path.name.startswith("_") or path.name == "py.typed":
            continue
        if path.is_dir() and (path / "__init__.py").exists():
            names.add(f"singletable.{path.name}")
        elif path.suffix == ".py":
            names.add(f"singletable.{path.stem}")
    return names


def test_the_documented_layers_are_the_checked_layers_in_the_same_order() -> None:
    assert [sorted(layer) for layer in _doc_layers()] == [
        sorted(layer) for layer in _contract_layers()
    ]


def test_every_top_level_module_belongs_to_a_layer() -> None:
    layered = {name for layer in _contract_layers() for name in layer}
    # singletable.mypy is a mypy plugin: loaded by mypy, imported by nothing here.
    assert _top_level_modules() - {"singletable.mypy"} == layered


def test_no_function_level_imports_of_singletable_below_the_cli() -> None:
    # A lazy import inside a function is how cycles hide; only the CLI defers imports
    # (for start-up time), and only of layers below it.
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "cli" in path.relative_to(PACKAGE).parts:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if (
                        isinstance(inner, ast.ImportFrom)
                        and inner.module
                        and inner.module.startswith("singletable")
                    ):
                        offenders.append(f"{path.relative_to(ROOT)}:{inner.lineno}")
    assert offenders == []
