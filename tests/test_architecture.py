"""docs/architecture.md, the import-linter contracts and the tree agree, module by module."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "singletable"
# A mypy plugin: loaded by mypy, imported by nothing in the package, so in no layer.
OUTSIDE_THE_LAYERS = {"singletable.mypy"}


@dataclass(frozen=True)
class DocRow:
    """One row of a table in docs/architecture.md that names packages."""

    packages: tuple[str, ...]
    holds: str


@dataclass(frozen=True)
class LayersContract:
    """One ``type = "layers"`` contract of pyproject.toml, its layers fully named."""

    container: str | None
    layers: tuple[tuple[str, ...], ...]


def _doc_rows() -> list[DocRow]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    rows = []
    for line in text.splitlines():
        cells = line.split("|")
        if line.startswith("| ") and len(cells) > 3 and "`singletable" in cells[2]:
            packages = tuple(re.findall(r"`(singletable(?:\.\w+)*)`", cells[2]))
            rows.append(DocRow(packages, cells[3]))
    return rows


def _layers_contracts() -> list[LayersContract]:
    # tomllib is Python 3.11+ (we support 3.10); the contract blocks are simple to read.
    text = (ROOT / "pyproject.toml").read_text()
    contracts = []
    for block in text.split("[[tool.importlinter.contracts]]")[1:]:
        if 'type = "layers"' not in block:
            continue
        containers = re.findall(r'containers = \["([^"]+)"\]', block)
        (listed,) = re.findall(r"\nlayers = \[\n(.*?)\n\]", block, re.S)
        container = containers[0] if containers else None
        prefix = f"{container}." if container else ""
        layers = tuple(
            tuple(prefix + name.strip() for name in layer.split("|"))
            for layer in re.findall(r'"([^"]+)"', listed)
        )
        contracts.append(LayersContract(container, layers))
    return contracts


def _modules() -> list[str]:
    """Every module of the package, dotted (a package is its ``__init__``)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def test_the_documented_layers_are_the_checked_layers_in_the_same_order() -> None:
    rows = _doc_rows()
    for contract in _layers_contracts():
        if not all(
            (ROOT / name.replace(".", "/")).is_dir() for layer in contract.layers for name in layer
        ):
            # Layers that are modules (the expressions) are named in their package's row.
            continue
        depth = 2 if contract.container is None else contract.container.count(".") + 2
        documented = [
            sorted(row.packages)
            for row in rows
            if all(name.count(".") + 1 == depth for name in row.packages)
            and all(
                contract.container is None or name.startswith(f"{contract.container}.")
                for name in row.packages
            )
        ]
        assert documented == [sorted(layer) for layer in contract.layers], contract.container


def test_every_module_sits_in_a_layer_of_a_contract() -> None:
    contracts = _layers_contracts()
    top = next(c for c in contracts if c.container is None)
    layered = {name for layer in top.layers for name in layer}
    unplaced = []
    for module in _modules():
        if module == "singletable" or module in OUTSIDE_THE_LAYERS:
            continue
        top_name = ".".join(module.split(".")[:2])
        if top_name not in layered:
            unplaced.append(module)
        for contract in contracts:
            container = contract.container
            if container is None or not module.startswith(f"{container}."):
                continue
            # A module inside a container must belong to one of its rooms, not sit loose.
            rooms = {name for layer in contract.layers for name in layer}
            if not any(module == room or module.startswith(f"{room}.") for room in rooms):
                unplaced.append(module)
    assert unplaced == []


def test_every_module_is_named_in_the_row_of_its_package() -> None:
    rows = _doc_rows()
    documented = {name: row for row in rows for name in row.packages}
    missing = []
    for module in _modules():
        if module == "singletable" or module in OUTSIDE_THE_LAYERS or module in documented:
            continue
        # A module (or a package with no row of its own) is named, by its last part, in
        # the row of the nearest documented package above it.
        owner, _, stem = module.rpartition(".")
        while owner not in documented and "." in owner:
            owner = owner.rpartition(".")[0]
        row = documented.get(owner)
        if row is None or f"`{stem}`" not in row.holds:
            missing.append(module)
    assert missing == [], "name these modules in docs/architecture.md"


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
