"""The ``singletable`` command run in-process, and model modules on disk for it to load."""

from __future__ import annotations

import contextlib
import io
import itertools
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from singletable.cli import main

_MODULES = itertools.count()


def run(*argv: str) -> tuple[int, str]:
    """``singletable ARGV``: its exit code and what it wrote to its output."""
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


@contextlib.contextmanager
def model_module(tmp_path: Path, stem: str, source: str) -> Iterator[ModuleType]:
    """``source`` as a module on disk (the CLI imports it by ``.path``), imported here too.

    The same classes on both sides: what the command writes, the test reads with them.
    """
    name = f"{stem}_{next(_MODULES)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        module = __import__(name)
    finally:
        sys.path.remove(str(tmp_path))
    module.path = str(path)  # type: ignore[attr-defined]
    try:
        yield module
    finally:
        sys.modules.pop(name, None)
