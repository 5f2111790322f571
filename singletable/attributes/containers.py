"""Compiled codecs of containers: lists and tuples (``L``), maps (``M``), sets (SS/NS/BS).

Each takes the compiled codec of its elements, built by `singletable.attributes.codecs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from singletable.attributes.codec_parts import TOP, Built, decode_mismatch, is_null, none_handler
from singletable.attributes.convert import map_key
from singletable.attributes.fastpath import ListFast, MapFast, SetFast, TupleFast
from singletable.attributes.size import long_name
from singletable.errors import ItemDecodeError, ItemEncodeError, ModelDefinitionError
from singletable.types import AttributeValue


def list_codec(where: str, nullable: bool, position: str, item: Built, as_tuple: bool) -> Built:
    """A list (or a variable-length tuple) stored as ``L``, each item by ``item``."""
    item_to, item_from, item_params, item_fast, _order = item
    on_none = none_handler(where, nullable, position)
    kind = "tuple" if as_tuple else "list"
    str_items = item_params.get("python") == "str"

    def to_av(value: Any) -> AttributeValue | None:
        cls = value.__class__
        if cls is list or cls is tuple:
            if str_items:  # skip a call per element for the common list[str]
                return {"L": [{"S": e} if e.__class__ is str else item_to(e) for e in value]}
            return {"L": [item_to(e) for e in value]}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(value, Sequence):
            raise ItemEncodeError(f"{where}: expected a {kind}, got {type(value).__name__}")
        return {"L": [item_to(e) for e in value]}

    def from_av(av: AttributeValue) -> Any:
        try:
            elements = av["L"]
        except (KeyError, TypeError):
            if is_null(av):
                return None
            raise decode_mismatch(where, "L", av) from None
        if as_tuple:
            return tuple([item_from(e) for e in elements])
        return [item_from(e) for e in elements]

    fast = ListFast(to_av, item_fast, nullable=nullable)
    return Built(to_av, from_av, {"type": kind, "items": item_params}, fast)


def fixed_tuple_codec(where: str, nullable: bool, position: str, items: list[Built]) -> Built:
    """A fixed-length tuple stored as ``L``, each position by its own codec."""
    encoders = [b[0] for b in items]
    decoders = [b[1] for b in items]
    count = len(items)
    on_none = none_handler(where, nullable, position)

    def to_av(value: Any) -> AttributeValue | None:
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if not isinstance(value, (tuple, list)) or len(value) != count:
            raise ItemEncodeError(f"{where}: expected a tuple of {count} items, got {value!r}")
        return {"L": [enc(e) for enc, e in zip(encoders, value, strict=True)]}

    def from_av(av: AttributeValue) -> Any:
        try:
            elements = av["L"]
        except (KeyError, TypeError):
            if is_null(av):
                return None
            raise decode_mismatch(where, "L", av) from None
        if len(elements) != count:
            raise ItemDecodeError(
                f"{where}: stored list has {len(elements)} items, the tuple has {count}"
            )
        return tuple([dec(e) for dec, e in zip(decoders, elements, strict=True)])

    params = {"type": "tuple", "items": [b[2] for b in items]}
    fast = TupleFast(to_av, [b[3] for b in items], nullable=nullable)
    return Built(to_av, from_av, params, fast)


def map_codec(where: str, nullable: bool, position: str, value_codec: Built) -> Built:
    """A ``dict[str, X]`` stored as ``M``, each value by ``value_codec``."""
    value_to, value_from, value_params, value_fast, _order = value_codec
    on_none = none_handler(where, nullable, position)
    str_values = value_params.get("python") == "str"

    def to_av(value: Any) -> AttributeValue | None:
        if value.__class__ is dict and str_values:
            fast = {k: {"S": v} if v.__class__ is str else value_to(v) for k, v in value.items()}
            for key in fast:
                if key.__class__ is not str or not key:
                    break
            else:
                if long_name(fast) is None:
                    return {"M": fast}
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if not isinstance(value, Mapping):
            raise ItemEncodeError(f"{where}: expected a mapping, got {type(value).__name__}")
        return {"M": {map_key(key, where): value_to(e) for key, e in value.items()}}

    def from_av(av: AttributeValue) -> Any:
        try:
            entries = av["M"]
        except (KeyError, TypeError):
            if is_null(av):
                return None
            raise decode_mismatch(where, "M", av) from None
        return {key: value_from(element) for key, element in entries.items()}

    fast = MapFast(to_av, value_fast, nullable=nullable)
    return Built(to_av, from_av, {"type": "map", "values": value_params}, fast)


def set_codec(
    where: str,
    nullable: bool,
    position: str,
    element: Any,
    elements: Built,
    frozen: bool,
) -> Built:
    """A set of ``element`` values, each converted by ``elements`` (a scalar's codec)."""
    elem_to, elem_from, elem_params, elem_fast, _order = elements
    scalar = elem_params.get("type")
    if scalar not in ("S", "N", "B"):
        raise ModelDefinitionError(
            f"{where}: a set must hold strings, numbers or bytes (stored as SS, NS or BS), "
            f"not {element!r}; use a list instead"
        )
    set_kind = scalar + "S"
    on_none = none_handler(where, nullable, position)
    make = frozenset if frozen else set

    def to_av(value: Any) -> AttributeValue | None:
        if value is None:
            return on_none()  # type: ignore[no-any-return]
        if not isinstance(value, (set, frozenset)):
            raise ItemEncodeError(f"{where}: expected a set, got {type(value).__name__}")
        if not value:
            if position == TOP:
                return None
            raise ItemEncodeError(
                f"{where}: an empty set cannot be stored inside a list or map (DynamoDB has "
                "no empty sets); use a list, or leave the set out"
            )
        elements: list[Any] = []
        for e in value:
            av = elem_to(e)
            if av is None or scalar not in av:
                raise ItemEncodeError(f"{where}: a set cannot hold {e!r}")
            elements.append(av[scalar])
        return {set_kind: elements}

    def from_av(av: AttributeValue) -> Any:
        try:
            elements = av[set_kind]
        except (KeyError, TypeError):
            if isinstance(av, dict):
                if av.get("NULL"):
                    return None
                if av.get("L") == []:
                    return make()
            raise decode_mismatch(where, set_kind, av) from None
        return make([elem_from({scalar: e}) for e in elements])

    return Built(
        to_av,
        from_av,
        {"type": "frozenset" if frozen else "set", "of": set_kind, "items": elem_params},
        SetFast(to_av, elem_fast, set_kind, frozen=frozen, nullable=nullable),
    )
