"""botocore's endpoint resolution for the lean transport, remembered by its rule parameters.

botocore resolves a client's endpoint on every call (``_resolve_endpoint_ruleset``):
it computes the ruleset's parameters (builtins such as the region, FIPS, dual-stack,
the endpoint URL and the credentials' account id; the operation's context parameters,
such as ``ResourceArn`` from ``TableName`` or ``ResourceArnList`` from the keys of
``RequestItems`` through jmespath), evaluates the rules (cached) and turns the
endpoint's auth schemes into the request's signing context. The rules' answer is a
function of those parameters alone, given the client; computing them is most of the
cost: about 23 µs a GetItem and 32 µs a BatchWriteItem on this machine, against
about 2 µs for the rest.

`EndpointMemo` computes the parameters itself, reading exactly what botocore's
``_get_provider_params`` reads, in its order, through botocore's own per-operation
tables (`botocore_internals.EndpointRuleInputs`), and keys botocore's own answer on
them: a miss asks botocore (``_resolve_endpoint_ruleset``) and keeps what it returned
and wrote into the request context. tests/io/test_lean_endpoint.py compares both, field
by field, on generated requests and client configurations.

It leaves the whole call to botocore whenever something it does not key on could take
part:

* a handler on ``before-endpoint-resolution`` (it may change the builtins per call);
* a botocore context (``botocore.context``) in force: resolution records user-agent
  feature ids in it;
* the ``botocore.regions`` logger enabled for debug (resolution logs the parameters);
* a request context that is not empty (botocore merges the signing context into it);
* a parameter value that is not a ``str``, a ``bool``, ``None`` or a list of ``str``
  (botocore's own rule cache would equate ``1`` and ``True``, for instance);
* a client whose resolver is not botocore's `EndpointRulesetResolver`.

The credentials' account id is read on every call, as botocore reads it (a refresh
that changes it changes the key). On a miss it is read again after botocore's answer,
which is kept only if the key did not change meanwhile.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import jmespath  # botocore's own dependency, which evaluates these paths
from botocore.model import OperationModel

from singletable.io import botocore_internals as internals

#: How many distinct parameter sets are kept; past it the memo starts over (a batch
#: request's tables make a key each, so the set is only bounded by the caller).
MAX_RESULTS = 256

_REGIONS_LOG = logging.getLogger("botocore.regions")

#: How one rule parameter is found: (static value, call member, operation context
#: path's search, client context name, builtin), tried in that order as botocore does.
_Source = tuple[Any, str | None, Callable[[Any], Any] | None, str | None, str | None]
Key = tuple[Any, ...]
Resolved = tuple[str, dict[str, str], dict[str, Any]]


def context_path_search(path: str) -> Callable[[Any], Any]:
    """``jmespath.search(path, params)`` as a function of the parameters.

    jmespath's interpreter visits the parsed expression node by node on every call:
    about 100 µs for the ``ResourceArnList`` of a 10-item TransactWriteItems
    (``TransactItems[*].[ConditionCheck.TableName, Put.TableName, ...][]``), 4.6 µs for
    ``keys(RequestItems)``. The expression's nodes are compiled once into closures
    doing what jmespath's visitor does for each (`_compiled`); ``keys(Member)`` is
    read from the dict (jmespath's own answer for anything but a dict there). An
    expression holding another kind of node is left to jmespath.
    """
    expression = jmespath.compile(path)
    tree: Any = expression.parsed
    children = tree["children"]
    if (
        tree["type"] == "function_expression"
        and tree["value"] == "keys"
        and len(children) == 1
        and children[0]["type"] == "field"
    ):
        member: str = children[0]["value"]

        def keys(params: Any) -> Any:
            value = params.get(member)
            if type(value) is dict:
                return list(value)
            return expression.search(params)

        return keys
    compiled = _compiled(tree)
    if compiled is not None:
        return compiled
    search: Callable[[Any], Any] = expression.search
    return search


def _identity(value: Any) -> Any:
    return value


def _field_chain(node: Any) -> tuple[str, ...] | None:
    """The names of a field (``a``) or a subexpression of fields (``a.b``), else ``None``."""
    if node["type"] == "field":
        return (node["value"],)
    if node["type"] == "subexpression":
        names: list[str] = []
        for child in node["children"]:
            chain = _field_chain(child)
            if chain is None:
                return None
            names += chain
        return tuple(names)
    return None


def _follow(value: Any, names: tuple[str, ...]) -> Any:
    """The value at fields ``names`` in turn, by jmespath's rule (``None`` off a non-map)."""
    for name in names:
        # What None.get's AttributeError gives, without raising it: a transaction item
        # holds one of its four kinds, so most of the paths end on None.
        if value is None:
            return None
        try:
            value = value.get(name)
        except AttributeError:
            return None
    return value


def _compiled(node: Any) -> Callable[[Any], Any] | None:
    """What jmespath's ``TreeInterpreter.visit_<type>`` does for ``node``, as a closure.

    For identity, field, subexpression, projection, multi-select list and flatten
    nodes (the transactions' paths); ``None`` for any other. Fields in a row are
    followed in one loop, and a multi-select list of them in one closure: the
    ``ResourceArnList`` of a 25-item TransactWriteItems takes 20 µs, against 66 µs
    with a closure a node and 470 µs for jmespath (timeit, this machine).
    """
    kind = node["type"]
    if kind == "identity":
        return _identity
    chain = _field_chain(node)
    if chain is not None:
        return lambda value: _follow(value, chain)
    if kind == "multi_select_list":
        chains = [_field_chain(child) for child in node["children"]]
        if all(chain is not None for chain in chains):
            return _multi_select_fields([chain for chain in chains if chain is not None])
    parts = [_compiled(child) for child in node["children"]]
    build = _BUILDERS.get(kind)
    if build is None or not parts or any(part is None for part in parts):
        return None
    return build([part for part in parts if part is not None])


def _multi_select_fields(chains: list[tuple[str, ...]]) -> Callable[[Any], Any]:
    def multi_select_fields(value: Any) -> Any:
        if value is None:
            return None
        return [_follow(value, chain) for chain in chains]

    return multi_select_fields


def _multi_select_list(steps: list[Callable[[Any], Any]]) -> Callable[[Any], Any] | None:
    def multi_select_list(value: Any) -> Any:
        if value is None:
            return None
        return [step(value) for step in steps]

    return multi_select_list


def _subexpression(steps: list[Callable[[Any], Any]]) -> Callable[[Any], Any] | None:
    def subexpression(value: Any) -> Any:
        for step in steps:
            value = step(value)
        return value

    return subexpression


def _projection(steps: list[Callable[[Any], Any]]) -> Callable[[Any], Any] | None:
    if len(steps) != 2:
        return None
    base, each = steps

    def projection(value: Any) -> Any:
        items = base(value)
        if not isinstance(items, list):
            return None
        collected = []
        for item in items:
            current = each(item)
            if current is not None:
                collected.append(current)
        return collected

    return projection


def _flatten(steps: list[Callable[[Any], Any]]) -> Callable[[Any], Any] | None:
    if len(steps) != 1:
        return None
    (inner,) = steps

    def flatten(value: Any) -> Any:
        items = inner(value)
        if not isinstance(items, list):
            return None
        merged: list[Any] = []
        for item in items:
            if isinstance(item, list):
                merged.extend(item)
            else:
                merged.append(item)
        return merged

    return flatten


#: The node kinds over compiled children, each as jmespath's visitor evaluates it.
_BUILDERS: dict[str, Callable[[list[Callable[[Any], Any]]], Callable[[Any], Any] | None]] = {
    "subexpression": _subexpression,
    "projection": _projection,
    "multi_select_list": _multi_select_list,
    "flatten": _flatten,
}


class EndpointMemo:
    """``client._resolve_endpoint_ruleset(model, params, request_context)``, remembered.

    ``resolve`` returns what botocore's returns (the URL, the extra headers, the
    endpoint's properties) and writes into ``request_context`` what botocore writes
    (the auth type and signing context of the endpoint's auth schemes).
    """

    def __init__(self, client: Any) -> None:
        self._botocore = internals.endpoint_resolver(client)
        self._inputs = internals.endpoint_rule_inputs(client)
        self._events = client.meta.events
        service_id = client.meta.service_model.service_id.hyphenize()
        self._event = f"before-endpoint-resolution.{service_id}"
        self._sources: dict[str, tuple[_Source, ...]] = {}
        self._results: dict[Key, tuple[str, dict[str, str], dict[str, Any], dict[str, Any]]] = {}

    def resolve(
        self, model: OperationModel, params: Mapping[str, Any], request_context: dict[str, Any]
    ) -> Resolved:
        """The ``(url, headers, properties)`` botocore returns for this call (and its context)."""
        inputs = self._inputs
        if (
            inputs is None
            or request_context
            or internals.botocore_context_active()
            or _REGIONS_LOG.isEnabledFor(logging.DEBUG)
            or internals.has_handlers(self._events, self._event)
        ):
            return self._botocore(model, params, request_context)
        key = self.key(model, params)
        if key is None:
            return self._botocore(model, params, request_context)
        kept = self._results.get(key)
        if kept is None:
            url, headers, properties = self._botocore(model, params, request_context)
            if self.key(model, params) == key:
                if len(self._results) >= MAX_RESULTS:
                    self._results.clear()
                written = {
                    name: dict(value) if type(value) is dict else value
                    for name, value in request_context.items()
                }
                self._results[key] = (url, dict(headers), properties, written)
            return url, headers, properties
        url, headers, properties, written = kept
        for name, value in written.items():
            # botocore gives each call a signing context of its own.
            request_context[name] = dict(value) if type(value) is dict else value
        return url, dict(headers), properties

    def key(self, model: OperationModel, params: Mapping[str, Any]) -> Key | None:
        """The rule parameters botocore would compute for this call, in the ruleset's order.

        ``None`` when one is not a value the memo keys on (see the module's notes).
        A list is given as a tuple, as botocore's rule cache takes it.
        """
        inputs = self._inputs
        assert inputs is not None
        sources = self._sources.get(model.name)
        if sources is None:
            sources = self._sources[model.name] = self._sources_of(model)
        builtins = inputs.builtins
        values: list[Any] = []
        for static, member, search, client_name, builtin in sources:
            value = static
            if value is None:
                if member is not None:
                    value = params.get(member)
                if value is None and search is not None:
                    value = search(params)
                if value is None and client_name is not None:
                    value = inputs.client_context.get(client_name)
                if value is None and builtin is not None:
                    value = builtins.get(builtin)
                    if callable(value):
                        value = value()
            kind = type(value)
            if kind is list or kind is tuple:
                if not all(type(item) is str for item in value):
                    return None
                value = tuple(value)
            elif not (value is None or kind is str or kind is bool):
                return None
            values.append(value)
        return tuple(values)

    def _sources_of(self, model: OperationModel) -> tuple[_Source, ...]:
        inputs = self._inputs
        assert inputs is not None
        static = inputs.static_context(model)
        dynamic = inputs.dynamic_context(model)
        # {name: {"path": jmespath}}, or an empty list when the operation has none.
        paths: Mapping[str, Mapping[str, str]] = model.operation_context_parameters  # type: ignore[assignment]
        return tuple(
            (
                static.get(name),
                dynamic.get(name),
                context_path_search(paths[name]["path"]) if name in paths else None,
                inputs.client_context_names.get(name),
                builtin,
            )
            for name, builtin in inputs.parameters
        )
