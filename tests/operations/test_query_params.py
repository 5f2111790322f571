"""Query requests as values: exact key conditions, and every bad-bound refusal.

Pure: ``params()`` builds the exact boto3 request without sending it.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Annotated, Any

import pytest

import singletable as st

UTC = timezone.utc
T0 = datetime(2026, 6, 23, 8, 0, tzinfo=UTC)
T1 = datetime(2026, 6, 23, 9, 0, tzinfo=UTC)

app = st.Table(
    "params-tests",
    indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), st.LSI("LSI1", sk="LSI1SK")],
)


class Event(
    st.Entity,
    table=app,
    pk="P#{pid}",
    sk="EVT#{ts}#{seq}",
    indexes={
        "GSI1": st.IndexKeys(pk="KIND#{kind}", sk="{ts}"),
        "LSI1": st.IndexKeys(pk="P#{pid}", sk="KIND#{kind}#{ts}"),
    },
):
    pid: str
    ts: datetime
    seq: Annotated[int, st.KeyFormat(width=4)]
    kind: str = "login"


class Doc(st.Entity, table=app, pk="P#{pid}", sk="DOC#{name}#{n}"):
    pid: str
    name: str
    n: int


class Path(st.Entity, table=app, pk="T#{pid}", sk="{path}"):
    pid: str
    path: str


def key_condition(query: Any) -> tuple[str, dict[str, Any]]:
    request = query.params()
    values = {k: v["S"] for k, v in request["ExpressionAttributeValues"].items()}
    return request["KeyConditionExpression"], values


# -- exact key conditions --------------------------------------------------------------


def test_partition_only_reads_the_entity_prefix() -> None:
    assert key_condition(Event.query(pid="a")) == (
        "#n0 = :v0 AND begins_with (#n1, :v1)",
        {":v0": "P#a", ":v1": "EVT#"},
    )


def test_equality_on_leading_field_is_a_segment_prefix() -> None:
    assert (
        key_condition(Event.query(pid="a", ts=T0))[1][":v1"] == "EVT#2026-06-23T08:00:00.000000Z#"
    )


def test_equality_on_every_field_is_an_exact_key() -> None:
    assert key_condition(Event.query(pid="a", ts=T0, seq=7)) == (
        "#n0 = :v0 AND #n1 = :v1",
        {":v0": "P#a", ":v1": "EVT#2026-06-23T08:00:00.000000Z#0007"},
    )


@pytest.mark.parametrize(
    ("method", "arg", "low", "high"),
    [
        (
            "between",
            (T0, T1),
            "EVT#2026-06-23T08:00:00.000000Z",
            "EVT#2026-06-23T09:00:00.000000Z$",
        ),
        ("gt", T0, "EVT#2026-06-23T08:00:00.000000Z$", "EVT$"),
        ("ge", T0, "EVT#2026-06-23T08:00:00.000000Z", "EVT$"),
        ("le", T0, "EVT#", "EVT#2026-06-23T08:00:00.000000Z$"),
        ("lt", T0, "EVT#", "EVT#2026-06-23T08:00:00.000000Z"),
    ],
)
def test_range_bounds_end_on_segment_boundaries(method: str, arg: Any, low: str, high: str) -> None:
    query = getattr(Event.query(pid="a"), method)(ts=arg)
    assert key_condition(query) == (
        "#n0 = :v0 AND #n1 BETWEEN :v1 AND :v2",
        {":v0": "P#a", ":v1": low, ":v2": high},
    )


@pytest.mark.parametrize("method", ["between", "gt", "ge", "le", "lt", "begins_with"])
def test_a_range_added_to_a_rendered_query_is_the_range_of_a_new_one(method: str) -> None:
    # The key condition is kept per query value: a copy carries its base's along, and
    # must not send it once its own range is set.
    arg: Any = {"between": (T0, T1), "begins_with": "2026-06"}.get(method, T0)
    base = Event.query(pid="a")
    before = key_condition(base)
    derived = getattr(base, method)(ts=arg)
    assert key_condition(derived) == key_condition(getattr(Event.query(pid="a"), method)(ts=arg))
    assert key_condition(derived) != before
    assert key_condition(base) == before
    assert key_condition(derived.descending().limit(3)) == key_condition(derived)


def test_begins_with_partial_timestamp() -> None:
    assert key_condition(Event.query(pid="a").begins_with(ts="2026-06"))[1][":v1"] == "EVT#2026-06"


def test_begins_with_partial_str_is_escaped() -> None:
    assert (
        key_condition(Doc.query(pid="a").begins_with(name="a#b %"))[1][":v1"] == "DOC#a%23b%20%25"
    )


def test_template_without_literal_prefix_uses_plain_comparisons() -> None:
    assert key_condition(Path.query(pid="a").gt(path="root/")) == (
        "#n0 = :v0 AND #n1 > :v1",
        {":v0": "T#a", ":v1": "root/$"},
    )
    assert key_condition(Path.query(pid="a").lt(path="root/")) == (
        "#n0 = :v0 AND #n1 < :v1",
        {":v0": "T#a", ":v1": "root/"},
    )


def test_query_options_in_the_request() -> None:
    request = (
        Event.query(pid="a")
        .descending()
        .limit(5)
        .page_size(2)
        .consistent()
        .capacity("INDEXES")
        .filter(Event.f.kind == "login")
        .params()
    )
    assert request["ScanIndexForward"] is False
    assert request["Limit"] == 2
    assert request["ConsistentRead"] is True
    assert request["ReturnConsumedCapacity"] == "INDEXES"
    # `kind` defaults to "login": an item without the attribute reads as "login", so the
    # filter matches it too (issue 26, item 1).
    assert request["FilterExpression"] == "attribute_not_exists (#n2) OR #n2 = :v2"
    assert request["ExpressionAttributeNames"]["#n2"] == "kind"


def test_limit_without_filter_bounds_the_read() -> None:
    assert Event.query(pid="a").limit(3).params()["Limit"] == 3
    # With a filter an item read may not be a result: only page_size bounds the read.
    assert "Limit" not in Event.query(pid="a").limit(3).filter(Event.f.kind == "x").params()


def test_consistent_read_on_lsi_is_allowed() -> None:
    assert Event.query(pid="a", index="LSI1").consistent().params()["ConsistentRead"] is True


def test_projection_keeps_key_attributes_for_cursors() -> None:
    request = Event.query(pid="a").project("kind").params()
    names = request["ExpressionAttributeNames"]
    projected = {names[p.strip()] for p in request["ProjectionExpression"].split(",")}
    assert projected == {"kind", "PK", "SK", "_et"}


# -- refusals ----------------------------------------------------------------------------


def test_between_low_above_high_is_refused() -> None:
    with pytest.raises(
        st.QueryError,
        match=r"entity Event: between\(ts=\.\.\.\): the low bound .*2026, 6, 23, 9.* is "
        r"above the high bound",
    ):
        Event.query(pid="a").between(ts=(T1, T0))


def test_between_needs_a_pair() -> None:
    with pytest.raises(st.QueryError, match=r"between\(ts=\.\.\.\) takes a \(low, high\) tuple"):
        Event.query(pid="a").between(ts=T0)  # type: ignore[arg-type]


def test_range_on_a_field_that_is_not_the_next_one_is_refused() -> None:
    with pytest.raises(
        st.QueryError,
        match=r"entity Event: gt\(\) must be on 'ts', the next field of the sort key template "
        r"'EVT#\{ts\}#\{seq\}' after the ones given \(none\); got 'seq'",
    ):
        Event.query(pid="a").gt(seq=1)  # type: ignore[singletable]  # the run-time refusal is the test
    with pytest.raises(st.QueryError, match=r"lt\(\) must be on 'seq'.*\(ts\); got 'ts'"):
        Event.query(pid="a", ts=T0).lt(ts=T1)  # type: ignore[singletable]  # the run-time refusal is the test


def test_range_on_a_non_key_field_is_refused() -> None:
    with pytest.raises(st.QueryError, match=r"ge\(\) must be on 'ts'.*got 'kind'"):
        Event.query(pid="a").ge(kind="x")  # type: ignore[singletable]  # the run-time refusal is the test


def test_two_range_conditions_are_refused() -> None:
    with pytest.raises(
        st.QueryError,
        match=r"entity Event: only one sort key condition per query \(already gt\); use filter\(\)",
    ):
        Event.query(pid="a").gt(ts=T0).lt(ts=T1)


def test_range_when_every_sort_field_is_fixed_is_refused() -> None:
    with pytest.raises(st.QueryError, match=r"every sort key field is already fixed; le\(\)"):
        Event.query(pid="a", ts=T0, seq=1).le(seq=2)  # type: ignore[singletable]  # the run-time refusal is the test


def test_range_condition_takes_one_field() -> None:
    with pytest.raises(
        st.QueryError, match=r"gt\(\) takes exactly one field=value, got \['seq', 'ts'\]"
    ):
        Event.query(pid="a").gt(ts=T0, seq=1)  # type: ignore[singletable]  # the run-time refusal is the test


@pytest.mark.parametrize("partial", ["2026-13", "2026/06", "26-06", "2026-06-23T08:00:00.000000Z+"])
def test_partial_timestamp_the_codec_refuses(partial: str) -> None:
    with pytest.raises(
        st.KeyEncodeError,
        match=f"sk template 'EVT#{{ts}}#{{seq}}': field 'ts': {re.escape(repr(partial))} is not a "
        "prefix of the datetime key form",
    ):
        Event.query(pid="a").begins_with(ts=partial)


def test_begins_with_on_an_int_is_refused() -> None:
    with pytest.raises(
        st.KeyEncodeError, match="field 'n': int key fields do not support partial values"
    ):
        Doc.query(pid="a", name="x").begins_with(n="1")


def test_begins_with_needs_a_str() -> None:
    with pytest.raises(st.KeyEncodeError, match=r"begins_with\(name=\.\.\.\) takes a str, got 5"):
        Doc.query(pid="a").begins_with(name=5)  # type: ignore[arg-type]


def test_bad_bound_value_is_refused_naming_the_field() -> None:
    with pytest.raises(st.KeyEncodeError, match=r"field 'ts': datetime key value .* is naive"):
        Event.query(pid="a").gt(ts=datetime(2026, 6, 23))


def test_missing_partition_field_is_refused() -> None:
    with pytest.raises(
        st.QueryError,
        match=r"entity Event: a query on the table needs the partition key field 'pid' "
        r"\(template 'P#\{pid\}'\)",
    ):
        Event.query()  # type: ignore[call-arg]  # the run-time refusal is the test
    with pytest.raises(
        st.QueryError, match=r"query on index 'GSI1' needs the partition key field 'kind'"
    ):
        Event.query(index="GSI1")  # type: ignore[call-arg]  # the run-time refusal is the test


def test_unknown_field_is_refused() -> None:
    with pytest.raises(
        st.QueryError,
        match=r"entity Event: 'colour' is not a key field of the table "
        r"\(key fields: .*\); use filter\(\) for other fields",
    ):
        Event.query(pid="a", colour="red")  # type: ignore[singletable]  # the run-time refusal is the test


def test_sort_fields_out_of_template_order_are_refused() -> None:
    with pytest.raises(
        st.QueryError,
        match=r"sort key fields must be given in template order \('EVT#\{ts\}#\{seq\}'\); "
        r"'seq' was given without 'ts'",
    ):
        Event.query(pid="a", seq=1)  # type: ignore[singletable]  # the run-time refusal is the test


def test_consistent_read_on_a_gsi_is_refused() -> None:
    with pytest.raises(st.QueryError, match="GSI 'GSI1' does not support consistent reads"):
        Event.query(index="GSI1", kind="login").consistent().params()


@pytest.mark.parametrize("method", ["limit", "page_size"])
def test_limits_below_one_are_refused(method: str) -> None:
    with pytest.raises(st.QueryError, match=f"{method} must be at least 1, got 0"):
        getattr(Event.query(pid="a"), method)(0)


def test_page_without_limit_is_refused() -> None:
    with pytest.raises(
        st.QueryError, match=r"page\(\) needs limit\(n\): the number of results per page"
    ):
        Event.query(pid="a").page(None)  # type: ignore[call-overload]


def test_projection_of_unknown_field_is_refused() -> None:
    with pytest.raises(
        st.ExpressionError, match="entity Event: cannot project unknown field 'nope'"
    ):
        Event.query(pid="a").project("nope")  # type: ignore[singletable]  # the run-time refusal is the test


def test_scan_segment_out_of_range_is_refused() -> None:
    with pytest.raises(st.QueryError, match=r"segment must be in \[0, total\).*got 3/3"):
        Event.scan().segment(3, 3)


def test_collection_of_mismatched_partitions_is_refused() -> None:
    with pytest.raises(
        st.QueryError,
        match=r"collection 'bad': entity Path has partition key template 'T#\{pid\}', "
        r"entity Event has 'P#\{pid\}'",
    ):
        st.Collection("bad", Event, Path)


def test_collection_query_unknown_field_is_refused() -> None:
    with pytest.raises(
        st.QueryError, match=r"collection 'docs': 'name' is not a partition key field \(pid\)"
    ):
        st.Collection("docs", Event, Doc).query(pid="a", name="x")


def test_collection_begins_with_needs_a_shared_sort_template() -> None:
    with pytest.raises(
        st.QueryError,
        match=r"collection 'docs': begins_with\(name=\.\.\.\) needs every entity to share one "
        "sort key template",
    ):
        st.Collection("docs", Event, Doc).query(pid="a").begins_with(name="x")


def _tree() -> tuple[type[st.Entity], st.Collection]:
    table = st.Table("review")

    class Node(st.Entity, table=table, pk="D#{account}", sk="N#{kind}#{name}"):
        account: str
        kind: str
        name: str

    class Leaf(st.Entity, table=table, pk="D#{account}", sk="N#{kind}#{name}"):
        account: str
        kind: str
        name: str
        size: int = 0

    return Node, st.Collection("tree", Node, Leaf)


def test_collection_sort_key_fields_become_the_key_condition() -> None:
    _, tree = _tree()
    eq = tree.query(account="a", kind="k", name="x y").params()
    assert eq["KeyConditionExpression"] == "#n0 = :v0 AND #n1 = :v1"
    assert eq["ExpressionAttributeValues"][":v1"] == {"S": "N#k#x%20y"}
    prefix = tree.query(account="a", kind="k#1").params()
    assert prefix["KeyConditionExpression"] == "#n0 = :v0 AND begins_with (#n1, :v1)"
    assert prefix["ExpressionAttributeValues"][":v1"] == {"S": "N#k%231#"}


def test_collection_sort_key_fields_out_of_order_are_refused() -> None:
    _, tree = _tree()
    with pytest.raises(st.QueryError, match=r"'name' was given without 'kind'"):
        tree.query(account="a", name="x")


def _keys_only_models() -> tuple[type[st.Entity], type[st.Entity]]:
    table = st.Table(
        "review-keys-only",
        indexes=[st.GSI("ByOwner", pk="GSI1PK", sk="GSI1SK", projection=st.Projection.keys_only())],
    )

    class Doc(
        st.Entity,
        table=table,
        pk="DOC#{doc_id}",
        sk="META",
        indexes={"ByOwner": st.IndexKeys(pk="OWNER#{owner}", sk="{doc_id}")},
    ):
        doc_id: str
        owner: str

    class Sheet(
        st.Entity,
        table=table,
        pk="SHEET#{doc_id}",
        sk="META",
        indexes={"ByOwner": st.IndexKeys(pk="OWNER#{owner}", sk="{doc_id}")},
    ):
        doc_id: str
        owner: str

    return Doc, Sheet


def test_keys_only_index_shared_by_two_entities_is_refused_not_silently_empty() -> None:
    # Bug: the type filter on "_et" was sent to a KEYS_ONLY index, whose items have no
    # "_et": DynamoDB filtered out every item and the query returned [] without a word.
    Doc, _ = _keys_only_models()
    query = Doc.query(index="ByOwner", owner="ann").project("doc_id")
    with pytest.raises(st.QueryError, match=r"'ByOwner' projects KEYS_ONLY .* '_et'"):
        query.params()
    with pytest.raises(st.QueryError, match=r"'ByOwner' projects KEYS_ONLY"):
        next(query._count_stream())  # what count() sends first


def test_entity_scan_of_a_keys_only_index_is_refused_not_silently_empty() -> None:
    Doc, _ = _keys_only_models()
    with pytest.raises(st.QueryError, match=r"'ByOwner' projects KEYS_ONLY.*'_et'"):
        Doc.scan(index="ByOwner").params()
