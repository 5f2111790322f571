"""Type aliases shared by every layer, how their value classes are made, and lazy public names."""

from __future__ import annotations

import dataclasses
import importlib
import reprlib
import sys
from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar, cast

from typing_extensions import dataclass_transform

__all__ = [
    "AttributeValue",
    "Item",
    "frozen_dataclass",
    "lazy_names",
    "mutable_dataclass",
]

#: A DynamoDB low-level attribute value, e.g. ``{"S": "abc"}`` or ``{"N": "42"}``.
AttributeValue: TypeAlias = dict[str, Any]
#: A DynamoDB item (or key) in low-level form: attribute name -> attribute value.
Item: TypeAlias = dict[str, AttributeValue]

_T = TypeVar("_T")
_MISSING: Any = dataclasses.MISSING
_object_setattr = object.__setattr__


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen_dataclass(cls: type[_T]) -> type[_T]:
    """``@dataclass(frozen=True)`` without compiling code: the same class in a tenth of the time.

    The standard decorator writes the source of six methods (``__init__``, ``__repr__``,
    ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``) and compiles each with
    ``exec``: about 0.4 ms a class, 14 ms of the 35 ms ``import singletable`` cost for its
    32 dataclasses (issue 24; benchmarks/README.md has the figures). Here the fields are
    collected by `dataclasses.dataclass` itself (``dataclasses.fields``, ``replace``,
    ``asdict``, ``is_dataclass`` and pydantic see a frozen dataclass) and the methods are
    closures over them, behaving as the generated ones: positional or keyword arguments,
    defaults and ``default_factory``, ``init=False`` fields, ``__post_init__``, field
    ``repr``/``compare``/``hash`` flags, and `dataclasses.FrozenInstanceError` on
    assignment; a class defining its own ``__init__`` keeps it, as with ``init=False``.
    Not supported (refused): ``InitVar``, ``kw_only``, a class defining any other of
    those methods. Its general ``__init__`` costs about 1 µs more a call than the generated
    one: the classes built per request or per item (`Call`, `ItemRequest`, `Emit`) write
    theirs out.
    """
    return _make(cls, frozen=True)


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def mutable_dataclass(cls: type[_T]) -> type[_T]:
    """``@dataclass`` (not frozen) made as `frozen_dataclass` makes its classes.

    Instances are unhashable (``__hash__`` is ``None``), and ``__init__`` assigns fields
    as the generated one does (through the class's ``__setattr__``).
    """
    return _make(cls, frozen=False)


def _make(cls: type[_T], *, frozen: bool) -> type[_T]:
    for name in ("__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        if name in cls.__dict__ and not (name == "__hash__" and cls.__dict__[name] is None):
            raise TypeError(f"{cls.__qualname__} defines {name}: use @dataclass")
    dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = dataclasses.fields(cast(Any, cls))
    declared = cls.__dataclass_fields__.values()  # type: ignore[attr-defined]
    if any(f.kw_only is True for f in fields) or any(_is_init_var(f.type) for f in declared):
        raise TypeError(f"{cls.__qualname__}: kw_only and InitVar fields are not supported")
    _refuse_required_after_optional(fields)
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    params.init = "__init__" not in cls.__dict__
    params.repr = params.eq = True
    params.frozen = frozen
    if "__init__" not in cls.__dict__:  # its own __init__: as @dataclass(init=False)
        init = _init(cls, fields, _object_setattr if frozen else setattr)
        setattr(cls, "__init__", init)  # noqa: B010 (mypy: no method-assign)
    setattr(cls, "__repr__", _repr([f.name for f in fields if f.repr]))  # noqa: B010
    compared = [f.name for f in fields if f.compare]
    setattr(cls, "__eq__", _eq(compared))  # noqa: B010
    if not frozen:
        setattr(cls, "__hash__", None)  # noqa: B010 (eq without frozen: unhashable)
        return cls
    hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
    setattr(cls, "__hash__", _hash(hashed))  # noqa: B010
    names = frozenset(f.name for f in fields)
    setattr(cls, "__setattr__", _frozen_setattr(cls, names))  # noqa: B010
    setattr(cls, "__delattr__", _frozen_delattr(cls, names))  # noqa: B010
    return cls


def _is_init_var(annotation: Any) -> bool:
    # Deferred annotations are strings: dataclasses itself recognises InitVar by name.
    if isinstance(annotation, str):
        return "InitVar" in annotation
    return isinstance(annotation, dataclasses.InitVar) or annotation is dataclasses.InitVar


def _refuse_required_after_optional(fields: tuple[dataclasses.Field[Any], ...]) -> None:
    optional = False
    for f in fields:
        if not f.init:
            continue
        if f.default is not _MISSING or f.default_factory is not _MISSING:
            optional = True
        elif optional:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _init(
    cls: type,
    fields: tuple[dataclasses.Field[Any], ...],
    assign: Callable[[Any, str, Any], None],
) -> Callable[..., None]:
    """``__init__``: arguments bound as the generated one binds them, set with ``assign``."""
    qualname = cls.__qualname__
    names = tuple(f.name for f in fields if f.init)
    count = len(names)
    known = frozenset(names)
    # (name, default, factory) of every field __init__ takes.
    optional = [(f.name, f.default, f.default_factory) for f in fields if f.init]
    # init=False fields: one with a default_factory is set; a plain default stays the class
    # attribute, and one with neither is left unset (for __post_init__ to set), as there.
    hidden: list[tuple[str, Callable[[], Any]]] = [
        (f.name, cast(Any, f.default_factory))
        for f in fields
        if not f.init and f.default_factory is not _MISSING
    ]
    post_init = hasattr(cls, "__post_init__")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) == count and not kwargs:  # the common calls: every field by position
            for name, value in zip(names, args, strict=True):
                assign(self, name, value)
        else:
            if args or len(kwargs) != count or not known.issuperset(kwargs):
                kwargs = _bind(qualname, names, optional, args, kwargs)
            for name in names:  # every field by name (or bound above)
                assign(self, name, kwargs[name])
        for name, factory in hidden:
            assign(self, name, factory())
        if post_init:
            self.__post_init__()

    __init__.__qualname__ = f"{qualname}.__init__"
    return __init__


def _bind(
    qualname: str,
    names: tuple[str, ...],
    optional: list[tuple[str, Any, Any]],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> dict[str, Any]:
    """Each field's value from ``args``, ``kwargs``, defaults and factories, or TypeError.

    The mistakes are found in the order Python's own binding finds them: keywords first.
    """
    values = dict(zip(names, args, strict=False))
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument {name!r}")
        if name in values:
            raise TypeError(f"{qualname}.__init__() got multiple values for argument {name!r}")
        values[name] = value
    if len(args) > len(names):
        raise TypeError(
            f"{qualname}.__init__() takes {len(names) + 1} positional arguments but "
            f"{len(args) + 1} were given"
        )
    missing = []
    for name, default, factory in optional:
        if name in values:
            continue
        if default is not _MISSING:
            values[name] = default
        elif factory is not _MISSING:
            values[name] = factory()
        else:
            missing.append(name)
    if missing:
        raise TypeError(
            f"{qualname}.__init__() missing {len(missing)} required positional "
            f"argument{'s' if len(missing) > 1 else ''}: {', '.join(map(repr, missing))}"
        )
    return values


def _repr(names: list[str]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _values(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    def values(obj: Any) -> tuple[Any, ...]:
        return tuple([getattr(obj, name) for name in names])

    return values


def _eq(names: list[str]) -> Callable[[Any, Any], Any]:
    values = _values(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(names: list[str]) -> Callable[[Any], int]:
    values = _values(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _frozen_setattr(cls: type[Any], names: frozenset[str]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _frozen_delattr(cls: type[Any], names: frozenset[str]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__


def lazy_names(
    package: str, names: dict[str, str], loaded: Callable[[Any], object] | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module ``__getattr__`` and ``__dir__`` that import ``names`` on first use.

    ``names`` maps each public name to the module defining it; a name is imported from
    there when first read, handed to ``loaded`` (if given) and kept in the package, so
    it is looked up only once. Start-up time is what it saves: a program that never
    reads the name never imports its module. A name may be one of the package's own
    submodules (``"lean": "singletable.io.lean"``): reading it imports the submodule,
    which is how the package's modules reach one they use only sometimes (issue 24).
    """
    namespace = sys.modules[package].__dict__

    def load(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        imported = importlib.import_module(module)
        value = imported if module == f"{package}.{name}" else getattr(imported, name)
        if loaded is not None:
            loaded(value)
        namespace[name] = value
        return value

    def listing() -> list[str]:
        return sorted(set(namespace) | set(names))

    return load, listing
