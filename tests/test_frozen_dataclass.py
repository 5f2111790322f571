"""`frozen_dataclass` and `mutable_dataclass` behave as ``@dataclass(frozen=True)`` and
``@dataclass`` on the classes they accept.

Generated: a class shape (fields with or without defaults and factories, ``init``,
``repr``, ``compare`` and ``hash`` flags, with or without ``__post_init__``) is made both
ways, then the same calls are made on both: the same instances (repr, equality, hash,
``vars``, `dataclasses.fields`, ``replace``, ``asdict``, pickling) or the same error.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import re
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from singletable.types import frozen_dataclass, mutable_dataclass

# A field: (name, default kind, init, repr, compare, hash)
_NAMES = ["a", "b", "c", "d", "e"]
_field_spec = hs.tuples(
    hs.sampled_from(["none", "value", "factory"]),
    hs.booleans(),
    hs.booleans(),
    hs.booleans(),
    hs.sampled_from([None, True, False]),
)


def _make(
    specs: list[tuple[str, bool, bool, bool, bool | None]],
    post_init: bool,
    *,
    standard: bool,
    frozen: bool,
) -> type[Any]:
    namespace: dict[str, Any] = {"__annotations__": {}, "__doc__": "A generated class."}
    for name, (default, init, shown, compare, hashed) in zip(_NAMES, specs, strict=False):
        namespace["__annotations__"][name] = "int"
        options: dict[str, Any] = {"init": init, "repr": shown, "compare": compare, "hash": hashed}
        if default == "value":
            options["default"] = 7
        elif default == "factory":
            options["default_factory"] = tuple
        namespace[name] = dataclasses.field(**options)
    if post_init:

        def __post_init__(self: Any) -> None:
            object.__setattr__(self, "seen", True)

        namespace["__post_init__"] = __post_init__
    cls = types.new_class("Shape", (), {}, lambda ns: ns.update(namespace))
    cls.__module__ = __name__
    if standard:
        return dataclasses.dataclass(frozen=frozen)(cls)
    return frozen_dataclass(cls) if frozen else mutable_dataclass(cls)


def _outcome(cls: type[Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        obj = cls(*args, **kwargs)
    except TypeError as exc:
        # The generated __init__'s messages name the count of positional arguments its
        # own way ("from 2 to 4"); the kind of mistake is what must agree.
        message = str(exc).split("() ", 1)[1]
        return ("TypeError", message.split(" ")[0], re.findall(r"'(\w+)'", message))
    fields = [(f.name, f.init, f.repr, f.compare, f.hash) for f in dataclasses.fields(cls)]
    return (
        _attempt(lambda: repr(obj).split("(", 1)[1]),
        sorted(vars(obj).items()),
        fields,
        _attempt(lambda: hash(obj)),
        cls.__match_args__,
        _attempt(lambda: obj == copy.copy(obj)),
        _attempt(lambda: setattr(obj, "a", 1)),
        type(obj).__dataclass_params__.frozen,
    )


def _attempt(compute: Callable[[], Any]) -> Any:
    # An init=False field without a default is never set: both raise AttributeError.
    try:
        return compute()
    except (TypeError, AttributeError) as exc:
        return type(exc).__name__


@settings(max_examples=300, deadline=None)
@given(
    hs.lists(_field_spec, min_size=0, max_size=5),
    hs.booleans(),
    hs.booleans(),
    hs.lists(hs.integers(0, 3), max_size=6),
    hs.dictionaries(hs.sampled_from([*_NAMES, "zz"]), hs.integers(0, 3), max_size=3),
)
def test_instances_and_errors_are_the_standard_dataclasses(
    specs: list[tuple[str, bool, bool, bool, bool | None]],
    post_init: bool,
    frozen: bool,
    args: list[int],
    kwargs: dict[str, int],
) -> None:
    try:
        standard = _make(specs, post_init, standard=True, frozen=frozen)
    except (TypeError, ValueError) as exc:  # a default before a non-default field
        with pytest.raises(type(exc)):
            _make(specs, post_init, standard=False, frozen=frozen)
        return
    ours = _make(specs, post_init, standard=False, frozen=frozen)
    assert _outcome(ours, tuple(args), kwargs) == _outcome(standard, tuple(args), kwargs)


@frozen_dataclass
class Point:
    """A module-level class, so that pickle finds it."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = dataclasses.field(default_factory=tuple, compare=False)


def test_copies_pickles_replace_asdict_and_freeze() -> None:
    p = Point(1, tags=("a",))
    assert pickle.loads(pickle.dumps(p)) == p
    assert copy.deepcopy(p) == p
    assert dataclasses.replace(p, y=5) == Point(1, 5)
    assert dataclasses.asdict(p) == {"x": 1, "y": 0, "tags": ("a",)}
    assert Point(1, 2) == Point(1, 2, ("other",))  # tags: compare=False
    assert hash(Point(1, 2)) == hash(Point(1, 2, ("x",)))
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'y'"):
        del p.y
    assert repr(p) == "Point(x=1, y=0, tags=('a',))"
    assert Point.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert dataclasses.is_dataclass(Point)


def test_a_subclass_that_is_no_dataclass_keeps_its_own_attributes() -> None:
    class Labelled(Point):
        pass

    labelled = Labelled(3)
    labelled.label = "here"  # type: ignore[attr-defined]
    assert labelled.label == "here"  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        labelled.x = 4  # type: ignore[misc]


def test_classes_it_cannot_make_as_dataclass_would_are_refused() -> None:
    with pytest.raises(TypeError, match="defines __repr__"):

        @frozen_dataclass
        class OwnRepr:
            x: int

            def __repr__(self) -> str:
                return "x"

    with pytest.raises(TypeError, match="kw_only"):

        @frozen_dataclass
        class KeywordOnly:
            x: int = dataclasses.field(kw_only=True)


def test_the_library_classes_made_this_way_are_still_frozen_dataclasses() -> None:
    import singletable as st

    for cls in (st.GSI, st.LSI, st.NativeGSI, st.KeyPart, st.Projection, st.IndexKeys):
        assert dataclasses.is_dataclass(cls), cls
        assert cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]
    assert sys.modules["singletable.types"].frozen_dataclass is frozen_dataclass


def test_a_mutable_one_assigns_and_is_unhashable() -> None:
    @mutable_dataclass
    class Counter:
        name: str
        hits: list[int] = dataclasses.field(default_factory=list)

    counter = Counter("c")
    counter.hits.append(1)
    counter.name = "d"
    assert counter == Counter("d", [1])
    assert Counter.__hash__ is None
    assert (
        repr(counter)
        == "test_a_mutable_one_assigns_and_is_unhashable.<locals>.Counter(name='d', hits=[1])"
    )


def test_the_written_out_inits_take_the_fields_with_their_defaults() -> None:
    # Call, ItemRequest and Emit write their __init__ out (it runs per request or per item):
    # each must take exactly the fields, in order, with the fields' defaults.
    import inspect

    from singletable.operations import Call, Emit
    from singletable.operations.common import ItemRequest

    for cls in (Call, Emit, ItemRequest):
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
        taken = [(p.name, p.default) for p in parameters]
        fields = [
            (f.name, inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default)
            for f in dataclasses.fields(cls)
        ]
        assert taken == fields, cls
    assert Call("get_item", {"TableName": "t"}) == Call("get_item", {"TableName": "t"}, True)
    assert repr(Emit(3)) == "Emit(value=3)"
