"""singletable.types: the lazy public names every package of singletable loads on first use."""

from __future__ import annotations

import collections
import sys
import types

import pytest

from singletable.types import lazy_names


def test_lazy_names_import_on_first_read_and_keep_the_value() -> None:
    package = types.ModuleType("lazy_probe")
    sys.modules["lazy_probe"] = package
    seen: list[object] = []
    try:
        load, listing = lazy_names("lazy_probe", {"OrderedDict": "collections"}, seen.append)
        vars(package).update(__getattr__=load, __dir__=listing)
        assert "OrderedDict" not in vars(package)
        assert "OrderedDict" in dir(package)
        loaded = package.OrderedDict
        assert loaded is collections.OrderedDict
        assert vars(package)["OrderedDict"] is loaded  # kept: not loaded twice
        assert seen == [loaded]
        with pytest.raises(AttributeError, match="module 'lazy_probe' has no attribute 'nope'"):
            package.nope  # noqa: B018
    finally:
        del sys.modules["lazy_probe"]
