"""A mypy plugin that checks the names and values users write in singletable calls.

Enable it next to pydantic's plugin::

    [tool.mypy]
    plugins = ["pydantic.mypy", "singletable.mypy"]

It reads each entity's class keywords (``pk``, ``sk``, ``indexes``) while mypy analyses
the class, keeps what it needs in the class's plugin metadata (so mypy's incremental cache
carries it), and then, while mypy checks calls:

* ``Order.f.<name>``: the field exists, and the reference is a ``FieldRef[<field type>]``;
* ``get``, ``update``, ``upsert``, ``delete``, ``query``: keyword arguments are key fields
  (per index for ``query``: partition key fields required, sort key fields in template
  order) with values of the field's type, and ``index=`` is one of the entity's indexes;
* ``between``/``gt``/``ge``/``lt``/``le``/``begins_with`` on a query: the next sort key
  field, with a value of its type (a ``str`` prefix for ``begins_with``);
* ``Update.set``/``known``/``add``/``append``/... and ``project``: field names, values.

What mypy cannot see (a template held in a variable that is not ``Final``, ``**dict``
arguments, a query kept in a variable before ``between``) is left to the run-time checks,
which are unchanged. Messages name the entity and the names it allows.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from functools import partial
from typing import Any, Final

from mypy.errorcodes import ErrorCode
from mypy.nodes import (
    ARG_NAMED,
    ARG_NAMED_OPT,
    ARG_POS,
    ARG_STAR,
    ARG_STAR2,
    GDEF,
    AssignmentStmt,
    CallExpr,
    Context,
    DictExpr,
    Expression,
    ListExpr,
    MemberExpr,
    NameExpr,
    RefExpr,
    StrExpr,
    SymbolTableNode,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.options import Options
from mypy.plugin import (
    AttributeContext,
    CheckerPluginInterface,
    ClassDefContext,
    DynamicClassDefContext,
    MethodSigContext,
    Plugin,
    SemanticAnalyzerPluginInterface,
)
from mypy.types import (
    CallableType,
    Instance,
    LiteralType,
    NoneType,
    ProperType,
    TupleType,
    Type,
    TypeType,
    UnionType,
    get_proper_type,
)

from singletable.keys.templates import FIELD_SEGMENT

__all__ = ["SINGLETABLE_NAME", "SingletablePlugin", "plugin"]

# Where mypy sees the classes the plugin looks at: the modules that define them (the
# package's re-exports rename ``__module__`` at run time, so it cannot be read from there).
_ENTITY: Final = "singletable.entity.Entity"
_ENTITY_INPUT: Final = "singletable.entity.EntityInput"
_FIELD_REFS: Final = "singletable.model.fields.FieldRefs"
_FIELD_REF: Final = "singletable.expressions.fields.FieldRef"
_QUERY: Final = "singletable.operations.query.EntityQuery"
_UPDATE: Final = "singletable.operations.update.Update"
_GET: Final = "singletable.operations.items.Get"
_INDEX_KEYS_NAME: Final = "IndexKeys"
_NATIVE_GSI_NAME: Final = "NativeGSI"
_BASE_MODEL: Final = "pydantic.main.BaseModel"
_METADATA_KEY: Final = "singletable"

#: The error code of every message of this plugin (``# type: ignore[singletable]``).
SINGLETABLE_NAME: Final = ErrorCode(
    "singletable", "Unknown or misplaced field, key or index name of an entity", "General"
)

_KEY_METHODS: Final = frozenset({"get", "update", "upsert", "delete", "query"})
_RANGE_METHODS: Final = frozenset({"between", "gt", "ge", "lt", "le", "begins_with"})
#: Update builder methods taking ``field=value`` keywords; ``known`` may name key fields.
_UPDATE_VALUE_METHODS: Final = frozenset(
    {"set", "known", "add", "delete_from", "append", "prepend", "set_if_not_exists"}
)
#: Update builder methods taking field names as positional strings.
_UPDATE_NAME_METHODS: Final = frozenset({"remove", "increment"})
#: Query builder methods that keep the key condition as it is (walked back over).
_QUERY_PASS_THROUGH: Final = frozenset(
    {"filter", "limit", "page_size", "consistent", "capacity", "signed", "descending", "ascending"}
)
_PRIMARY: Final = ""


def plugin(version: str) -> type[Plugin]:
    """The entry point mypy calls (``plugins = ["singletable.mypy"]``)."""
    return SingletablePlugin


# --------------------------------------------------------------------------- class keywords


def _str_value(expr: Expression | None) -> str | None:
    """A string literal, or a ``Final`` name bound to one; ``None`` when not static."""
    if isinstance(expr, StrExpr):
        return expr.value
    if isinstance(expr, RefExpr) and isinstance(expr.node, Var):
        value = expr.node.final_value
        if isinstance(value, str):
            return value
    return None


def _is_none(expr: Expression | None) -> bool:
    return isinstance(expr, NameExpr) and expr.fullname == "builtins.None"


def _template_fields(template: str) -> list[str]:
    return [str(name) for name in FIELD_SEGMENT.findall(template)]


def _key_entry(pk: Expression | None, sk: Expression | None) -> dict[str, Any] | None:
    """What a key plan needs for checks; ``None`` when a template is not a static str."""
    pk_source = _str_value(pk)
    if pk_source is None:
        return None
    if sk is None or _is_none(sk):
        return {"pk": _template_fields(pk_source), "sk": None, "sk_source": None}
    sk_source = _str_value(sk)
    if sk_source is None:
        return None
    return {
        "pk": _template_fields(pk_source),
        "sk": _template_fields(sk_source),
        "sk_source": sk_source,
    }


def _index_entry(value: Expression, primary: dict[str, Any] | None) -> dict[str, Any] | None:
    """One ``indexes={name: ...}`` value: ``IndexKeys(pk=, sk=)``, a tuple or a str."""
    if isinstance(value, CallExpr) and isinstance(value.callee, (NameExpr, MemberExpr)):
        if value.callee.name != _INDEX_KEYS_NAME or ARG_STAR in value.arg_kinds:
            return None
        given: dict[str, Expression] = {}
        for position, (name, arg) in enumerate(zip(value.arg_names, value.args, strict=True)):
            given[name or ("pk", "sk")[min(position, 1)]] = arg
        pk, sk = given.get("pk"), given.get("sk")
        if pk is None or _is_none(pk):
            # An LSI: the table's partition key with its own sort key.
            return None if primary is None else _key_entry(_pk_expr(primary), sk)
        return _key_entry(pk, sk)
    if isinstance(value, TupleExpr) and len(value.items) == 2:
        return _key_entry(value.items[0], value.items[1])
    source = _str_value(value)
    if source is not None:
        # A bare template is a GSI's partition key or an LSI's sort key: which one depends
        # on the table, which the plugin does not read; only the names are checked.
        return {"either": _template_fields(source)}
    return None


def _native_parts(expr: Expression | None) -> list[str] | None:
    """The attribute names of a native GSI's ``pk=``/``sk=``: strs or ``KeyPart(name, ...)``."""
    if expr is None:
        return []
    items = expr.items if isinstance(expr, (ListExpr, TupleExpr)) else [expr]
    names = []
    for item in items:
        if isinstance(item, CallExpr) and item.args:
            item = item.args[0]
        name = _str_value(item)
        if name is None:
            return None
        names.append(name)
    return names


def _native_index(call: CallExpr) -> tuple[str, dict[str, Any]] | None:
    """``NativeGSI(name, pk=[...], sk=[...])`` as a key entry: the parts are the fields."""
    given: dict[str, Expression] = {}
    for position, (name, arg) in enumerate(zip(call.arg_names, call.args, strict=True)):
        given[name or ("name", "pk", "sk")[min(position, 2)]] = arg
    index, pk, sk = _str_value(given.get("name")), given.get("pk"), given.get("sk")
    pk_parts, sk_parts = _native_parts(pk), _native_parts(sk)
    if index is None or pk is None or pk_parts is None or sk_parts is None:
        return None
    sk_source = "native GSI sort parts " + ", ".join(sk_parts)
    return index, {"pk": pk_parts, "sk": sk_parts, "sk_source": sk_source}


def _native_indexes(
    api: SemanticAnalyzerPluginInterface, table: Expression | None
) -> dict[str, Any] | None:
    """The native GSIs of the entity's ``table=``, read from the statement that makes it.

    ``None`` when that statement cannot be seen (a table made in a function, or a module
    mypy loaded from its cache): the index names are then left to run time.
    """
    if not isinstance(table, RefExpr) or not isinstance(table.node, Var):
        return None
    module_name, _, variable = table.node.fullname.rpartition(".")
    module = api.modules.get(module_name)
    if module is None:
        return None
    for statement in module.defs:
        if not (
            isinstance(statement, AssignmentStmt)
            and any(isinstance(lv, NameExpr) and lv.name == variable for lv in statement.lvalues)
            and isinstance(statement.rvalue, CallExpr)
        ):
            continue
        call = statement.rvalue
        found: dict[str, Any] = {}
        for name, arg in zip(call.arg_names, call.args, strict=True):
            if name != "indexes" or not isinstance(arg, (ListExpr, TupleExpr)):
                continue
            for item in arg.items:
                callee = item.callee if isinstance(item, CallExpr) else None
                if isinstance(callee, (NameExpr, MemberExpr)) and callee.name == _NATIVE_GSI_NAME:
                    assert isinstance(item, CallExpr)
                    entry = _native_index(item)
                    if entry is None:
                        return None
                    found[entry[0]] = entry[1]
        return found
    return None


def _pk_expr(primary: Mapping[str, Any]) -> Expression:
    # _key_entry takes expressions; rebuild the primary partition key template from fields.
    return StrExpr("".join("{" + name + "}" for name in primary["pk"]))


def _record_if_entity(ctx: ClassDefContext) -> None:
    """Keep an entity's key templates and index names in its plugin metadata."""
    info = ctx.cls.info
    if info.fullname == _ENTITY or not info.has_base(_ENTITY):
        return
    keywords = ctx.cls.keywords
    if "pk" not in keywords:
        info.metadata.pop(_METADATA_KEY, None)  # abstract: nothing to check against
        return
    primary = _key_entry(keywords["pk"], keywords.get("sk"))
    keys: dict[str, Any] = {_PRIMARY: primary}
    indexes_known = True
    indexes = keywords.get("indexes")
    if isinstance(indexes, DictExpr):
        for key_expr, value in indexes.items:
            name = _str_value(key_expr)
            if name is None:
                indexes_known = False
                continue
            keys[name] = _index_entry(value, primary)
    elif indexes is not None and not _is_none(indexes):
        indexes_known = False
    # A native GSI is the table's: every entity storing its parts feeds it.
    native = _native_indexes(ctx.api, keywords.get("table"))
    if native is None:
        indexes_known = False
    else:
        # Only the indexes whose every part the entity stores (a field of that name). The
        # class body is not analysed yet: its own fields are read from its statements.
        fields = {
            n for base in info.mro for n, sym in base.names.items() if isinstance(sym.node, Var)
        }
        fields.update(
            lv.name
            for statement in ctx.cls.defs.body
            if isinstance(statement, AssignmentStmt)
            for lv in statement.lvalues
            if isinstance(lv, NameExpr)
        )
        keys.update(
            {
                name: entry
                for name, entry in native.items()
                if name not in keys and set(entry["pk"] + entry["sk"]) <= fields
            }
        )
    info.metadata[_METADATA_KEY] = {"keys": keys, "indexes_known": indexes_known}


# --------------------------------------------------------------------------- entity lookup


class _Entity:
    """What the checks need of one entity class, read from mypy's view of it."""

    def __init__(self, info: TypeInfo, metadata: Mapping[str, Any]) -> None:
        self.info = info
        self.name = info.name
        self.keys: Mapping[str, Mapping[str, Any] | None] = metadata["keys"]
        self.indexes_known: bool = metadata["indexes_known"]
        self.fields: dict[str, Var] = {}
        for base in reversed(info.mro):
            if base.fullname in (_ENTITY, _BASE_MODEL) or not base.has_base(_BASE_MODEL):
                continue
            for name, symbol in base.names.items():
                node = symbol.node
                if (
                    isinstance(node, Var)
                    and not node.is_classvar
                    and not node.is_inferred  # annotated: pydantic makes it a field
                    and node.type is not None
                    and not name.startswith("_")
                    and name != "model_config"
                ):
                    self.fields[name] = node

    @property
    def primary(self) -> Mapping[str, Any] | None:
        return self.keys[_PRIMARY]

    def index_names(self) -> list[str]:
        return [name for name in self.keys if name != _PRIMARY]

    def field_type(self, name: str) -> Type:
        var = self.fields[name]
        assert var.type is not None
        return var.type

    def value_type(self, api: CheckerPluginInterface, name: str) -> Type:
        """The values a keyword argument for the field takes.

        The field's type, and an ``int`` where it is a ``Decimal`` (pydantic converts it
        exactly).
        """
        return _accepting_int(api, self.field_type(name))

    def field_list(self) -> str:
        # Sorted: mypy's cache does not keep the order in which fields were declared.
        return ", ".join(sorted(self.fields)) or "none"

    def where(self, index: str) -> str:
        return (
            f"{self.name}'s table key" if index == _PRIMARY else f"{self.name}'s index {_q(index)}"
        )


def _accepting_int(api: CheckerPluginInterface, typ: Type) -> Type:
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType):
        return UnionType.make_union([_accepting_int(api, item) for item in proper.items])
    if isinstance(proper, Instance) and proper.type.fullname == "decimal.Decimal":
        return UnionType.make_union([typ, api.named_generic_type("builtins.int", [])])
    return typ


def _entity_of(typ: Type) -> _Entity | None:
    """The entity behind ``Order``, ``type[Order]``, an ``Order`` or ``Update[Order]``."""
    proper = get_proper_type(typ)
    if isinstance(proper, CallableType) and proper.is_type_obj():
        proper = get_proper_type(proper.ret_type)
    elif isinstance(proper, TypeType):
        proper = proper.item
    if not isinstance(proper, Instance):
        return None
    metadata = proper.type.metadata.get(_METADATA_KEY)
    if metadata is None:
        return None
    return _Entity(proper.type, metadata)


def _entity_argument(typ: ProperType) -> _Entity | None:
    """The entity of a builder type such as ``Update[Order]`` or ``_FieldRefs[Order]``."""
    if isinstance(typ, Instance) and typ.args:
        return _entity_of(typ.args[0])
    return None


# --------------------------------------------------------------------------- signatures


def _q(name: str) -> str:
    """Quotes a name as mypy's own messages do."""
    return f'"{name}"'


def _fail(api: CheckerPluginInterface, message: str, context: Context) -> None:
    api.fail(message, context, code=SINGLETABLE_NAME)


def _keywords(
    call: CallExpr, options: Collection[str | None]
) -> list[tuple[str, Expression]] | None:
    """The ``name=value`` arguments of a call that are not the method's own options.

    ``None`` when a ``**mapping`` argument hides the names.
    """
    if ARG_STAR2 in call.arg_kinds:
        return None
    return [
        (name, arg)
        for name, arg, kind in zip(call.arg_names, call.args, call.arg_kinds, strict=True)
        if name is not None and kind == ARG_NAMED and name not in options
    ]


def _positional_strings(call: CallExpr) -> list[tuple[str, Expression]]:
    return [
        (value, arg)
        for arg, kind in zip(call.args, call.arg_kinds, strict=True)
        if kind == ARG_POS and (value := _str_value(arg)) is not None
    ]


def _with_named(
    signature: CallableType,
    params: Sequence[tuple[str, Type, bool]],
    *,
    name: str,
    replace: Mapping[str, Type] | None = None,
) -> CallableType:
    """The signature with keyword parameters added before its ``**kwargs``.

    The ``**kwargs`` stays: names the plugin reports itself, and ``**mapping`` arguments,
    go there instead of getting a second, less precise error from mypy.
    """
    arg_types = list(signature.arg_types)
    arg_kinds = list(signature.arg_kinds)
    arg_names = list(signature.arg_names)
    for position, arg_name in enumerate(arg_names):
        if replace and arg_name is not None and arg_name in replace:
            arg_types[position] = replace[arg_name]
    at = arg_kinds.index(ARG_STAR2) if ARG_STAR2 in arg_kinds else len(arg_kinds)
    existing = set(arg_names)
    new = [(n, t, required) for n, t, required in params if n not in existing]
    arg_types[at:at] = [t for _, t, _ in new]
    arg_kinds[at:at] = [ARG_NAMED if required else ARG_NAMED_OPT for _, _, required in new]
    arg_names[at:at] = [n for n, _, _ in new]
    return signature.copy_modified(
        arg_types=arg_types, arg_kinds=arg_kinds, arg_names=arg_names, name=name
    )


def _literal_union(api: CheckerPluginInterface, names: Sequence[str], *, optional: bool) -> Type:
    str_type = api.named_generic_type("builtins.str", [])
    items: list[Type] = [LiteralType(name, str_type) for name in names]
    if optional:
        items.append(NoneType())
    return UnionType.make_union(items)


def _call_of(ctx: MethodSigContext) -> CallExpr | None:
    return ctx.context if isinstance(ctx.context, CallExpr) else None


def _entity_method_signature(method: str, ctx: MethodSigContext) -> CallableType:
    """``Order.get/update/upsert/delete/query``: key fields by name, with their types."""
    signature = ctx.default_signature
    entity = _entity_of(ctx.type)
    call = _call_of(ctx)
    if entity is None or call is None:
        return signature
    label = f"{method} of {entity.name}"
    replace: dict[str, Type] = {}
    index: str | None = _PRIMARY
    if method == "query":
        if entity.indexes_known:
            replace["index"] = _literal_union(ctx.api, entity.index_names(), optional=True)
        index = _index_argument(call)
    if index is None:  # an index held in a variable: left to run time, as are the keys
        return signature.copy_modified(name=label)
    if index not in entity.keys:
        # mypy reports it against the Literal type of index=; the key names cannot be checked.
        return _with_named(signature, (), name=label, replace=replace)
    keys = entity.keys.get(index)
    keywords = _keywords(call, signature.arg_names)
    if keys is None or keywords is None:
        return _with_named(signature, (), name=label, replace=replace)
    if "either" in keys:
        names = [*(entity.primary or {}).get("pk", []), *keys["either"]]
        allowed = list(dict.fromkeys(names))
        params = [(n, entity.value_type(ctx.api, n), False) for n in allowed if n in entity.fields]
        _check_names(ctx.api, entity, keywords, allowed, f"key field of {entity.where(index)}")
        return _with_named(signature, params, name=label, replace=replace)
    pk: list[str] = keys["pk"]
    sk: list[str] = keys["sk"] or []
    allowed = pk + sk
    by_object = method == "delete" and ARG_POS in call.arg_kinds
    if method == "query":
        required = set(pk)
    elif by_object:
        required = set()
    else:
        required = set(allowed)
    params = [
        (n, entity.value_type(ctx.api, n), n in required) for n in allowed if n in entity.fields
    ]
    _check_names(ctx.api, entity, keywords, allowed, f"key field of {entity.where(index)}")
    if method == "query":
        _check_sort_key_order(ctx.api, entity, keywords, keys)
    return _with_named(signature, params, name=label, replace=replace)


def _index_argument(call: CallExpr) -> str | None:
    """The index a ``query(index=...)`` call names: ``""`` for the table, ``None`` if dynamic."""
    for name, arg in zip(call.arg_names, call.args, strict=True):
        if name == "index":
            return _PRIMARY if _is_none(arg) else _str_value(arg)
    return _PRIMARY


def _leading(sk: Sequence[str], given: Collection[str]) -> int:
    """How many sort key fields, from the first, are given."""
    count = 0
    while count < len(sk) and sk[count] in given:
        count += 1
    return count


def _check_sort_key_order(
    api: CheckerPluginInterface,
    entity: _Entity,
    keywords: Sequence[tuple[str, Expression]],
    keys: Mapping[str, Any],
) -> None:
    sk: list[str] = keys["sk"] or []
    leading = _leading(sk, {name for name, _ in keywords})
    for name, arg in keywords:
        if name in sk[leading:]:
            _fail(
                api,
                f"{entity.name}.query(): sort key field {_q(name)} is given without "
                f"{_q(sk[leading])}; sort key fields go in template order "
                f"({_q(keys['sk_source'])}: {', '.join(sk)})",
                arg,
            )


def _check_names(
    api: CheckerPluginInterface,
    entity: _Entity,
    keywords: Sequence[tuple[str, Expression]],
    allowed: Sequence[str],
    what: str,
    *,
    skip: frozenset[str] = frozenset(),
) -> None:
    for name, arg in keywords:
        if name not in allowed and name not in skip:
            _fail(
                api,
                f"{_q(name)} is not a {what} (allowed: {', '.join(allowed) or 'none'})",
                arg,
            )


def _unknown_field(
    api: CheckerPluginInterface, entity: _Entity, name: str, context: Context
) -> None:
    _fail(api, f"{entity.name} has no field {_q(name)} (fields: {entity.field_list()})", context)


def _update_signature(method: str, ctx: MethodSigContext) -> CallableType:
    """``Update[Order].set(...)`` and friends: field names and value types."""
    signature = ctx.default_signature
    entity = _entity_argument(ctx.type)
    call = _call_of(ctx)
    if entity is None or call is None:
        return signature
    label = f"{method} of Update[{entity.name}]"
    key_fields = set((entity.primary or {}).get("pk", [])) | set(
        (entity.primary or {}).get("sk") or []
    )
    if entity.primary is None:
        key_fields = set()

    def check_field(name: str, context: Context) -> bool:
        if name not in entity.fields:
            _unknown_field(ctx.api, entity, name, context)
            return False
        if name in key_fields and method != "known":
            _fail(
                ctx.api,
                f"{entity.name}.{name} is part of the primary key and cannot be updated "
                f"({method}); delete the item and put it under its new key",
                context,
            )
            return False
        return True

    if method in _UPDATE_NAME_METHODS:
        names = _positional_strings(call)
        if method == "increment":
            names = names[:1]
        for name, arg in names:
            check_field(name, arg)
        return signature.copy_modified(name=label)
    keywords = _keywords(call, signature.arg_names)
    if keywords is None:
        return signature.copy_modified(name=label)
    params: list[tuple[str, Type, bool]] = []
    for name, arg in keywords:
        if not check_field(name, arg):
            continue
        value_type = entity.value_type(ctx.api, name)
        var = entity.fields[name]
        if method == "set" and var.has_explicit_value:
            value_type = UnionType.make_union([value_type, NoneType()])  # None removes it
        params.append((name, value_type, False))
    return _with_named(signature, params, name=label)


def _query_origin(expr: Expression) -> CallExpr | None:
    """The ``Entity.query(...)`` call a builder chain starts from, if it is in sight."""
    while isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr):
        name = expr.callee.name
        if name == "query":
            return expr
        if name not in _QUERY_PASS_THROUGH:
            return None
        expr = expr.callee.expr
    return None


def _range_signature(method: str, ctx: MethodSigContext) -> CallableType:
    """``query.between(ts=(a, b))`` and friends: the next sort key field, typed."""
    signature = ctx.default_signature
    entity = _entity_argument(ctx.type)
    call = _call_of(ctx)
    if entity is None or call is None or not isinstance(call.callee, MemberExpr):
        return signature
    label = f"{method} of EntityQuery[{entity.name}]"
    keywords = _keywords(call, signature.arg_names)
    if keywords is None:
        return signature.copy_modified(name=label)

    def value_type(name: str) -> Type:
        if method == "begins_with":
            return ctx.api.named_generic_type("builtins.str", [])
        field = entity.value_type(ctx.api, name)
        if method == "between":
            return _pair(ctx.api, field)
        return field

    origin = _query_origin(call.callee.expr)
    index = None if origin is None else _index_argument(origin)
    given = None if origin is None else _keywords(origin, ("index",))
    plan = None if index is None or given is None else entity.keys.get(index)
    if index is not None and given is not None and plan is not None and "either" not in plan:
        sk: list[str] = plan["sk"] or []
        leading = _leading(sk, {name for name, _ in given})
        allowed = sk[leading : leading + 1]
        for name, arg in keywords:
            if name not in allowed:
                _fail(ctx.api, _range_message(entity, index, plan, method, name, leading), arg)
        params = [(n, value_type(n), False) for n in allowed if n in entity.fields]
        return _with_named(signature, params, name=label)
    # The query is out of sight (held in a variable): any sort key field of the entity,
    # when its indexes are all known (a native GSI's table may be out of sight too).
    if not entity.indexes_known:
        return signature.copy_modified(name=label)
    sort_fields: list[str] = []
    for keys in entity.keys.values():
        if keys is None:
            return signature.copy_modified(name=label)
        sort_fields.extend(keys.get("sk") or keys.get("either") or [])
    allowed = list(dict.fromkeys(sort_fields))
    _check_names(ctx.api, entity, keywords, allowed, f"sort key field of {entity.name}")
    params = [(n, value_type(n), False) for n in allowed if n in entity.fields]
    return _with_named(signature, params, name=label)


def _range_message(
    entity: _Entity, index: str, plan: Mapping[str, Any], method: str, name: str, leading: int
) -> str:
    sk: list[str] = plan["sk"] or []
    if not sk:
        return f"{entity.where(index)} has no sort key; {method}() has nothing to range over"
    if leading >= len(sk):
        return (
            f"every sort key field of {entity.where(index)} is already given; "
            f"{method}() has nothing left to range over"
        )
    return (
        f"{method}() on {entity.where(index)} must name {_q(sk[leading])}, the next "
        f"field of sort key template {_q(plan['sk_source'])}; got {_q(name)}"
    )


def _pair(api: CheckerPluginInterface, item: Type) -> Type:
    return TupleType([item, item], api.named_generic_type("builtins.tuple", [item]))


def _project_signature(owner: str, ctx: MethodSigContext) -> CallableType:
    """``query.project("a", "b")`` / ``get.project(...)``: field names."""
    entity = _entity_argument(ctx.type)
    call = _call_of(ctx)
    if entity is not None and call is not None:
        for name, arg in _positional_strings(call):
            if name not in entity.fields:
                _unknown_field(ctx.api, entity, name, arg)
    return ctx.default_signature


def _field_ref_attribute(name: str, ctx: AttributeContext) -> Type:
    """``Order.f.<name>``: ``FieldRef[<field type>]``, or an error naming the fields."""
    entity = _entity_argument(ctx.type)
    if entity is None:
        return ctx.default_attr_type
    if name not in entity.fields:
        _unknown_field(ctx.api, entity, name, ctx.context)
        return ctx.default_attr_type
    default = get_proper_type(ctx.default_attr_type)  # FieldRef[Any], from __getattr__
    if not isinstance(default, Instance) or default.type.fullname != _FIELD_REF:
        return ctx.default_attr_type
    return default.copy_modified(args=[entity.field_type(name)])


# --------------------------------------------------------------------------- the plugin


def _input_model_class(entity: str, ctx: DynamicClassDefContext) -> None:
    """``OrderInput = Order.input_model()``: a class usable in annotations.

    An ``EntityInput[Order]`` (so ``to_entity()`` is an ``Order``) whose fields mypy does
    not list: which ones the call leaves out is decided at run time.
    """
    base = ctx.api.lookup_fully_qualified_or_none(_ENTITY_INPUT)
    model = ctx.api.lookup_fully_qualified_or_none(entity)
    if base is None or model is None:
        return
    if not isinstance(base.node, TypeInfo) or not isinstance(model.node, TypeInfo):
        return
    info = ctx.api.basic_new_typeinfo(
        ctx.name, Instance(base.node, [Instance(model.node, [])]), ctx.call.line
    )
    info.fallback_to_any = True
    ctx.api.add_symbol_table_node(ctx.name, SymbolTableNode(GDEF, info))


class SingletablePlugin(Plugin):
    """Checks entity field, key and index names and value types (see the module doc)."""

    def __init__(self, options: Options) -> None:
        super().__init__(options)

    def _is_entity_class(self, fullname: str, *, unknown: bool) -> bool:
        symbol = self.lookup_fully_qualified(fullname)
        if symbol is None:
            return unknown  # e.g. a class defined in a function: decided by the callback
        return isinstance(symbol.node, TypeInfo) and symbol.node.has_base(_ENTITY)

    def get_customize_class_mro_hook(
        self, fullname: str
    ) -> Callable[[ClassDefContext], None] | None:
        """Record the class keywords of every subclass of ``Entity``.

        Called for every class once its MRO is known. (The base class hook would be the
        natural place, but mypy asks only the first plugin that answers, and pydantic's
        answers for every model.)
        """
        return _record_if_entity

    def get_method_signature_hook(
        self, fullname: str
    ) -> Callable[[MethodSigContext], CallableType] | None:
        """Precise signatures for the entity, update and query builder methods."""
        owner, _, method = fullname.rpartition(".")
        if method in _KEY_METHODS and owner not in (_UPDATE, _QUERY, _GET, _FIELD_REF):
            if self._is_entity_class(owner, unknown=True):
                return partial(_entity_method_signature, method)
        elif owner == _UPDATE and (
            method in _UPDATE_VALUE_METHODS or method in _UPDATE_NAME_METHODS
        ):
            return partial(_update_signature, method)
        elif owner == _QUERY and method in _RANGE_METHODS:
            return partial(_range_signature, method)
        elif owner in (_QUERY, _GET) and method == "project":
            return partial(_project_signature, owner)
        return None

    def get_dynamic_class_hook(
        self, fullname: str
    ) -> Callable[[DynamicClassDefContext], None] | None:
        """``OrderInput = Order.input_model(...)`` defines a class (`Entity.input_model`)."""
        owner, _, method = fullname.rpartition(".")
        if method == "input_model" and self._is_entity_class(owner, unknown=False):
            return partial(_input_model_class, owner)
        return None

    def get_attribute_hook(self, fullname: str) -> Callable[[AttributeContext], Type] | None:
        """``Order.f.<name>``."""
        owner, _, name = fullname.rpartition(".")
        if owner == _FIELD_REFS:
            return partial(_field_ref_attribute, name)
        return None
