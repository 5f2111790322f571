"""Which modules are public, and that docs and the top-level names keep to them.

singletable's public modules are the package itself, its top-level modules
(`singletable.errors`, `singletable.streams`, ...) and every package's ``__init__`` (each
layer, each tooling room): each of those has an ``__all__``. Every other module is an
implementation module, free to move. Chosen over ``_``-prefixed module names because the
layers already are packages whose ``__init__`` states the surface, and this test holds the
line: the docs import only public modules, and every top-level name is reachable from the
``__all__`` of a layer or room.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import singletable

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "singletable"
# Not imported by library code: a mypy plugin, and the `python -m singletable` entry point.
NOT_LIBRARY = {"singletable.mypy", "singletable.cli.__main__"}
# The test kit's modules that applications name themselves: its pytest plugin (``-p``,
# the entry point) and its hypothesis strategies (imported only with hypothesis installed).
KIT_MODULES = ["singletable.testing.plugin", "singletable.testing.strategies"]


def _public_modules() -> list[str]:
    names = ["singletable"]
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            names.append(".".join(parts[:-1]))
        elif len(parts) == 2:
            names.append(".".join(parts))
    names.extend(KIT_MODULES)
    return [name for name in names if name not in NOT_LIBRARY and name != "singletable"] + [
        "singletable"
    ]


def _doc_sources() -> list[tuple[str, str]]:
    """(where, python source) of every example the docs show or run."""
    sources = [
        (str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "docs_src").glob("*.py"))
    ]
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S):
            sources.append((str(page.relative_to(ROOT)), block))
    return sources


def _imported_modules(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a fragment shown in prose (an elided body); it imports nothing
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {name for name in names if name == "singletable" or name.startswith("singletable.")}


def test_every_public_module_states_its_surface() -> None:
    missing = [m for m in _public_modules() if not hasattr(importlib.import_module(m), "__all__")]
    assert missing == []


@pytest.mark.parametrize("module", _public_modules())
def test_every_name_a_public_module_exports_exists(module: str) -> None:
    namespace = importlib.import_module(module)
    assert [n for n in getattr(namespace, "__all__", []) if not hasattr(namespace, n)] == []


def test_the_docs_import_only_public_modules() -> None:
    public = set(_public_modules())
    offenders = sorted(
        f"{where}: {module}"
        for where, source in _doc_sources()
        for module in _imported_modules(source)
        if module not in public
    )
    assert offenders == []


def test_every_top_level_name_is_exported_by_a_layer_or_room() -> None:
    exporters: dict[int, list[str]] = {}
    for module in _public_modules():
        if module == "singletable":
            continue
        namespace = importlib.import_module(module)
        for name in getattr(namespace, "__all__", []):
            exporters.setdefault(id(getattr(namespace, name)), []).append(module)
    orphans = [
        name
        for name in singletable.__all__
        if name != "__version__" and id(getattr(singletable, name)) not in exporters
    ]
    assert orphans == []
