"""Comparisons the tests share: results alike where ``==`` does not look."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel


def same_result(a: Any, b: Any) -> bool:
    """Equal (NaN to NaN), and alike where ``==`` does not look: classes, a tzinfo's class,
    the fields set."""
    if a.__class__ is not b.__class__:
        return False
    if isinstance(a, BaseModel):
        return a.model_fields_set == b.model_fields_set and same_result(a.__dict__, b.__dict__)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_result(v, b[k]) for k, v in a.items())
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(same_result, a, b))
    if isinstance(a, datetime) and a.tzinfo.__class__ is not b.tzinfo.__class__:
        return False
    return bool(a == b) or (a != a and b != b)
