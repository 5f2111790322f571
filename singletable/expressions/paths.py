"""Document paths and the placeholders every expression renders them through.

Every attribute name goes through a ``#n<i>`` placeholder and every value through a
``:v<i>`` placeholder held by one `Placeholders` per request, so no user text is ever
spliced into an expression (reserved words such as ``size`` and names such as ``a.b`` need
no special care). Placeholders are numbered in rendering order, so the same inputs always
give the same strings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from singletable.errors import ExpressionError
from singletable.types import AttributeValue

__all__ = [
    "Path",
    "Placeholders",
    "ValueConverter",
]


#: Converts one Python value into a low-level DynamoDB AttributeValue.
ValueConverter: TypeAlias = Callable[[Any], AttributeValue]
#: A document path: a top-level attribute name, then map keys (str) and list indexes (int).
Path: TypeAlias = "tuple[str | int, ...]"


class Placeholders:
    """Allocates the ``#name`` and ``:value`` placeholders of ONE request.

    Share one instance between every expression of a request (key condition, filter,
    projection, update, condition) so that the same attribute name gets the same
    placeholder everywhere and the maps cover all expressions.

    Attributes:
        names: ``ExpressionAttributeNames``: placeholder -> attribute name.
        values: ``ExpressionAttributeValues``: placeholder -> AttributeValue.
    """

    __slots__ = ("_by_name", "names", "values")

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, AttributeValue] = {}
        self._by_name: dict[str, str] = {}

    def name(self, attribute: str) -> str:
        """Returns the placeholder of an attribute name, allocating ``#n<i>`` on first use."""
        placeholder = self._by_name.get(attribute)
        if placeholder is None:
            placeholder = f"#n{len(self._by_name)}"
            self._by_name[attribute] = placeholder
            self.names[placeholder] = attribute
        return placeholder

    def value(self, av: AttributeValue) -> str:
        """Allocates a fresh ``:v<i>`` placeholder for an AttributeValue."""
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = av
        return placeholder

    def apply(self, request: dict[str, Any]) -> None:
        """Adds ``ExpressionAttributeNames`` / ``ExpressionAttributeValues`` to a request.

        Nothing is added for an empty map (DynamoDB rejects empty maps). Entries already in
        the request are kept; a placeholder already bound to something else is an error.

        Raises:
            ExpressionError: a placeholder in the request is bound to a different name or value.
        """
        for key, mapping in (
            ("ExpressionAttributeNames", self.names),
            ("ExpressionAttributeValues", self.values),
        ):
            if not mapping:
                continue
            target: dict[str, Any] = request.setdefault(key, {})
            for placeholder, bound in mapping.items():
                if placeholder in target and target[placeholder] != bound:
                    raise ExpressionError(
                        f"{key} already binds {placeholder} to {target[placeholder]!r}; "
                        "render every expression of a request with one Placeholders"
                    )
                target[placeholder] = bound


def _render_path(path: Path, ph: Placeholders) -> str:
    parts: list[str] = []
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif parts:
            parts.append("." + ph.name(step))
        else:
            parts.append(ph.name(step))
    return "".join(parts)


def _label_of(path: Path) -> str:
    parts: list[str] = []
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif not parts:
            parts.append(step)
        elif _is_identifier(step):
            parts.append("." + step)
        else:
            parts.append(f"[{step!r}]")
    return "".join(parts)


def _is_identifier(step: str) -> bool:
    # [A-Za-z_][A-Za-z0-9_]* without a regular expression to compile at import (issue 13).
    return step.isascii() and step.isidentifier()


def _check_step(step: object, label: str) -> str | int:
    if isinstance(step, bool) or not isinstance(step, (str, int)):
        raise ExpressionError(
            f"{label}: a path step must be a map key (str) or a list index (int), "
            f"got {type(step).__name__}"
        )
    if isinstance(step, str) and not step:
        raise ExpressionError(f"{label}: DynamoDB attribute names and map keys cannot be empty")
    if isinstance(step, int) and step < 0:
        raise ExpressionError(f"{label}: list index {step} is negative; DynamoDB needs >= 0")
    return step


def _check_path(path: tuple[object, ...]) -> Path:
    label = _label_of(tuple(s for s in path if isinstance(s, (str, int)))) or repr(path)
    if not path:
        raise ExpressionError("a document path needs at least one step")
    if not isinstance(path[0], str):
        raise ExpressionError(
            f"{label}: a document path starts with a top-level attribute name (str), "
            f"got {path[0]!r}"
        )
    return tuple(_check_step(step, label) for step in path)
