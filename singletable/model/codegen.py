"""Generated item encoders and decoders: one specialised function pair per entity class.

`EntityPlan.to_item` and `EntityPlan.from_item` are on the hot path of every write and
of every item a query returns. Their straightforward form (kept as
``EntityPlan._to_item_reference`` / ``_from_item_reference``, the specification the tests
compare against) walks the templates' segments and the fields in a loop, and computes
the exact item size on every write. Here the same work is generated once per class, at
compile time, as the source of one function with:

* the key templates unrolled into concatenations of literal text and encoded fields,
  each field encoded once even when several keys use it, with inline fast paths for the
  value's exact expected class (a ``str``, an aware UTC ``datetime``, a fixed-width
  ``int``, ...) and escaping only when a character that needs it is present;
* the attribute codecs called directly, with the common scalars inlined;
* the 400 KB size check done in two stages: a cheap over-estimate of the size (static
  bounds for keys and scalars, ``4 * len(text)`` for strings, exact sizes only for
  complex values) and the exact `check_item_size` only when that estimate exceeds the
  limit.

Anything off a fast path (a subclass, a value out of range, a naive or non-UTC
datetime, ``None`` where it is not allowed, an empty key) calls exactly the function the
reference path would call, so results and error messages are the same.

The generated source of a function is kept on it as ``__singletable_source__`` and is
registered with `linecache`, so tracebacks show the generated lines.
"""

from __future__ import annotations

import builtins
import functools
import linecache
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from singletable.attributes.codecs import lax_field
from singletable.attributes.fastpath import FastPath, Writer, emit_attribute
from singletable.attributes.size import MAX_ITEM_SIZE, check_item_size
from singletable.errors import ItemDecodeError
from singletable.keys.escaping import LONE_SURROGATE
from singletable.keys.templates import FieldSegment, KeyTemplate
from singletable.model.plan import EntityPlan, FieldPlan, KeyPlan, epoch_seconds
from singletable.types import AttributeValue, Item, frozen_dataclass

__all__ = [
    "GENERAL_TO_ITEM",
    "GENERATED_TO_ITEM",
    "MODEL_VALIDATE",
    "FieldDecoding",
    "absent_fill",
    "build_field_decoder",
    "build_item_decoder",
    "build_item_encoder",
]

#: Set (true) on the general ``to_item`` method a class may have its encoder replace.
GENERAL_TO_ITEM = "__singletable_general_to_item__"
#: Set (true) on a generated encoder installed as a class's ``to_item``.
GENERATED_TO_ITEM = "__singletable_generated_to_item__"

#: Largest size (bytes) of any DynamoDB number attribute value.
_MAX_NUMBER_SIZE = 21
#: Longest ``datetime.isoformat()`` text: ``YYYY-MM-DDTHH:MM:SS.ffffff+HH:MM:SS.ffffff``.
_MAX_ISOFORMAT_CHARS = 42
_UUID_CHARS = 36
#: ``-10**38 < n < 10**38``: ints the attribute codec writes without further checks.
_INT_FAST_BOUND = 10**38
#: pydantic's own ``BaseModel.model_validate`` (the function under the classmethod).
MODEL_VALIDATE = BaseModel.model_validate.__func__  # type: ignore[attr-defined]


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _max_key_chars(template: KeyTemplate) -> int | None:
    """The most characters a key of ``template`` can have, or None if it is unbounded.

    Only codecs whose output length is bounded (and never empty) give a bound; escaping
    at most triples a segment.
    """
    total = len(template.delimiter) * (len(template.segments) - 1)
    for segment in template.segments:
        if not isinstance(segment, FieldSegment):
            total += len(segment)
            continue
        chars = segment.codec.max_chars()
        if chars is None:
            return None
        total += chars * 3 if segment.escaped else chars
    return total


def _compile(
    name: str,
    body: list[str],
    namespace: dict[str, Any],
    label: str,
    own: tuple[str, str] | None = None,
    helpers: Sequence[tuple[str, str, list[str]]] = (),
    signature: str | None = None,
) -> Any:
    """Compile ``def name(...)`` from its lines, with ``namespace`` as closure variables.

    The function is made inside a factory taking the namespace as parameters, so the
    generated code reads its constants and helpers as fast closure cells, not globals.

    With ``own`` (a condition and a statement), a second function is returned with the
    first: the same code, whose closure variable ``own`` is true, so that it runs the
    statement when the condition holds before the body (the first function skips it).
    One code object for both halves what is compiled: generating the encoders of the 20
    entities of benchmarks/models20.py took 30-32 ms with two functions, 19 ms with one
    (best of 7, process time); the test costs the first function one closure read, and
    audit's encoding 320 instructions less than before the two shared a helper
    (callgrind).

    ``helpers`` (name, parameters, body lines) are functions the body calls, compiled on
    their first call: until then the name holds a stub that compiles the helper (same
    namespace), rebinds the name for every caller and calls it.
    """
    if signature is None:
        signature = "item, check=False" if name == "from_item" else "obj"
    inner = ""
    for helper, params, lines in helpers:
        build = f"_compile_{helper}"
        namespace = {
            **namespace,
            build: functools.partial(_compile, helper, lines, namespace, label, signature=params),
        }
        inner += (
            f"    def {helper}({params}):\n"
            f"        nonlocal {helper}\n"
            f"        {helper} = {build}()\n"
            f"        return {helper}({params})\n"
        )
    if own is not None:
        condition, statement = own
        inner += f"    {_OWN} = False\n"
        body = [f"    if {_OWN} and {condition}:", f"        {statement}", *body]
    inner += f"    def {name}({signature}):\n" + "".join(f"    {line}\n" for line in body)
    source = f"def _make({', '.join(namespace)}):\n{inner}    return {name}\n"
    filename = f"<singletable {name} {label}>"
    code = compile(source, filename, "exec")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope: dict[str, Any] = {}
    exec(code, scope)  # our own source, generated from the plan
    made = scope["_make"](**namespace)
    made.__singletable_source__ = source
    if own is None:
        return made
    made_code = made.__code__
    cells = tuple(
        types.CellType(True) if free == _OWN else cell
        for free, cell in zip(made_code.co_freevars, made.__closure__, strict=True)
    )
    other: Any = types.FunctionType(made_code, made.__globals__, name, made.__defaults__, cells)
    other.__singletable_source__ = source
    return made, other


#: The closure variable telling `_compile`'s two functions apart (no namespace name has
#: this form).
_OWN = "own"


# --------------------------------------------------------------------------------------
# Encoder


#: The generated field-by-field encoder's name (no namespace name has this form).
_FILL_FIELDS = "fill_fields"


def segment_cache_key(segment: FieldSegment) -> tuple[str, str]:
    """What identifies a segment's key text: the field, its codec and whether it is escaped."""
    codec = segment.codec
    return (segment.name, f"{type(codec).__name__}{codec.params()}{segment.escaped}")


class _EncoderBuilder:
    def __init__(
        self,
        plan: EntityPlan,
        epoch_seconds: Callable[[Any], int],
        size_limit: int,
        check_size: Callable[..., Any],
    ) -> None:
        self.size_limit = size_limit
        self.check_size = check_size
        self.plan = plan
        self.epoch_seconds = epoch_seconds
        self.w = Writer(depth=1)
        #: Encoded field text per (field, codec identity): reused by every key that needs it.
        self.cache: dict[tuple[Any, ...], str] = {}
        #: Variables holding a field's value, read at the top level for a key.
        self.loaded: dict[str, str] = {}
        #: The fast-path condition each field read at the top level for a key was tested on.
        self.key_guards: dict[str, str] = {}
        #: Variable set true when a key segment takes its slow path (`build` names it).
        self.slow_keys: str | None = None
        #: Fields held by a string primary key segment, with that key's byte limit.
        self.primary_key_bytes: dict[str, int] = {}
        #: Functions the encoder calls, compiled on their first call: (name, parameters,
        #: body lines).
        self.helpers: list[tuple[str, str, list[str]]] = []
        for template in plan.primary.templates():
            if template.key_type == "S":
                for name in template.fields:
                    limit = self.primary_key_bytes.get(name, template.max_bytes)
                    self.primary_key_bytes[name] = min(limit, template.max_bytes)

    # -- keys ----------------------------------------------------------------------------

    def segment_text(self, template: KeyTemplate, segment: FieldSegment) -> str:
        """Emit code computing one field's escaped key text; return its variable."""
        cache_key = segment_cache_key(segment)
        cached = self.cache.get(cache_key)
        if cached is not None:
            return cached
        codec = segment.codec
        s = ns = self.w
        x, t = s.var("x"), s.var("t")
        s(f"{x} = v[{segment.name!r}]")
        if s.depth == 1:  # read unconditionally: the attribute can use it too
            self.loaded.setdefault(segment.name, x)
        fast = codec.fast_text(s, x)
        slow = ns.ref(functools.partial(template._encode_field, segment), "encode_field")
        if fast is None:
            s(f"{t} = {slow}({x})")
        else:
            condition, text = fast
            if s.depth == 1:
                self.key_guards.setdefault(segment.name, condition)
            s(f"if {condition}:")
            s.indent()
            s(f"{t} = {text}")
            if segment.escaped:
                escaper = template.escaper
                # Characters to escape, and lone surrogates, which the slow path refuses
                # naming the field.
                pattern = "[\\x00-" + re.escape(escaper.escape_char) + "\\ud800-\\udfff]"
                needs = ns.ref(re.compile(pattern).search, "needs_escape")
                table = ns.ref(escaper._table, "escape_table")
                lone = ns.ref(LONE_SURROGATE.search, "lone_surrogate")
                # A bytes.translate table: 0 for every byte the escaper rewrites.
                rewritten = escaper._table
                zeroed_bytes = bytes(0 if b in rewritten else b for b in range(256))
                zeroed = ns.ref(zeroed_bytes, "zero_escaped")
                # Cheap proofs that no character needs escaping, before the regex: an
                # identifier; ASCII text whose bytes, with every byte to escape mapped to
                # 0, hold no 0 (C loops of a few instructions a byte, where the regex
                # takes tens a character). Two UUID and "ord-000123" key fields: 18,266
                # -> 16,732 instructions an item (hand-written 12,773, no check 13,685);
                # identifiers unchanged (benchmarks/README.md, "Issue 24, round 10").
                quick = f"(not {t}.isascii() or 0 in {t}.encode().translate({zeroed}))"
                s(f"if not {t}.isidentifier() and {quick} and {needs}({t}) is not None:")
                s(f"    if not {t}.isascii() and {lone}({t}) is not None:")
                s(f"        {slow}({x})")
                s(f"    {t} = {t}.translate({table})")
            s.dedent()
            s("else:")
            s(f"    {t} = {slow}({x})")
            if self.slow_keys is not None:
                s(f"    {self.slow_keys} = True")
        self.cache[cache_key] = t
        return t

    def key_value(self, template: KeyTemplate) -> str:
        """Emit code building one key attribute value; return the expression for it."""
        return f"{{{template.key_type!r}: {self.key_text(template)}}}"

    def key_text(self, template: KeyTemplate) -> str:
        """Emit code building one key's text (checked); return the expression for it.

        The wire encoder (`singletable.model.wire`) shares it, so both check keys alike.
        """
        s = ns = self.w
        self.w.static += _utf8_len(template.attribute)
        if template.key_type != "S":
            self.w.static += _MAX_NUMBER_SIZE
            fmt = ns.ref(template.format_object, "format_object")
            return f"{fmt}(obj)"
        self.w.static += template.max_bytes  # _finish refuses longer keys
        parts: list[str] = []
        literal = ""
        has_literal = False  # then the key is never empty
        for i, segment in enumerate(template.segments):
            if i:
                literal += template.delimiter
            if isinstance(segment, FieldSegment):
                if literal:
                    parts.append(repr(literal))
                    has_literal = True
                    literal = ""
                parts.append(self.segment_text(template, segment))
            else:
                literal += segment
        if literal:
            parts.append(repr(literal))
            has_literal = True
        cache_key = ("key", template.max_bytes, *parts)
        key = self.cache.get(cache_key)
        if key is None:
            key = self.w.var("key")
            s(f"{key} = {' + '.join(parts)}")
            # _finish only refuses an empty or an oversized key: call it only when the
            # key could be either.
            chars = _max_key_chars(template)
            if chars is None or chars * 4 > template.max_bytes:
                finish = ns.ref(template._finish, "finish")
                too_long = f"len({key}) > {template.max_bytes // 4}"
                s(f"if {too_long}:" if has_literal else f"if not {key} or {too_long}:")
                s(f"    {key} = {finish}({key})")
            self.cache[cache_key] = key
        return key

    def key_plan(self, key_plan: KeyPlan, item_exists: bool) -> None:
        s = self.w
        sparse = sorted(key_plan.optional_fields)
        saved_cache = dict(self.cache)
        if sparse:
            s(f"if {' and '.join(f'v[{name!r}] is not None' for name in sparse)}:")
            s.indent()
        entries = [(t.attribute, self.key_value(t)) for t in key_plan.templates()]
        if item_exists:
            for attribute, value in entries:
                s(f"item[{attribute!r}] = {value}")
        else:
            body = ", ".join(f"{a!r}: {value}" for a, value in entries)
            s(f"item = {{{body}}}")
        if sparse:
            s.dedent()
            self.cache = saved_cache  # texts computed under the condition may be unset

    # -- attributes ----------------------------------------------------------------------

    def loaded_field(self, name: str, attribute: str) -> tuple[FastPath, str]:
        """The field's fast path and the variable holding its value (loaded once).

        A field a key already read keeps that variable; the attribute name's bytes are
        added to the size bound.
        """
        x = self.loaded.get(name)
        if x is None:
            x = self.w.var("x")
            self.w(f"{x} = v[{name!r}]")
        self.w.bound(_utf8_len(attribute))
        return self.plan.fields[name].codec.fast, x

    def attribute(self, name: str, attribute: str) -> None:
        """Emit code writing one field's attribute and bounding its size.

        The field's codec supplies the code (`FastPath`); a string that is also part of
        a primary key is bounded by that key's byte limit, which the key check enforces.
        """
        w = self.w
        fast = self.plan.fields[name].codec.fast
        w.bound(_utf8_len(attribute))
        x = w.var("x")
        store = f"item[{attribute!r}] = {{}}"
        w(f"{x} = v[{name!r}]")
        expr = fast.expression(w, x)
        if expr is None or expr.omit is not None:
            with w.block(f"if {x} is not None:"):  # None is omitted
                emit_attribute(w, fast, x, store, self.plan.fields[name].codec.where)
            return
        key_bytes = self.primary_key_bytes.get(name)
        if key_bytes is not None and expr.kind == "S":
            expr = expr._replace(chars=None, static=key_bytes)
        # One test for the common case: a guard never holds for None, which is omitted.
        fast.emit_expression(w, x, store, expr, otherwise=f"elif {x} is not None:")

    def display(self, keys: list[tuple[str, str]], identity: list[tuple[str, str]]) -> None:
        """Emit the item as one dict display when every field takes its fast path.

        This is the shape of code written by hand; otherwise (``else:``) the item is
        built field by field.

        Fields without a single-expression fast path (``Any``, sets, ...) get a placeholder
        in the display, filled in (or deleted) after it, so attribute order is the
        reference's either way; an omitted ``None`` is deleted the same way.
        """
        w, plan = self.w, self.plan
        guards: list[str] = []
        keys_tested = False
        entries = [f"{a!r}: {value}" for a, value in keys]
        chars: list[str] = []
        nbytes: list[str] = []
        # (field, attribute, x or the left-out condition, filled in by statements)
        after: list[tuple[str, str, str, bool]] = []
        for name, attribute, _encode in plan._encoders:
            fast, x = self.loaded_field(name, attribute)
            expr = fast.expression(w, x)
            if expr is None:
                entries.append(f"{attribute!r}: None")
                after.append((name, attribute, x, True))
                continue
            key_bytes = self.primary_key_bytes.get(name)
            if key_bytes is not None and expr.kind == "S":
                expr = expr._replace(chars=None, static=key_bytes)
            w.bound(expr.static)
            for line in expr.setup:
                w(line)
            omit = [f"{x} is None"] if fast.nullable else []
            omit += [expr.omit] if expr.omit is not None else []
            if omit:
                # Left out (None, an empty set): a placeholder, deleted after the display.
                left_out = " or ".join(omit)
                guard = f"({x} is None or {expr.guard})" if fast.nullable else f"({expr.guard})"
                guards.append(guard)
                entries.append(f"{attribute!r}: None if {left_out} else {expr.value}")
                after.append((name, attribute, left_out, False))
                if expr.chars_when_omitted:
                    chars += [expr.chars] if expr.chars else []
                else:
                    chars += [f"(0 if {left_out} else {expr.chars})"] if expr.chars else []
                nbytes += [f"(0 if {left_out} else {expr.nbytes})"] if expr.nbytes else []
            else:
                if self.slow_keys is not None and self.key_guards.get(name) == expr.guard:
                    # A key already tested this field on the same condition: one flag,
                    # set when some key took its slow path, stands for those tests
                    # (-130 instructions a key field, callgrind).
                    keys_tested = True
                else:
                    guards.append(f"({expr.guard})")
                entries.append(f"{attribute!r}: {expr.value}")
                chars += [expr.chars] if expr.chars else []
                nbytes += [expr.nbytes] if expr.nbytes else []
        entries += [f"{a!r}: {value}" for a, value in identity]
        if keys_tested:
            guards.insert(0, f"not {self.slow_keys}")
        with w.block(f"if {' and '.join(guards) or 'True'}:"):
            w(f"item = {{{', '.join(entries)}}}")
            w(f"n = {' + '.join(chars) or '0'}")
            w(f"exact = {' + '.join(nbytes) or '0'}")
            for name, attribute, x, by_statements in after:
                store = f"item[{attribute!r}] = {{}}"
                if not by_statements:
                    with w.block(f"if {x}:"):  # the left-out condition
                        w(f"del item[{attribute!r}]")
                    continue
                with w.block(f"if {x} is None:"):
                    w(f"del item[{attribute!r}]")
                with w.block("else:"):
                    codec = plan.fields[name].codec
                    fast = codec.fast
                    emit_attribute(w, fast, x, store, codec.where)
                    if fast.omits_values:
                        with w.block(f"if item[{attribute!r}] is None:"):
                            w(f"del item[{attribute!r}]")  # omitted (an empty set)
        with w.block("else:"):
            body = ", ".join(f"{a!r}: {value}" for a, value in keys)
            w(f"item = {{{body}}}")
            w(f"n, exact = {_FILL_FIELDS}(v, item)")
        # The field-by-field encoder is a function of its own, shared by the encoder and
        # the class's own method: the hot function keeps a fraction of the locals and the
        # code (audit encode 1.25-1.26x -> 1.23-1.24x hand-written, bench_family, three
        # runs each). It is compiled when first called: a class whose instances all take
        # the fast branch never compiles it (generating the encoders of the 20 entities of
        # benchmarks/models20.py: 44.7 ms when both functions held this branch, 37 ms
        # with it shared, 30-32 ms compiled on demand).
        lines, depth = w.lines, w.depth
        w.lines, w.depth = [], 1
        w("n = 0")
        w("exact = 0")
        for name, attribute, _encode in plan._encoders:
            self.attribute(name, attribute)
        for a, value in identity:
            w(f"item[{a!r}] = {value}")
        w("return n, exact")
        self.helpers.append((_FILL_FIELDS, "v, item", w.lines))
        w.lines, w.depth = lines, depth

    def build(
        self, general: Callable[[BaseModel], Item] | None = None
    ) -> tuple[Callable[[BaseModel], Item], Callable[[BaseModel], Item] | None]:
        """The encoder, and the form of it installed as the class's own method.

        The second is made only with ``general``, the class's general ``to_item`` (see
        `install_generated_codecs`), where an instance of another class goes.
        """
        plan, s = self.plan, self.w
        ns = s
        table = plan.table
        s("v = obj.__dict__")
        identity = [
            (table.entity_attribute, f"{{'S': {plan.name!r}}}"),
            (table.version_attribute, f"{{'N': {str(plan.version)!r}}}"),
        ]
        self.w.static += _utf8_len(table.entity_attribute) + _utf8_len(plan.name)
        self.w.static += _utf8_len(table.version_attribute) + _MAX_NUMBER_SIZE
        has_ttl = plan.ttl_field is not None and table.ttl_attribute is not None
        if any(index.optional_fields for index in plan.indexes.values()):
            # A sparse index's keys sit between the primary key and the fields when
            # present: field by field keeps that order.
            self.key_plan(plan.primary, item_exists=False)
            for index in plan.indexes.values():
                self.key_plan(index, item_exists=True)
            s("n = 0")
            s("exact = 0")
            for name, attribute, _encode in plan._encoders:
                self.attribute(name, attribute)
            tail = identity
        else:
            self.slow_keys = "slow_keys"
            s(f"{self.slow_keys} = False")
            keys = [
                (t.attribute, self.key_value(t))
                for key_plan in (plan.primary, *plan.indexes.values())
                for t in key_plan.templates()
            ]
            self.display(keys, [] if has_ttl else identity)
            tail = identity if has_ttl else []
        if has_ttl:
            assert plan.ttl_field is not None
            assert table.ttl_attribute is not None
            epoch = ns.ref(self.epoch_seconds, "epoch_seconds")
            s(f"ttl = v[{plan.ttl_field!r}]")
            s("if ttl is not None:")
            s(f"    item[{table.ttl_attribute!r}] = {{'N': str({epoch}(ttl))}}")
            self.w.static += _utf8_len(table.ttl_attribute) + _MAX_NUMBER_SIZE
        for a, value in tail:
            s(f"item[{a!r}] = {value}")
        for field_plan in plan.fields.values():
            if field_plan.stores_none:  # None as NULL: left out, it would read as the default
                s(f"if v[{field_plan.name!r}] is None:")
                s(f"    item[{field_plan.attribute!r}] = {{'NULL': True}}")
                self.w.static += _utf8_len(field_plan.attribute) + 1
        if plan.native_text_parts():
            native = ns.ref(plan.check_native_parts, "check_native_parts")
            s(f"{native}(item)")
        check = ns.ref(self.check_size, "check_item_size")
        label = ns.ref(plan.label, "label")
        # The static bound folded into the constant: one addition fewer, and no int
        # object made for the sum (-180 to -270 instructions an item, callgrind).
        s(f"if exact + 4 * n > {self.size_limit - s.static}:")
        s(f"    {check}(item, where={label})")
        s("return item")
        label = plan.model.__qualname__
        if general is None:
            encoder: Callable[[BaseModel], Item]
            encoder = _compile("to_item", s.lines, s.values, label, helpers=self.helpers)
            return encoder, None
        # The class's own method: an instance of another class (a subclass, called as
        # ``Parent.to_item(child)``) goes to the general method it replaces.
        model = ns.ref(plan.model, "model")
        other = ns.ref(general, "general_to_item")
        own = (f"type(obj) is not {model}", f"return {other}(obj)")
        functions: tuple[Callable[[BaseModel], Item], Callable[[BaseModel], Item]]
        functions = _compile("to_item", s.lines, s.values, label, own, self.helpers)
        return functions


def build_item_encoder(
    plan: EntityPlan,
    *,
    epoch_seconds: Callable[[Any], int],
    size_limit: int = MAX_ITEM_SIZE,
    check_size: Callable[..., Any] = check_item_size,
) -> Callable[[BaseModel], Item]:
    """Generate the specialised ``to_item`` function of an entity plan.

    Args:
        plan: The compiled entity plan (its templates, codecs and table).
        epoch_seconds: Converts a TTL field's value to epoch seconds.
        size_limit: Items whose size bound exceeds this are passed to ``check_size``.
        check_size: Called as ``check_size(item, where=label)`` for those items; the
            default measures exactly and refuses items over DynamoDB's limit. (Tests
            pass a recorder and a lower limit to prove the bound never undercounts.)

    Returns:
        A function ``obj -> item`` equal in results and errors to
        ``plan._to_item_reference``.
    """
    return _EncoderBuilder(plan, epoch_seconds, size_limit, check_size).build()[0]


# --------------------------------------------------------------------------------------
# Decoder


def build_item_decoder(plan: EntityPlan) -> Callable[..., Any]:
    """Generate the specialised ``from_item`` function of an entity plan.

    The function takes ``(item, check=False)``; with ``check`` it first refuses an item
    that another entity (or another registered version) wrote, as
    `EntityPlan.check_identity` does, at the cost of one comparison when the item is
    the plan's own.

    Args:
        plan: The compiled entity plan.

    Returns:
        A function ``(item, check=False) -> model instance`` equal in results and errors
        to ``plan._from_item_reference`` (after ``plan.check_identity`` with ``check``).
    """
    w = Writer(depth=1)
    table = plan.table
    with w.block("if check:"):
        # The plan's own items pass on two comparisons; anything else gets the full check.
        w(f"et = item.get({table.entity_attribute!r})")
        w(f"ev = item.get({table.version_attribute!r})")
        with w.block(
            f"if et is not None and (et.get('S') != {plan.name!r} or ev is None or "
            f"ev.get('N') != {str(plan.version)!r}):"
        ):
            w(f"{w.ref(plan.check_identity, 'check_identity')}(item)")
    w("data = {}")
    reference = w.ref(plan._from_item_reference, "reference")
    # Lax fields hand pydantic text it parses later: a codec refusing a later field must
    # not report before them. On any refusal the reference decodes the item again and
    # reports the first bad field, as it always does.
    with w.block("try:"):
        for name, field in plan.fields.items():
            _decode_field(w, name, field, lax=lax_field(plan.model, name))
    with w.block(f"except {w.ref(ItemDecodeError, 'ItemDecodeError')}:"):
        w(f"return {reference}(item)")
    fill = w.ref(plan._fill_from_keys, "fill_from_keys")
    model = w.ref(plan.model, "model")
    # `_fill_from_keys` only reads keys of which a field is missing: test those fields,
    # not the field count, which an absent optional field lowers (a call per item,
    # 1.45x -> 1.3x hand-written decode instructions on a 6-field model: benchmarks/README.md).
    key_fields = plan.key_fields()
    if key_fields:
        with w.block(f"if {' or '.join(f'{name!r} not in data' for name in key_fields)}:"):
            w(f"{fill}(item, data)")
    # pydantic's model_validate only forwards to the class's validator: calling that
    # directly spares a Python frame: 1.37 -> 1.02 µs an AuditEvent, 5.5% of a 1,000-item
    # lean query's instructions (callgrind; benchmarks/README.md). A class that overrides
    # model_validate keeps it.
    validate = (
        f"{model}.__pydantic_validator__.validate_python"
        if getattr(plan.model.model_validate, "__func__", None) is MODEL_VALIDATE
        else f"{model}.model_validate"
    )
    with w.block("try:"):
        # Stored attributes are named after the fields, whatever their aliases.
        w(f"return {validate}(data, by_name=True)")
    with w.block("except ValueError:"):
        # Lax fields handed pydantic stored text; on any failure the reference decodes
        # the item again, so errors (and the rare text only the codec reads, such as
        # "1E+2" for an int) come out exactly as the codecs give them.
        w(f"return {reference}(item)")
    function: Callable[..., Any] = _compile("from_item", w.lines, w.values, plan.model.__qualname__)
    return function


def _decode_field(w: Writer, name: str, field: FieldPlan, *, lax: bool) -> None:
    """Emit the decoding of one field's stored attribute into ``data``."""
    dec = w.ref(field.codec.from_av, "decode")
    w(f"av = item.get({field.attribute!r})")
    with w.block("if av is not None:"):
        # The inline forms are the codecs' own fast paths; anything else goes to the codec.
        inline = field.codec.fast.decode(w, "av", lax=lax)
        if inline is None:
            w(f"data[{name!r}] = {dec}(av)")
        else:
            with w.block("try:"):
                w(f"data[{name!r}] = {inline.expression}")
            with w.block(f"except ({inline.errors}):"):
                w(f"data[{name!r}] = {dec}(av)")
    fill = absent_fill(field, lax=lax)
    if fill is not None:
        with w.block("else:"):
            w(f"data[{name!r}] = {fill}")


def absent_fill(field: FieldPlan, *, lax: bool) -> str | None:
    """What the generated decoder hands pydantic for ``field`` when its attribute is absent.

    The source of the value, or ``None`` when it hands nothing (the field's default).
    """
    if field.is_set and not field.nullable:
        # An empty tuple is a constant: pydantic makes the empty set of a lax field from
        # it without a call to build one first. A strict field gets its own container (a
        # strict frozenset refuses a set).
        if lax:
            return "()"
        return "frozenset()" if typing.get_origin(field.annotation) is frozenset else "set()"
    if field.nullable and (field.required or field.is_set):
        return "None"
    return None


@frozen_dataclass
class FieldDecoding:
    """What the generated decoder hands pydantic for one field's attribute value ``av``."""

    #: The function of ``av`` computing it: the decoder's inline expression, and the
    #: codec where the expression fails.
    decode: Callable[[Any], Any]
    #: Set when the expression is ``av[tag]`` or ``convert(av[tag])``.
    tag: str | None = None
    convert: Callable[[Any], Any] | None = None
    #: ``"M"`` or ``"L"`` when the expression is each entry's stored text, ``e['S']``, of
    #: the map or list ``av[texts]`` (a ``dict[str, str]``, a ``list[str]``).
    texts: str | None = None


#: ``av['S']``, and ``parse(av['S'])``, for the attribute value types matched here.
_STORED_VALUE = re.compile(r"av\['(S|N|BOOL|SS|NS)'\]")
_CONVERTED_VALUE = re.compile(r"(\w+)\(av\['(S|N|BOOL|SS|NS)'\]\)")
#: Each entry's stored text: ``{k: e['S'] for k, e in av['M'].items()}``, ``[e['S'] for e
#: in av['L']]``.
_STORED_TEXTS = re.compile(
    r"\{(\w+): (\w+)\['S'\] for \1, \2 in av\['(M)'\]\.items\(\)\}"
    r"|\[(\w+)\['S'\] for \4 in av\['(L)'\]\]"
)


def build_field_decoder(field: FieldPlan, *, lax: bool, absent: object = None) -> FieldDecoding:
    """How the generated decoder (`build_item_decoder`) reads ``field``'s attribute value.

    With ``absent``, the function returns `absent_fill`'s value when handed that object
    in place of an attribute value.
    """
    w = Writer(depth=1)
    dec = w.ref(field.codec.from_av, "decode")
    fill = None if absent is None else absent_fill(field, lax=lax)
    if fill is not None:
        with w.block(f"if av is {w.ref(absent, 'absent')}:"):
            w(f"return {fill}")
    inline = field.codec.fast.decode(w, "av", lax=lax)
    if inline is None:
        if fill is None:
            return FieldDecoding(field.codec.from_av)
        w(f"return {dec}(av)")
        return FieldDecoding(
            _compile("decode_field", w.lines, w.values, field.name, signature="av")
        )
    with w.block("try:"):
        w(f"return {inline.expression}")
    with w.block(f"except ({inline.errors}):"):
        w(f"return {dec}(av)")
    decode = _compile("decode_field", w.lines, w.values, field.name, signature="av")
    stored = _STORED_VALUE.fullmatch(inline.expression)
    if stored is not None:
        return FieldDecoding(decode, stored.group(1))
    converted = _CONVERTED_VALUE.fullmatch(inline.expression)
    if converted is not None:
        # A name of the namespace, or a builtin (``int(av['N'])``).
        name = converted.group(1)
        convert = w.values[name] if name in w.values else getattr(builtins, name)
        return FieldDecoding(decode, converted.group(2), convert)
    texts = _STORED_TEXTS.fullmatch(inline.expression)
    if texts is not None:
        return FieldDecoding(decode, texts=texts.group(3) or texts.group(5))
    return FieldDecoding(decode)


def install_generated_codecs(plan: EntityPlan) -> None:
    """Attach ``plan``'s item encoder and decoder, generated on their first call.

    Generating and compiling the source costs more than the rest of an entity class's
    definition, so a class that is defined and never used does not pay it.
    """

    def encode_first(obj: BaseModel) -> Item:
        model = plan.model
        general = model.__dict__.get("to_item")
        if general is not None and not getattr(general, GENERAL_TO_ITEM, False):
            general = None  # the class's own to_item: kept
        builder = _EncoderBuilder(plan, epoch_seconds, MAX_ITEM_SIZE, check_item_size)
        encoder, own = builder.build(general)
        object.__setattr__(plan, "_item_encoder", encoder)
        if own is not None:
            # The class's to_item is the general method (`Entity.to_item`, pinned on each
            # class): the encoder replaces it, sparing a frame and a read of the plan
            # through pydantic's attribute hook, ~1,000 instructions a call (callgrind;
            # benchmarks/README.md, "Issue 24, encode round 4").
            own.__doc__ = general.__doc__
            own.__qualname__ = f"{model.__qualname__}.to_item"
            setattr(own, GENERATED_TO_ITEM, True)
            type.__setattr__(model, "to_item", own)
        return encoder(obj)

    def decode_first(item: Mapping[str, AttributeValue], check: bool = False) -> Any:
        decoder = build_item_decoder(plan)
        object.__setattr__(plan, "_item_decoder", decoder)
        return decoder(item, check)

    object.__setattr__(plan, "_item_encoder", encode_first)
    object.__setattr__(plan, "_item_decoder", decode_first)
