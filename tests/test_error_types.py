"""Every refusal is a `SingleTableError`, of one documented type per kind of mistake.

Two guards: a scan of every ``raise`` statement in the package (each must raise a
`SingleTableError` subclass, or call a function annotated to return one), and behaviour
over generated entity classes (a bad key value is a `KeyEncodeError` whichever key field
and position it is given at; a field that shadows an `Entity` attribute is refused when
the class is created; an operation given another entity's instance raises
`EntityTypeError`).
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from pydantic import BaseModel, create_model

import singletable as st
from singletable.errors import SingleTableError, with_context
from tests.strategies import TemplateShape, shape_values, template_shapes

PACKAGE = Path(st.__file__).parent

#: ``raise`` sites that are not refusals of user input, each with the reason.
NOT_REFUSALS = {
    # An abstract method's body: a subclass that forgets to override it is a bug in
    # that subclass, and NotImplementedError is the protocol Python tools understand.
    "NotImplementedError",
    # argparse's contract for type= converters: it turns this into a usage message.
    "argparse.ArgumentTypeError",
}

_LEAN_HTTP = (
    "the lean HTTP pool raises what urllib3 would raise at the same point, mapped to "
    "botocore's exceptions as URLLib3Session maps them; the connection maps those to "
    "EndpointError"
)

#: Sites that raise something else on purpose, not a refusal of user input:
#: (module, what the raise names) -> reason.
INVARIANTS = {
    ("singletable.keys.formats", "KeyError"): "a key codec kind defined without a format id "
    "(a bug in the library, found by its tests)",
    ("singletable.io.lean", "error"): "the lean transport raises botocore's own exceptions, "
    "as botocore does; the connection maps them to ServiceError / EndpointError",
    ("singletable.io.lean", "self._client.exceptions.from_code(code)"): "botocore's "
    "modelled error for a DynamoDB error response, mapped to ServiceError by the connection",
    ("singletable.io.lean", "NoCredentialsError"): "botocore's own error, as botocore raises "
    "it; the connection maps it to ConfigurationError",
    ("singletable.io.lean", "TypeError"): "the json module's contract for default= hooks",
    ("singletable.types", "AttributeError"): "the module __getattr__ protocol (lazy_names)",
    ("singletable.model.wire", "TypeError"): "the json module's contract for default= hooks",
    ("singletable.io.lean_http", "_botocore_error"): _LEAN_HTTP,
    ("singletable.io.lean_http", "_read_timeout"): _LEAN_HTTP,
    ("singletable.io.lean_http", "_aborted"): _LEAN_HTTP,
    ("singletable.io.lean_http", "urllib3_errors.SSLError"): _LEAN_HTTP,
    ("singletable.io.lean_http", "urllib3_errors.ProtocolError"): _LEAN_HTTP,
    ("singletable.io.lean_http", "urllib3_errors.ReadTimeoutError"): _LEAN_HTTP,
    ("singletable.io.lean_http", "_broken"): _LEAN_HTTP,
    ("singletable.io.lean_http", "_awaiting_error"): _LEAN_HTTP,
    ("singletable.io.lean_http", "urllib3_errors.InvalidHeader"): _LEAN_HTTP,
    ("singletable.testing.plugin", "pytest.UsageError"): "pytest's error for a bad option or "
    "ini setting: it stops the run with a usage message",
    ("singletable.testing.recorder", "_fail"): "an assertion helper fails a test with "
    "AssertionError, as pytest expects of one",
    ("singletable.testing.recorder", "ValueError"): "a test calling an assertion helper "
    "without a bound (a mistake in the test, not input refused)",
    ("singletable.testing.strategies", "ImportError"): "the module cannot be imported "
    "without hypothesis: Python's error for a missing module, with what to install",
    ("singletable.types", "TypeError"): "a dataclass decorator misapplied, or arguments an "
    "__init__ does not take: Python's errors, as the standard decorator and the __init__ it "
    "generates raise them",
    ("singletable.types", "dataclasses.FrozenInstanceError"): "assignment to a field of a "
    "frozen dataclass, the error the standard decorator's classes raise",
    ("singletable.expressions.operands", "AttributeError"): "an expression node is immutable "
    "(Python's error for a read-only attribute, as a frozen dataclass raises it)",
    ("singletable.expressions.fields", "AttributeError"): "a field reference is immutable "
    "(shared per entity class; Python's error for a read-only attribute, as above)",
    ("singletable.tooling.migrations.rewrite", "Unconvertible"): "an entity rewrite's signal "
    "that one stored item cannot be converted, caught by the item's rewrite "
    "(migrations.rewrite_item), which counts the item as failed",
}


Scope = list[ast.AST]


def _raise_sites() -> list[tuple[str, int, ast.Raise, Scope]]:
    sites: list[tuple[str, int, ast.Raise, Scope]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        tree = ast.parse(path.read_text())

        def visit(node: ast.AST, scope: Scope, module: str = module) -> None:
            # ``scope``: the enclosing classes and functions, outermost first.
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.Raise):
                    sites.append((module, child.lineno, child, scope))
                enclosing = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
                visit(child, [*scope, child] if isinstance(child, enclosing) else scope)

        visit(tree, [])
    return sites


def _local_value(name: str, scope: Scope) -> list[ast.expr]:
    """What a local name raised in the innermost function can hold: the values assigned to
    it there, or the exception types of the ``except ... as name`` handlers binding it."""
    function = next(n for n in reversed(scope) if not isinstance(n, ast.ClassDef))
    values: list[ast.expr] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            values.append(node.value)
        if isinstance(node, ast.ExceptHandler) and node.name == name and node.type is not None:
            values.append(node.type)
    assert values, f"{name!r} is neither assigned nor bound by an except clause"
    return values


def _raised_types(module: Any, exc: ast.expr, scope: Scope) -> list[Any]:
    """Every class ``raise exc`` can raise (``None`` from an Optional factory dropped)."""
    if isinstance(exc, ast.Name) and exc.id not in vars(module) and exc.id not in dir(builtins):
        return [
            t for value in _local_value(exc.id, scope) for t in _raised_types(module, value, scope)
        ]
    raised = _raised_type(
        module, ast.Raise(exc=exc), [n for n in scope if isinstance(n, ast.ClassDef)]
    )
    if typing.get_origin(raised) in (typing.Union, types.UnionType):
        return [t for t in typing.get_args(raised) if t is not type(None)]
    return [raised]


def _raised_type(module: Any, node: ast.Raise, classes: list[ast.ClassDef]) -> Any:
    """The class a ``raise`` raises, or the return type of the function that builds it."""
    target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    assert target is not None
    if isinstance(target, ast.Attribute) and ast.unparse(target.value) == "self":
        owner = getattr(module, classes[-1].name)
        factory = getattr(owner, target.attr)
    elif isinstance(target, ast.Attribute) and ast.unparse(target.value) not in vars(module):
        # A method of a local value (``op.condition_error(...)``): every class in the
        # package that defines the method must declare a SingleTableError return (the
        # value's class may only be imported for type checking).
        owners = {
            v
            for name, m in list(sys.modules.items())
            if name.startswith("singletable.")
            for v in vars(m).values()
            if isinstance(v, type) and target.attr in vars(v)
        }
        assert owners, f"{module.__name__}: no class defines {target.attr!r}"
        returned: set[Any] = set()
        for owner in owners:
            method = getattr(owner, target.attr)
            annotation = inspect.signature(method).return_annotation
            # Resolved where the method is defined (a function keeps its own __module__).
            returned.add(eval(annotation, vars(sys.modules[method.__module__])))
        bad = [r for r in returned if not issubclass(r, SingleTableError)]
        return bad[0] if bad else SingleTableError
    else:
        parts = ast.unparse(target).split(".")
        # A builtin (ValueError, ...) is not in the module's namespace.
        factory = module if parts[0] in vars(module) else builtins
        for part in parts:
            factory = getattr(factory, part)
    if isinstance(factory, type):
        return factory
    # Only the return annotation is resolved: the others may name TYPE_CHECKING imports.
    # Resolved where the factory is defined (it may be imported from another module).
    annotation = inspect.signature(factory).return_annotation
    home = vars(sys.modules[factory.__module__])
    return eval(annotation, home) if isinstance(annotation, str) else annotation


def _internal_signal(module: Any, raised: Any) -> bool:
    """An exception class of the module that the module itself catches.

    Control flow inside one module (the migration runner's "item changed, retry", the lean
    transport's "shape not supported, use botocore's parser"), never a refusal a caller
    sees: it must be caught by an ``except`` in the same module.
    """
    if not isinstance(raised, type):
        return False
    if vars(module).get(raised.__name__) is not raised:
        return False
    tree = ast.parse(Path(module.__file__).read_text())
    return any(
        isinstance(node, ast.ExceptHandler)
        and node.type is not None
        and raised.__name__ in {n.id for n in ast.walk(node.type) if isinstance(n, ast.Name)}
        for node in ast.walk(tree)
    )


def test_every_raise_in_the_package_raises_a_singletable_error() -> None:
    checked = 0
    wrong = []
    for module_name, line, node, scope in _raise_sites():
        if node.exc is None:
            continue  # a bare re-raise inside an except block
        if isinstance(node.exc, ast.Name) and ast.unparse(node.exc) in NOT_REFUSALS:
            continue
        if isinstance(node.exc, ast.Call) and ast.unparse(node.exc.func) in NOT_REFUSALS:
            continue
        named = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if (module_name, ast.unparse(named)) in INVARIANTS:
            continue
        module = importlib.import_module(module_name)
        for raised in _raised_types(module, node.exc, scope):
            checked += 1
            if _internal_signal(module, raised):
                continue
            if not (isinstance(raised, type) and issubclass(raised, SingleTableError)):
                wrong.append(f"{module_name}:{line}: raises {raised!r}")
    assert wrong == []
    assert checked > 300  # the scan really walked the package


def test_the_documented_hierarchy_is_the_real_one() -> None:
    """docs/errors.md lists every error class under its real base classes."""
    page = (PACKAGE.parent / "docs" / "errors.md").read_text()
    import singletable.errors as errors

    for name, cls in vars(errors).items():
        if isinstance(cls, type) and issubclass(cls, SingleTableError):
            bases = ", ".join(b.__name__ for b in cls.__bases__)
            assert f"`{name}({bases})`" in page, name


# ------------------------------------------------------------------ key value errors


class _Unencodable:
    """A value no key codec accepts."""


def _entity(pk: TemplateShape, sk: TemplateShape) -> type[st.Entity]:
    table = st.Table("errors", delimiter=sk.delimiter, escape=sk.escape)
    sk_source = sk.source
    fields: dict[str, Any] = {"p": (str, ...)}
    for name, kind in sk.fields:
        fields["s" + name] = (kind.annotation, ...)
        sk_source = sk_source.replace("{" + name + "}", "{s" + name + "}")
    return create_model(
        "Keyed",
        __base__=st.Entity,
        __cls_kwargs__={"table": table, "pk": f"P{sk.delimiter}{{p}}", "sk": sk_source},
        **fields,
    )


@settings(max_examples=60, deadline=None)
@given(shape=template_shapes(), data=hs.data())
def test_a_bad_key_value_is_a_key_encode_error_wherever_it_is_given(
    shape: TemplateShape, data: hs.DataObject
) -> None:
    entity = _entity(shape, shape)
    values = {"s" + k: v for k, v in data.draw(shape_values(shape)).items()}
    sk_names = ["s" + name for name, _ in shape.fields]
    given = data.draw(hs.integers(0, len(sk_names)), label="sort key fields given")
    query_values: dict[str, Any] = {"p": "x", **{n: values[n] for n in sk_names[:given]}}
    bad = data.draw(hs.sampled_from(["p", *sk_names[: given + 1]]), label="bad field")
    if bad in query_values:
        query_values[bad] = _Unencodable()
        with pytest.raises(st.KeyEncodeError, match=f"field '{bad}'"):
            entity.query(**query_values)
        with pytest.raises(st.KeyEncodeError, match=f"field '{bad}'"):
            entity.get(**{**values, **query_values})
        return
    # The next sort key field, in a range condition.
    query = entity.query(**query_values)
    op = data.draw(hs.sampled_from(["gt", "ge", "lt", "le", "between"]), label="op")
    value = (_Unencodable(), _Unencodable()) if op == "between" else _Unencodable()
    with pytest.raises(st.KeyEncodeError, match=f"field '{bad}'"):
        getattr(query, op)(**{bad: value})


# ------------------------------------------------------------------ modelling mistakes

RESERVED = sorted(
    {
        name
        for base in st.Entity.__mro__
        if base is not object
        for name in vars(base)
        if not name.startswith("_")
    }
)


@pytest.mark.parametrize("name", RESERVED)
def test_a_field_that_shadows_an_entity_attribute_is_refused_at_class_definition(
    name: str,
) -> None:
    home = "BaseModel" if any(name in vars(b) for b in BaseModel.__mro__) else "Entity"
    with pytest.raises(
        st.ModelDefinitionError,
        match=rf"^Bad\.{name}: the field name shadows {home}\.{name}, which Bad needs; "
        "rename the field$",
    ):
        create_model(  # type: ignore[call-overload]
            "Bad",
            __base__=st.Entity,
            __cls_kwargs__={"table": st.Table("shadow"), "pk": "B#{k}", "sk": "M"},
            k=(str, ...),
            **{name: (str, "")},
        )


def test_f_and_query_are_in_the_reserved_names() -> None:
    assert {"f", "query", "put", "plan", "key", "model_dump"} <= set(RESERVED)


table = st.Table("kinds")


class Thing(st.Entity, table=table, pk="T#{tid}", sk="META"):
    tid: str


class Account(st.Entity, table=table, pk="A#{aid}", sk="META"):
    aid: str


@pytest.mark.parametrize("operation", ["put", "create", "delete"])
@pytest.mark.parametrize("wrong", [Account(aid="a"), {"tid": "t"}, "t"])
def test_an_operation_given_another_entity_raises_entity_type_error(
    operation: str, wrong: object
) -> None:
    with pytest.raises(
        st.EntityTypeError,
        match=rf"^Thing\.put/create/delete takes a Thing, got {type(wrong).__qualname__}$",
    ) as caught:
        getattr(Thing, operation)(wrong)
    assert isinstance(caught.value, TypeError)  # what callers caught before


def test_an_unknown_field_reference_is_a_singletable_error_and_an_attribute_error() -> None:
    with pytest.raises(st.UnknownFieldError, match=r"^Thing has no field 'nope' \(fields: tid\)$"):
        _ = Thing.f.nope  # type: ignore[singletable]  # the run-time refusal is the test
    assert not hasattr(Thing.f, "nope")  # still an AttributeError for getattr/hasattr


def test_refusals_from_tooling_are_singletable_errors() -> None:
    with pytest.raises(st.ModelDefinitionError, match=r"^expected a Table, got str 'x'$"):
        st.snapshot(["x"])  # type: ignore[list-item]
    # Checked before the connection is used at all.
    with pytest.raises(st.RequestLimitError, match=r"^segments must be 1 to 1,000,000"):
        st.migrate(None, table, {}, segments=0)  # type: ignore[arg-type]


@given(
    label=hs.text(alphabet="abcT .:", min_size=1, max_size=12),
    rest=hs.text(alphabet="xyz .", max_size=20),
    prefixed=hs.booleans(),
)
def test_a_wrapped_message_names_its_label_once(label: str, rest: str, prefixed: bool) -> None:
    # Issue 26: export rejects read "entity Task: entity Task: ..."; with_context adds the
    # label unless the wrapped message starts with it.
    message = f"{label}: {rest}" if prefixed else rest
    assert with_context(label, message) == f"{label}: {rest}"
    context = f"{label}: cannot be set"
    assert with_context(context, message, named=label) == f"{context}: {rest}"
