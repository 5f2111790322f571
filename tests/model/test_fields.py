"""``Entity.f``: one immutable reference per field, built once per class.

A reference is built on first use and then shared (``Order.f.total is Order.f.total``):
building one checks the path and encodes the field's default, about 8 µs, which every
update and condition used to pay per reference. Shared, it must be immutable, and it
must be exactly the reference a fresh build gives, on every kind of field.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.expressions.conditions import render_condition
from singletable.expressions.fields import FieldRef
from singletable.expressions.paths import Placeholders
from singletable.expressions.updates import render_update
from singletable.model.fields import FieldRefs
from tests.strategies import build_entity, entity_instances, entity_specs

table = st.Table("field-refs")


class Base(st.Entity, table=table, pk="B#{id}", sk="BASE"):
    id: str
    note: str | None = None
    count: int = 0


class Derived(Base, table=table, pk="D#{id}", sk="DERIVED"):
    extra: str = "x"


def _rendered(ref: FieldRef[Any], value: Any) -> tuple[str, dict[str, str], dict[str, Any]]:
    """A condition and an update on ``ref``, as a request would carry them."""
    ph = Placeholders()
    condition = render_condition((ref == value) | ref.not_exists(), ph)
    update = render_update([ref.set(value)], ph)
    return f"{condition} / {update}", ph.names, ph.values


def test_a_field_reference_is_built_once_per_class() -> None:
    assert Base.f is Base.f
    assert Base.f.count is Base.f.count
    assert Derived.f.count is Derived.f.count
    # A subclass has references of its own: labels name the class written.
    assert Derived.f.count is not Base.f.count
    assert (Base.f.count.label, Derived.f.count.label) == ("Base.count", "Derived.count")
    unknown = "nope"  # a name the mypy plugin cannot see, as at run time
    with pytest.raises(st.UnknownFieldError, match="has no field 'nope'"):
        getattr(Base.f, unknown)
    with pytest.raises(st.UnknownFieldError):  # refused again, never cached
        getattr(Base.f, unknown)


def test_a_shared_reference_cannot_be_changed() -> None:
    ref = Base.f.note
    with pytest.raises(AttributeError, match="immutable: cannot set 'label'"):
        ref.label = "other"
    with pytest.raises(AttributeError, match="immutable: cannot delete 'absent'"):
        del ref.absent
    assert ref.label == "Base.note"
    assert ref.absent == {"NULL": True}


def test_a_copied_reference_renders_as_the_original() -> None:
    for ref, value in ((Base.f.note, "v"), (Base.f.count, 3), (Base.f.note["k"], "v")):
        for copied in (copy.copy(ref), copy.deepcopy(ref)):
            assert copied is not ref
            assert (copied.path, copied.label, copied.absent) == (ref.path, ref.label, ref.absent)
            assert _rendered(copied, value) == _rendered(ref, value)


def _outcome(ref: FieldRef[Any], value: Any) -> object:
    """What rendering gives, or the error it raises (a key field's update, say)."""
    try:
        return _rendered(ref, value)
    except st.SingleTableError as exc:
        return type(exc).__name__, str(exc)


def _stored_fields(model: type[st.Entity]) -> list[str]:
    return list(model.plan().fields)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hs.data(), spec=entity_specs())
def test_a_shared_reference_is_the_reference_a_fresh_build_gives(
    data: hs.DataObject, spec: Any
) -> None:
    model = build_entity(spec)
    instance = data.draw(entity_instances(spec, model))
    fresh_refs: FieldRefs[Any] = FieldRefs(model.plan())
    for name in _stored_fields(model):
        try:
            fresh = getattr(fresh_refs, name)
        except st.SingleTableError as exc:
            # A default DynamoDB cannot store (1E+126) is refused when the reference is
            # built, shared or not, every time.
            for _ in range(2):
                with pytest.raises(type(exc), match=re.escape(str(exc))):
                    getattr(model.f, name)
            continue
        shared = getattr(model.f, name)
        again = getattr(model.f, name)
        assert shared is again
        assert (shared.path, shared.label, shared.absent, shared.none_is_missing) == (
            fresh.path,
            fresh.label,
            fresh.absent,
            fresh.none_is_missing,
        )
        assert (shared.element_to_av is None) == (fresh.element_to_av is None)
        value = getattr(instance, name)
        expected = _outcome(fresh, value)
        assert _outcome(shared, value) == expected
        # Used once, the shared reference still renders the same for the next request.
        assert _outcome(shared, value) == expected
