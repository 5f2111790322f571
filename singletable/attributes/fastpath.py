"""Attribute codecs' fast paths as source text, for the generated item encoders/decoders.

A code generator (`singletable.model.codegen`) asks each field's codec for its fast path
instead of reading the codec's internals: the codec knows which values it can encode
without checks (a ``str``, an ``int`` within 38 digits, a UTC ``datetime``, a list whose
elements all take their own fast path, ...), which text encodes them, how large the
result can be, and which function to call for everything else. The generated code then
does the same work as the codec's ``to_av`` closure without a call per field, and bounds
the item's size while it encodes instead of walking the finished item again.

Two forms:

* `Expr`: a single expression with a guard, for scalars. Containers build
  comprehensions from their elements' expressions (``[{'S': e} for e in x if e.__class__
  is str]``, then one length comparison decides whether every element took it).
* `FastPath.emit`: statements, for anything else (nested models, lists of models, maps
  of lists, ``Any``). Every path ends either in the fast form or in exactly the codec's
  own ``to_av`` call, so results and errors are the codec's.

Size bounds: generated code keeps two running counters, ``n`` (characters of text, at
most 4 UTF-8 bytes each) and ``exact`` (bytes), plus a static bound known at generation
time (`Writer.bound`). Their sum is never below the item's size, so the exact size is
computed only when the sum exceeds the item limit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, NamedTuple

from singletable.attributes.convert import sized_list, sized_map, to_attribute_value_sized
from singletable.attributes.size import (
    MAX_NAME_BYTES,
    MAX_NESTING,
    attribute_value_size,
    check_nesting,
    long_name,
    nesting_error,
)
from singletable.errors import ItemEncodeError, ItemTooDeepError

__all__ = [
    "DecodeExpr",
    "Expr",
    "FastPath",
    "Writer",
    "counts_levels",
    "emit_attribute",
    "orjson_dumps",
    "orjson_text",
]

_NULL = {"NULL": True}

_NOT_LOADED: Any = object()
#: orjson's ``dumps`` (``None`` without the ``lean`` extra), imported when the first fast
#: path asks for it, not with ``import singletable``: loading the extension was 10 M
#: instructions, 8% of that import (issue 24, cold start).
_orjson_dumps: Callable[[Any], bytes] | None = _NOT_LOADED


def orjson_dumps() -> Callable[[Any], bytes] | None:
    """The ``dumps`` of orjson, or ``None`` when the ``lean`` extra is not installed.

    It writes datetimes, dates and UUIDs in C, the same text as their ``isoformat`` and
    ``str`` (in CPython, ``isoformat(timespec=...)`` goes through ``PyUnicode_FromFormat``
    and ``UUID.__str__`` is Python code); generated fast paths call it inline.
    """
    global _orjson_dumps
    if _orjson_dumps is _NOT_LOADED:
        try:
            from orjson import dumps
        except ImportError:  # pragma: no cover - the ``lean`` extra is not installed
            _orjson_dumps = None
        else:
            _orjson_dumps = dumps
    return _orjson_dumps


def orjson_text(w: Writer, x: str, stdlib: str) -> str:
    """Source of the text orjson writes for ``x`` (inside its quotes), or ``stdlib``.

    For a date or a UUID, orjson's text is ``isoformat()``'s and ``str()``'s; ``stdlib``
    (that call) is the source used where the ``lean`` extra is not installed.
    """
    dumps = orjson_dumps()
    return stdlib if dumps is None else f"{w.ref(dumps, 'orjson_dumps')}({x})[1:-1].decode()"


def _times(nbytes: int, count: str) -> str:
    """Source of ``nbytes * count``, or ``count`` alone for 1.

    A ``dict[str, str]`` map's bound then costs one multiplication fewer (-80
    instructions an item, callgrind).
    """
    return count if nbytes == 1 else f"{nbytes} * {count}"


class Writer:
    """An indented source builder with named constants and the size-bound bookkeeping.

    Attributes:
        lines: The generated lines so far.
        values: Constants and callables the source refers to, by generated name.
        static: Bytes the item is known (at generation time) to stay under.
    """

    def __init__(self, depth: int = 1) -> None:
        self.lines: list[str] = []
        self.values: dict[str, Any] = {}
        self._ids: dict[int, str] = {}
        self.depth = depth
        self.static = 0
        #: Static bytes of one iteration of the loop being emitted (None outside loops).
        self._loop_static: int | None = None
        self._counter = 0
        #: Nested model classes being expanded inline (a recursive model stops there).
        self.expanding: set[type[Any]] = set()

    def __call__(self, line: str) -> None:
        """Append one line at the current indentation."""
        self.lines.append("    " * self.depth + line)

    def indent(self) -> None:
        """Indent the lines that follow."""
        self.depth += 1

    def dedent(self) -> None:
        """Undo one `indent`."""
        self.depth -= 1

    @contextlib.contextmanager
    def block(self, header: str) -> Iterator[None]:
        """Emit ``header`` (``if ...:``, ``else:``) and indent what follows."""
        self(header)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    @contextlib.contextmanager
    def loop(self, header: str, count: str) -> Iterator[None]:
        """Like `block`, for a loop of ``count`` (an expression) iterations.

        The static bounds inside it are added once after it, times ``count``: one
        addition per loop instead of one per iteration, and never an undercount (a
        branch the iteration did not take is counted too).
        """
        outer = self._loop_static
        self._loop_static = 0
        try:
            with self.block(header):
                yield
            per_iteration = self._loop_static
        finally:
            self._loop_static = outer
        if per_iteration:
            self(f"exact += {_times(per_iteration, count)}")

    def ref(self, value: Any, hint: str) -> str:
        """The generated name under which the source refers to ``value``."""
        known = self._ids.get(id(value))
        if known is not None:
            return known
        name = f"_{hint}{len(self.values)}"
        self.values[name] = value
        self._ids[id(value)] = name
        return name

    def var(self, prefix: str) -> str:
        """A fresh local variable name."""
        self._counter += 1
        return f"{prefix}{self._counter}"

    def bound(self, nbytes: int) -> None:
        """Add ``nbytes`` to the size bound: statically, or at run time inside a loop."""
        if self._loop_static is not None:
            self._loop_static += nbytes
        else:
            self.static += nbytes


class Expr(NamedTuple):
    """A scalar codec's fast path as one guarded expression over a variable.

    Attributes:
        guard: True for the values the fast path handles (may bind names with ``:=``
            that ``scalar`` uses).
        kind: The attribute value's type letter: ``S``, ``N``, ``B`` or ``BOOL``.
        scalar: The expression inside the attribute value (``x``, ``str(x)``, ...).
        static: Bytes the value takes at most, besides ``chars`` and ``nbytes``.
        chars: Expression: characters of text the value stores (each at most 4 bytes).
        nbytes: Expression: bytes the value stores exactly (raw ``B`` values).
        omit: Expression: when true (after ``guard``), the attribute is left out (an
            empty top-level set); only the top level can omit, so containers and nested
            models do not use an expression that has one.
        setup: Statements to run before ``guard`` is evaluated (and that the other
            expressions may rely on); only with ``omit``, so only at the top level.
        chars_when_omitted: ``chars`` is 0 whenever ``omit`` holds (a counter the setup
            leaves at 0), so it needs no test of ``omit``.
    """

    guard: str
    kind: str
    scalar: str
    static: int = 0
    chars: str | None = None
    nbytes: str | None = None
    omit: str | None = None
    setup: tuple[str, ...] = ()
    chars_when_omitted: bool = False

    @property
    def value(self) -> str:
        """The attribute value expression."""
        return f"{{{self.kind!r}: {self.scalar}}}"


class DecodeExpr(NamedTuple):
    """A codec's decoding fast path: an expression over ``av``, and what makes it fail.

    Attributes:
        expression: Evaluates to the decoded value.
        errors: The exception names (a tuple's source) that send ``av`` to the codec.
    """

    expression: str
    errors: str = "KeyError, TypeError"


class FastPath:
    """A codec's encoder as source; the base class is the codec's call, with its size.

    Subclasses override `expression` (scalars) or `emit` (containers), and `decode`.

    Args:
        to_av: The codec's own encoder; every value off the fast path goes to it.
        nullable: Whether ``None`` is a valid value (stored NULL, or omitted).
    """

    #: Whether the codec may leave out a value other than None (an empty top-level set,
    #: for a codec the generator knows nothing of): the generated code then checks.
    omits_values: ClassVar[bool] = True
    #: Levels of lists and maps the codec's values hold at most, None if unbounded or
    #: unknown (a codec the generator knows nothing of); scalar codecs say 0.
    levels: ClassVar[int | None] = None

    def __init__(self, to_av: Callable[[Any], Any], *, nullable: bool = False) -> None:
        self.to_av = to_av
        self.nullable = nullable
        #: The codec's decoder, for decode expressions that defer to it (set by the codec).
        self.from_av: Callable[[Any], Any] | None = None

    def expression(self, w: Writer, x: str) -> Expr | None:
        """The single-expression fast path over variable ``x``, or None if there is none."""
        del w, x
        return None

    def nesting(self, expanding: frozenset[type[Any]] = frozenset()) -> int | None:
        """Levels of lists and maps a value holds at most; None when its type does not say.

        ``expanding``: the nested models being looked into (a recursive one is unbounded).
        """
        del expanding
        return self.levels

    def decode(self, w: Writer, av: str, *, lax: bool = False) -> DecodeExpr | None:
        """An inline decoding expression over ``av``, or None to call the codec.

        With ``lax`` the expression may give stored text that pydantic parses into the
        field's value itself (numbers, UUIDs): the caller has checked that the field
        validates in lax mode and that no validator of the user's sees the raw value.
        """
        del w, av, lax
        return None

    def slow(self, w: Writer, x: str, store: str) -> None:
        """Emit the codec's own call for ``x``, storing a non-omitted result and its size."""
        av = w.var("av")
        w(f"{av} = {w.ref(self.to_av, 'encode')}({x})")
        with w.block(f"if {av} is not None:"):
            w(store.format(av))
            w(f"exact += {w.ref(attribute_value_size, 'av_size')}({av})")

    def emit(self, w: Writer, x: str, store: str) -> None:
        """Emit code encoding ``x`` and running ``store.format(attribute_value)``.

        The code adds a bound of the value's size to ``n`` / ``exact`` / `Writer.bound`.
        """
        expr = self.expression(w, x)
        if expr is None:
            self.slow(w, x, store)
        else:
            self.emit_expression(w, x, store, expr)

    def emit_expression(
        self, w: Writer, x: str, store: str, expr: Expr, *, otherwise: str = "else:"
    ) -> None:
        """Emit ``expr`` guarded, with the codec's call for the values it does not take.

        ``otherwise`` is the header of the branch that calls the codec.
        """
        with w.block(f"if {expr.guard}:"):
            w(store.format(expr.value))
            w.bound(expr.static)
            if expr.chars is not None:
                w(f"n += {expr.chars}")
            if expr.nbytes is not None:
                w(f"exact += {expr.nbytes}")
        with w.block(otherwise):
            self.slow(w, x, store)


def _level_above(children: list[FastPath], expanding: frozenset[type[Any]]) -> int | None:
    """`FastPath.nesting` of a list or map holding ``children``: one level above the deepest."""
    deepest = 0
    for child in children:
        levels = child.nesting(expanding)
        if levels is None:
            return None
        deepest = max(deepest, levels)
    return deepest + 1


def _sum_over(expression: str, element: str, iterable: str, empty: str = "''") -> str:
    """Source summing ``expression`` (over ``element``) across ``iterable``.

    ``empty`` is the empty value of the elements' type (``''`` for text, ``b''`` for
    bytes): the sum of their lengths is the length of their join.
    """
    if expression == f"len({element})":
        # Only ever over exact strs or bytes (the guard checked each): joining them is
        # the cheapest way to count their characters.
        return f"len({empty}.join({iterable}))"
    return f"sum([{expression} for {element} in {iterable}])"


def _element_sizes(
    expr: Expr, e: str, iterable: str, overhead: int, length: str
) -> tuple[str | None, str | None]:
    """(chars, bytes) expressions bounding elements ``expr`` encodes, ``overhead`` each.

    Per-element bytes go into the character count when they are at most 4 (a character
    counts 4 bytes), so that a list of strings costs one expression.
    """
    per_element = overhead + expr.static
    chars: list[str] = []
    nbytes: list[str] = []
    if 0 < per_element <= 4:
        chars.append(length)
    elif per_element:
        nbytes.append(f"{per_element} * {length}")
    if expr.chars is not None:
        chars.append(_sum_over(expr.chars, e, iterable))
    if expr.nbytes is not None:
        nbytes.append(_sum_over(expr.nbytes, e, iterable, empty=repr(b"")))
    return " + ".join(chars) or None, " + ".join(nbytes) or None


def _count_elements(
    w: Writer, expr: Expr, e: str, iterable: str, overhead: int, *, length: str | None = None
) -> None:
    """Emit the size bound of elements ``expr`` encoded, each with ``overhead`` bytes."""
    chars, nbytes = _element_sizes(expr, e, iterable, overhead, length or f"len({iterable})")
    if chars is not None:
        w(f"n += {chars}")
    if nbytes is not None:
        w(f"exact += {nbytes}")


class ListFast(FastPath):
    """``list`` / ``tuple`` / ``Sequence`` of one element codec -> ``L``."""

    omits_values = False

    def __init__(self, to_av: Callable[[Any], Any], item: FastPath, *, nullable: bool) -> None:
        super().__init__(to_av, nullable=nullable)
        self.item = item

    def nesting(self, expanding: frozenset[type[Any]] = frozenset()) -> int | None:
        return _level_above([self.item], expanding)

    def expression(self, w: Writer, x: str) -> Expr | None:
        e, elements = w.var("e"), w.var("elements")
        expr = self.item.expression(w, e)
        if expr is None or expr.omit is not None:
            return None
        guard = (
            f"({x}.__class__ is list or {x}.__class__ is tuple) and "
            f"len({elements} := [{expr.value} for {e} in {x} if {expr.guard}]) == len({x})"
        )
        chars, nbytes = _element_sizes(expr, e, x, 1, f"len({x})")
        return Expr(guard, "L", elements, static=3, chars=chars, nbytes=nbytes)

    def emit(self, w: Writer, x: str, store: str) -> None:
        if isinstance(self.item, GenericFast):
            # list[Any]: as for dict[str, Any], one call of the runtime converter.
            with w.block(f"if {x}.__class__ is list or {x}.__class__ is tuple:"):
                self.item.emit_sized(w, x, store, self, sized_list)
            with w.block("else:"):
                self.slow(w, x, store)
            return
        with w.block(f"if {x}.__class__ is list or {x}.__class__ is tuple:"):
            e, elements = w.var("e"), w.var("elements")
            expr = self.item.expression(w, e)
            if expr is not None and expr.omit is None:
                # Every element takes its fast path, or the whole list goes to the codec.
                w(f"{elements} = [{expr.value} for {e} in {x} if {expr.guard}]")
                with w.block(f"if len({elements}) == len({x}):"):
                    w(store.format(f"{{'L': {elements}}}"))
                    w.bound(3)
                    _count_elements(w, expr, e, x, 1)
                with w.block("else:"):
                    self.slow(w, x, store)
            else:
                w(f"{elements} = []")
                with w.loop(f"for {e} in {x}:", f"len({x})"):
                    self.item.emit(w, e, f"{elements}.append({{}})")
                    w.bound(1)
                w(store.format(f"{{'L': {elements}}}"))
                w.bound(3)
        with w.block("else:"):
            self.slow(w, x, store)

    def decode(self, w: Writer, av: str, *, lax: bool = False) -> DecodeExpr | None:
        e = w.var("e")
        inner = self.item.decode(w, e, lax=lax)
        if inner is None or inner.errors != "KeyError, TypeError":
            return None
        return DecodeExpr(f"[{inner.expression} for {e} in {av}['L']]")


class TupleFast(FastPath):
    """A fixed-length tuple -> ``L``: the codec's own call, as deep as its items."""

    def __init__(
        self, to_av: Callable[[Any], Any], items: list[FastPath], *, nullable: bool
    ) -> None:
        super().__init__(to_av, nullable=nullable)
        self.items = items

    def nesting(self, expanding: frozenset[type[Any]] = frozenset()) -> int | None:
        return _level_above(self.items, expanding)


class MapFast(FastPath):
    """``dict[str, X]`` / ``Mapping`` -> ``M`` (non-empty string keys)."""

    omits_values = False

    def __init__(self, to_av: Callable[[Any], Any], value: FastPath, *, nullable: bool) -> None:
        super().__init__(to_av, nullable=nullable)
        self.value = value

    def nesting(self, expanding: frozenset[type[Any]] = frozenset()) -> int | None:
        return _level_above([self.value], expanding)

    def emit(self, w: Writer, x: str, store: str) -> None:
        if isinstance(self.value, GenericFast):
            # dict[str, Any]: the runtime converter stores an exact dict the same way the
            # map codec does, and converts it in one call.
            with w.block(f"if {x}.__class__ is dict:"):
                self.value.emit_sized(w, x, store, self, sized_map)
            with w.block("else:"):
                self.slow(w, x, store)
            return
        with w.block(f"if {x}.__class__ is dict:"):
            k, e, entries = w.var("k"), w.var("e"), w.var("entries")
            expr = self.value.expression(w, e)
            key_ok = f"{k}.__class__ is str and {k}"
            # A key over DynamoDB's name limit has over a quarter of it in characters: the
            # keys are looked at only when the map's characters pass that, and a map
            # holding one goes to the codec, which refuses it by name.
            before = w.var("before")
            w(f"{before} = n")
            keys_fit = (
                f"(n - {before} <= {MAX_NAME_BYTES // 4} or "
                f"{w.ref(long_name, 'long_name')}({entries}) is None)"
            )
            if expr is not None and expr.omit is None:
                # A loop, not a comprehension: for the few entries of a typical map it
                # costs half as much (no comprehension frame, no second pass to count).
                w(f"{entries} = {{}}")
                with w.block(f"for {k}, {e} in {x}.items():"):
                    with w.block(f"if {key_ok} and {expr.guard}:"):
                        w(f"{entries}[{k}] = {expr.value}")
                        w(f"n += len({k})" + (f" + {expr.chars}" if expr.chars else ""))
                        if expr.nbytes is not None:
                            w(f"exact += {expr.nbytes}")
                    with w.block("else:"):
                        w(f"{entries} = None")
                        w("break")
                with w.block(f"if {entries} is not None and {keys_fit}:"):
                    w(store.format(f"{{'M': {entries}}}"))
                    w.bound(3)
                    w(f"exact += {_times(1 + expr.static, f'len({entries})')}")
                with w.block("else:"):
                    self.slow(w, x, store)
            else:
                w(f"{entries} = {{}}")
                with w.loop(f"for {k}, {e} in {x}.items():", f"len({x})"):
                    # A key the codec would refuse (or convert) sends the whole map to it.
                    with w.block(f"if not ({key_ok}):"):
                        w(f"{entries} = None")
                        w("break")
                    self.value.emit(w, e, f"{entries}[{k}] = {{}}")
                    w(f"n += len({k})")
                    w.bound(1)
                with w.block(f"if {entries} is not None and {keys_fit}:"):
                    w(store.format(f"{{'M': {entries}}}"))
                    w.bound(3)
                with w.block("else:"):
                    self.slow(w, x, store)
        with w.block("else:"):
            self.slow(w, x, store)

    def decode(self, w: Writer, av: str, *, lax: bool = False) -> DecodeExpr | None:
        k, e = w.var("k"), w.var("e")
        inner = self.value.decode(w, e, lax=lax)
        if inner is None or inner.errors != "KeyError, TypeError":
            return None
        return DecodeExpr(f"{{{k}: {inner.expression} for {k}, {e} in {av}['M'].items()}}")


class SetFast(FastPath):
    """``set`` / ``frozenset`` of strings, numbers or bytes -> ``SS`` / ``NS`` / ``BS``."""

    levels = 0  # a set is one value, not a level

    def __init__(
        self,
        to_av: Callable[[Any], Any],
        element: FastPath,
        set_kind: str,
        *,
        frozen: bool,
        nullable: bool,
    ) -> None:
        super().__init__(to_av, nullable=nullable)
        self.element = element
        self.set_kind = set_kind
        self.frozen = frozen

    def expression(self, w: Writer, x: str) -> Expr | None:
        """At the top level only: an empty set is omitted (``omit``).

        The elements are checked by a loop set up before the guard, not by a filtering
        comprehension: for the few elements of a typical set that costs half as much,
        and it counts their size on the way.
        """
        e, ok = w.var("e"), w.var("ok")
        expr = self.element.expression(w, e)
        if expr is None or expr.kind + "S" != self.set_kind or expr.omit is not None:
            return None
        setup = [f"{ok} = {x}.__class__ is set or {x}.__class__ is frozenset", f"if {ok}:"]
        loop = [f"for {e} in {x}:", f"    if not ({expr.guard}):"]
        loop += [f"        {ok} = False", "        break"]
        if expr.scalar == e:
            elements = f"list({x})"
        else:
            elements = w.var("elements")
            setup.insert(0, f"{elements} = []")
            loop.append(f"    {elements}.append({expr.scalar})")
        chars: str | None = None
        nbytes = [_times(expr.static, f"len({x})")] if expr.static else []
        for total, expression in (("chars", expr.chars), ("nbytes", expr.nbytes)):
            if expression is not None:
                counter = w.var(total)
                setup.insert(0, f"{counter} = 0")
                loop.append(f"    {counter} += {expression}")
                if total == "chars":
                    chars = counter
                else:
                    nbytes.append(counter)
        setup += [f"    {line}" for line in loop]
        return Expr(
            ok,
            self.set_kind,
            elements,
            chars=chars,
            nbytes=" + ".join(nbytes) or None,
            omit=f"not {x}",
            setup=tuple(setup),
            chars_when_omitted=True,  # the counter of no element (or of None) is 0
        )

    def emit(self, w: Writer, x: str, store: str) -> None:
        e, elements = w.var("e"), w.var("elements")
        expr = self.element.expression(w, e)
        if expr is None or expr.kind + "S" != self.set_kind:
            self.slow(w, x, store)
            return
        # An empty set is the codec's to decide (omitted, or refused inside a list or map).
        with w.block(f"if ({x}.__class__ is set or {x}.__class__ is frozenset) and {x}:"):
            w(f"{elements} = [{expr.scalar} for {e} in {x} if {expr.guard}]")
            with w.block(f"if len({elements}) == len({x}):"):
                w(store.format(f"{{{self.set_kind!r}: {elements}}}"))
                _count_elements(w, expr, e, x, 0)
            with w.block("else:"):
                self.slow(w, x, store)
        with w.block("else:"):
            self.slow(w, x, store)

    def decode(self, w: Writer, av: str, *, lax: bool = False) -> DecodeExpr | None:
        e = w.var("e")
        inner = self.element.decode(w, e, lax=lax)
        if inner is None or inner.expression != f"{e}[{self.set_kind[0]!r}]":
            return None  # only elements stored as themselves (strings, bytes as bytes)
        if self.set_kind == "BS":
            return None  # botocore may hand back bytearray-like values
        if lax:
            # pydantic builds the set from the stored list itself: converting it first made
            # it build one set from another (a set[str] field 1.40x -> 1.05x hand-written
            # decode; benchmarks/README.md, "Issue 24, round 10").
            return DecodeExpr(f"{av}[{self.set_kind!r}]")
        make = "frozenset" if self.frozen else "set"
        return DecodeExpr(f"{make}({av}[{self.set_kind!r}])")


class ModelFast(FastPath):
    """A nested pydantic model -> ``M`` keyed by field name, its fields inlined."""

    omits_values = False

    def __init__(
        self,
        to_av: Callable[[Any], Any],
        model: type[Any],
        fields: Callable[[], list[tuple[str, FastPath]]],
        *,
        nullable: bool,
        decoding: Callable[[], list[tuple[str, bool]]],
    ) -> None:
        super().__init__(to_av, nullable=nullable)
        self.model = model
        self.fields = fields  # called at generation time: a recursive model is complete then
        #: Per field, in order: the key model_validate takes it under, and whether it is lax.
        self.decoding = decoding

    def nesting(self, expanding: frozenset[type[Any]] = frozenset()) -> int | None:
        if self.model in expanding:
            return None  # a recursive model: as deep as its values go
        return _level_above([field for _name, field in self.fields()], expanding | {self.model})

    def emit(self, w: Writer, x: str, store: str) -> None:
        if self.model in w.expanding:
            self.slow(w, x, store)  # a recursive model: its inner levels go to the codec
            return
        w.expanding.add(self.model)
        try:
            # type(), not __class__: pydantic models define __getattr__, which puts every
            # attribute read through a slower hook (about 350 instructions against 95 for
            # the builtin call; list-of-models encode 1.27x -> 1.23x hand-written).
            with w.block(f"if type({x}) is {w.ref(self.model, 'model')}:"):
                d = w.var("d")
                w(f"{d} = {x}.__dict__")
                fields = [(name, field, w.var("f")) for name, field in self.fields()]
                for name, _field, f in fields:
                    w(f"{f} = {d}[{name!r}]")
                exprs = [field.expression(w, f) for _name, field, f in fields]
                exprs = [None if e is None or e.omit is not None else e for e in exprs]
                if all(e is not None for e in exprs):
                    self._display(w, x, store, fields, [e for e in exprs if e is not None])
                else:
                    self._statements(w, store, fields)
            with w.block("else:"):
                self.slow(w, x, store)
        finally:
            w.expanding.discard(self.model)

    def decode(self, w: Writer, av: str, *, lax: bool = False) -> DecodeExpr | None:
        """One dict display for pydantic to validate, as code by hand writes it.

        Every field must be stored (a missing one, such as an omitted empty set, sends the
        whole value to the codec) and have an inline form; a nullable field reads NULL
        as None. The model is validated once, by the entity's own validation.
        """
        if self.model in w.expanding:
            return None
        w.expanding.add(self.model)
        try:
            m = w.var("m")
            entries: list[str] = []
            for (name, field), (key, field_lax) in zip(self.fields(), self.decoding(), strict=True):
                stored = f"({m} := {av}['M'])[{name!r}]" if not entries else f"{m}[{name!r}]"
                if field.nullable:
                    v = w.var("v")
                    inner = field.decode(w, v, lax=lax and field_lax)
                    test = f"({v} := {stored}) == {w.ref(_NULL, 'NULL')} and {v}['NULL'] is True"
                    value = None if inner is None else f"None if {test} else {inner.expression}"
                else:
                    inner = field.decode(w, stored, lax=lax and field_lax)
                    value = None if inner is None else inner.expression
                if inner is None or value is None or inner.errors != "KeyError, TypeError":
                    return None
                entries.append(f"{key!r}: {value}")
        finally:
            w.expanding.discard(self.model)
        if not entries:
            return None
        return DecodeExpr("{" + ", ".join(entries) + "}")

    def _display(
        self,
        w: Writer,
        x: str,
        store: str,
        fields: list[tuple[str, FastPath, str]],
        exprs: list[Expr],
    ) -> None:
        """Every field has an expression: one guarded dict display, like code by hand."""
        guards: list[str] = []
        entries: list[str] = []
        chars: list[str] = []
        nbytes: list[str] = []
        static = 3
        for (name, field, f), expr in zip(fields, exprs, strict=True):
            static += 1 + len(name.encode("utf-8")) + max(expr.static, 1)
            if field.nullable:
                guards.append(f"({f} is None or {expr.guard})")
                entries.append(f"{name!r}: {{'NULL': True}} if {f} is None else {expr.value}")
                if expr.chars is not None:
                    chars.append(f"(0 if {f} is None else {expr.chars})")
                if expr.nbytes is not None:
                    nbytes.append(f"(0 if {f} is None else {expr.nbytes})")
            else:
                guards.append(f"({expr.guard})")
                entries.append(f"{name!r}: {expr.value}")
                chars += [expr.chars] if expr.chars is not None else []
                nbytes += [expr.nbytes] if expr.nbytes is not None else []
        with w.block(f"if {' and '.join(guards) or 'True'}:"):
            w(store.format("{'M': {" + ", ".join(entries) + "}}"))
            w.bound(static)
            if chars:
                w(f"n += {' + '.join(chars)}")
            if nbytes:
                w(f"exact += {' + '.join(nbytes)}")
        with w.block("else:"):
            self.slow(w, x, store)

    def _statements(self, w: Writer, store: str, fields: list[tuple[str, FastPath, str]]) -> None:
        """Field by field (a set field is omitted when empty)."""
        entries = w.var("entries")
        w(f"{entries} = {{}}")
        w.bound(3)
        for name, field, f in fields:
            w.bound(1 + len(name.encode("utf-8")))
            target = f"{entries}[{name!r}] = {{}}"
            if field.nullable:
                with w.block(f"if {f} is None:"):
                    w(target.format("{'NULL': True}"))
                    w.bound(1)
                with w.block("else:"):
                    field.emit(w, f, target)
            else:
                field.emit(w, f, target)
        w(store.format(f"{{'M': {entries}}}"))


class GenericFast(FastPath):
    """``Any`` and unions: the runtime converter, with the size found while converting.

    Args:
        to_av: The codec's own encoder.
        where: What the value is, for the converter's error messages.
        nullable: Whether ``None`` is a valid value.
    """

    def __init__(self, to_av: Callable[[Any], Any], where: str, *, nullable: bool) -> None:
        super().__init__(to_av, nullable=nullable)
        self.where = where

    def emit(self, w: Writer, x: str, store: str) -> None:
        self.emit_sized(w, x, store, self, to_attribute_value_sized)

    def emit_sized(
        self,
        w: Writer,
        x: str,
        store: str,
        codec: FastPath,
        convert: Callable[[Any, str], tuple[Any, int]],
    ) -> None:
        """Emit ``convert(x, where)`` (a sized converter), falling back to ``codec``'s call.

        ``convert`` is `to_attribute_value_sized`, or the converter of the shape the
        caller has just tested ``x``'s class for (`sized_map`, `sized_list`).
        """
        av, size = w.var("av"), w.var("size")
        call = f"{w.ref(convert, convert.__name__)}({x}, {w.ref(self.where, 'where')})"
        with w.block("try:"):
            w(f"{av}, {size} = {call}")
        # Anything the sized converter does not take (an empty top-level set, a value it
        # refuses) goes to the codec, which omits it or raises the codec's own error.
        with w.block(f"except {w.ref(ItemEncodeError, 'ItemEncodeError')}:"):
            codec.slow(w, x, store)
        with w.block("else:"):
            w(store.format(av))
            w(f"exact += {size}")


def counts_levels(fast: FastPath) -> bool:
    """Whether ``fast``'s generated code counts a top-level value's levels of lists and maps.

    ``Any``, ``dict[str, Any]`` and ``list[Any]`` convert through the sized converters,
    which refuse a value nested too deeply as they go (`singletable.attributes.convert`);
    their codec's own call, for the other values, is the checked one
    (`singletable.attributes.codecs.attribute_codec_for`).
    """
    if isinstance(fast, ListFast):
        fast = fast.item
    elif isinstance(fast, MapFast):
        fast = fast.value
    return isinstance(fast, GenericFast)


def emit_attribute(w: Writer, fast: FastPath, x: str, store: str, where: str) -> None:
    """`FastPath.emit` of a top-level attribute, within DynamoDB's nesting limit.

    A type whose values nest at most `MAX_NESTING` levels needs no check, nor one whose
    code counts them (`counts_levels`). Any other (a recursive model, a model or list
    holding ``Any``) is walked once built (`check_nesting`); a value refused deeper down
    (by a nested codec, or by Python's recursion limit) gets the same error, naming the
    entity's field.
    """
    levels = fast.nesting()
    if (levels is not None and levels <= MAX_NESTING) or counts_levels(fast):
        fast.emit(w, x, store)
        return
    av, label = w.var("av"), w.ref(where, "where")
    w(f"{av} = None")
    with w.block("try:"):
        fast.emit(w, x, f"{av} = {{}}")
    too_deep = w.ref(ItemTooDeepError, "ItemTooDeepError")
    with w.block(f"except (RecursionError, {too_deep}):"):
        w(f"raise {w.ref(nesting_error, 'nesting_error')}({label}) from None")
    with w.block(f"if {av} is not None:"):
        w(store.format(f"{w.ref(check_nesting, 'check_nesting')}({av}, {label})"))
