"""``import singletable`` leaves the parts most programs never use unloaded (issue 13).

Tooling, streams and the asyncio executor are loaded on first use of their names (the
module ``__getattr__`` of `singletable` and `singletable.io`). One module-level import of
them anywhere in the eager part would load them at start-up again, with nothing else
failing; a fresh interpreter shows which modules ``import singletable`` loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import singletable
import singletable.io

ROOT = Path(__file__).resolve().parent.parent

#: Loaded on first use only: the modules behind the lazy names, and the layers above them.
LAZY = {*singletable._LAZY.values(), *singletable.io._LAZY.values()}
LAZY_PACKAGES = ("singletable.tooling", "singletable.cli", "singletable.examples")
#: Loaded where they are used (issue 24, cold start): the lean transport by a `Connection`
#: that uses it, guarded writes by entities with unique fields, queries (their bounds,
#: ranges, cursors and reserved-item checks), table creation, pydantic's TypeAdapter by
#: updates, orjson by datetime key codecs.
LOADED_ON_USE = {
    "singletable.io.botocore_internals",
    "singletable.io.lean",
    "singletable.io.lean_endpoint",
    "singletable.io.lean_http",
    "singletable.io.lean_spans",
    "singletable.keys.ranges",
    "singletable.model.jobs",
    "singletable.model.wire",
    "singletable.operations.bounds",
    "singletable.operations.cursor",
    "singletable.operations.guarded",
    "singletable.operations.native",
    "singletable.operations.tables",
    "pydantic.type_adapter",
    "orjson",
}
#: Third-party modules that only the lazy parts (or tests) load.
THIRD_PARTY = {"asyncio", "aiobotocore", "moto", "tqdm"}

_PROGRAM = """
import json, sys
import singletable
eager = sorted(sys.modules)
for name in singletable._LAZY:
    getattr(singletable, name)
for name in singletable.io._LAZY:
    getattr(singletable.io, name)
print(json.dumps({"eager": eager, "after_use": sorted(sys.modules)}))
"""


def _loaded() -> dict[str, set[str]]:
    # Run from the checkout's root, as `python3 -m pytest` is: `-c` puts it first on sys.path.
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return {key: set(modules) for key, modules in json.loads(done.stdout).items()}


def test_import_singletable_loads_none_of_the_lazy_parts() -> None:
    loaded = _loaded()
    eager = loaded["eager"]
    assert "singletable.expressions.fields" in eager  # the program did import singletable
    assert sorted(eager & LAZY) == []
    assert sorted(m for m in eager if m.startswith(LAZY_PACKAGES)) == []
    assert sorted(eager & THIRD_PARTY) == []
    assert sorted(eager & LOADED_ON_USE) == []
    # The lazy names do come from those modules: using them loads every one.
    assert sorted(LAZY - loaded["after_use"]) == []
    assert "asyncio" in loaded["after_use"]
