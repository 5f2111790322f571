"""Collections decode only the entities they declare (issue 16, defect 3).

Any other item found in the partition (another registered entity, another version of a
member, an unregistered one) goes to ``unknown``; it never enters the results. The
backend half is ``tests/integration/test_collection_members.py``.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as hs

import singletable as st
from tests.strategies import (
    SimpleEntitySpec,
    build_simple_entity,
    simple_entity_specs,
    simple_entity_table,
    simple_entity_values,
)


@settings(max_examples=40, deadline=None)
@given(hs.data())
def test_a_collection_yields_its_members_and_reports_every_other_item(
    data: hs.DataObject,
) -> None:
    table = simple_entity_table("members")
    specs: list[SimpleEntitySpec] = [data.draw(simple_entity_specs()) for _ in range(3)]
    # One partition template for all: a collection needs it, and so does the confusion.
    classes = []
    for spec in specs:
        kinds = [("p", specs[0].fields[0][1]), *spec.fields[1:]]
        shared = SimpleEntitySpec(
            spec.name, tuple(kinds), "P#{p}", spec.sk.replace("{f0}", "{p}"), None
        )
        classes.append((shared, build_simple_entity(shared, table)))
    n_members = data.draw(hs.integers(1, len(classes)))
    members = [cls for _, cls in classes[:n_members]]
    query = st.Collection("c", *members).query(p=data.draw(specs[0].fields[0][1].values))
    for spec, cls in classes:
        values = data.draw(simple_entity_values(spec))
        item = cls.plan().to_item(cls(**values))
        decoded = query._decode(item)
        if cls in members:
            assert isinstance(decoded, cls)
        else:
            assert decoded is None  # reported in Page.unknown / CollectionResult.unknown
