"""Projection expressions: the attributes a read returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from singletable.errors import ExpressionError
from singletable.expressions.fields import FieldRef
from singletable.expressions.paths import Path, Placeholders, _check_path, _check_step, _render_path

__all__ = [
    "render_projection",
]


def render_projection(paths: Sequence[FieldRef[Any] | Path | str], ph: Placeholders) -> str:
    """Renders a projection expression.

    A ``str`` is one top-level attribute name, never a dotted path (``"a.b"`` names the
    attribute called ``a.b``); use a tuple or a `FieldRef` for nested paths. Duplicates are
    dropped, and a path inside another requested path is dropped too (DynamoDB rejects
    overlapping projection paths, and the outer path already returns it).

    Raises:
        ExpressionError: no paths, or a malformed path.
    """
    if not paths:
        raise ExpressionError("a projection needs at least one attribute")
    normalised: list[Path] = []
    for entry in paths:
        if isinstance(entry, FieldRef):
            normalised.append(entry.path)
        elif isinstance(entry, str):
            normalised.append((_check_step(entry, repr(entry)),))
        elif isinstance(entry, tuple):
            normalised.append(_check_path(entry))
        else:
            raise ExpressionError(
                f"a projection takes FieldRefs, path tuples or names, got {type(entry).__name__}"
            )
    kept = set(normalised)
    out: list[str] = []
    seen: set[Path] = set()
    for path in normalised:
        if path in seen or any(path[:i] in kept for i in range(1, len(path))):
            continue
        seen.add(path)
        out.append(_render_path(path, ph))
    return ", ".join(out)
