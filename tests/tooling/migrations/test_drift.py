"""drift(): the comparison of a described table with the model, pure and generative."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as hs

import singletable as st
from singletable.model.definition import create_table_request, table_definition
from singletable.model.table import KeyType
from singletable.tooling.migrations.drift import Deployed, drift
from singletable.tooling.migrations.planner import ChangeClass


def described(table: st.Table) -> Deployed:
    """What DynamoDB's describe calls return for a table created from ``table``."""
    request = create_table_request(table)
    live: dict[str, Any] = {
        k: v
        for k, v in request.items()
        if k not in ("BillingMode", "StreamSpecification", "SSESpecification", "Tags")
    }
    live["BillingModeSummary"] = {"BillingMode": table.billing_mode}
    if table.billing_mode == "PAY_PER_REQUEST":
        live["ProvisionedThroughput"] = {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0}
    if table.stream:
        live["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": table.stream}
    if table.sse:
        live["SSEDescription"] = {"Status": "ENABLED", "SSEType": "KMS"}
    ttl = (
        {"TimeToLiveStatus": "ENABLED", "AttributeName": table.ttl_attribute}
        if table.ttl_attribute
        else {"TimeToLiveStatus": "DISABLED"}
    )
    status = "ENABLED" if table.point_in_time_recovery else "DISABLED"
    backups = {"PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": status}}
    return Deployed(live, ttl, backups)


#: The attributes native GSI parts are drawn from, with their declared types.
NATIVE_TYPES: dict[str, KeyType] = {"tenant": "S", "region": "S", "day": "N", "seq": "N"}


@hs.composite
def tables(draw: hs.DrawFn) -> st.Table:
    provisioned = draw(hs.booleans())
    gsis = [
        st.GSI(
            f"G{i}",
            pk=draw(hs.sampled_from(["GPK", "GPK2", "SK"])),
            sk=draw(hs.sampled_from([None, "GSK", "PK"])),
            projection=draw(
                hs.sampled_from(
                    [st.Projection.all(), st.Projection.keys_only(), st.Projection.include("a")]
                )
            ),
            throughput=draw(hs.sampled_from([None, st.Throughput(1, 2)])) if provisioned else None,
        )
        for i in draw(hs.sets(hs.integers(0, 3)))
    ]
    natives = []
    for i in draw(hs.sets(hs.integers(0, 1))):
        # Native GSIs: the parts' order and presence is what drift must tell apart.
        pk = draw(
            hs.lists(hs.sampled_from(sorted(NATIVE_TYPES)), min_size=1, max_size=2, unique=True)
        )
        rest = sorted(set(NATIVE_TYPES) - set(pk))
        sk = draw(hs.lists(hs.sampled_from(rest), max_size=2, unique=True))
        natives.append(
            st.NativeGSI(
                f"N{i}",
                pk=[st.KeyPart(a, NATIVE_TYPES[a]) for a in pk],
                sk=[st.KeyPart(a, NATIVE_TYPES[a]) for a in sk],
                throughput=st.Throughput(1, 1) if provisioned else None,
            )
        )
    lsis = [st.LSI("L", sk="LSK")] if draw(hs.booleans()) else []
    return st.Table(
        "t",
        sk=draw(hs.sampled_from(["SK", "SK2"])),
        indexes=[*gsis, *natives, *lsis],
        billing_mode="PROVISIONED" if provisioned else "PAY_PER_REQUEST",
        throughput=st.Throughput(draw(hs.integers(1, 3)), 1) if provisioned else None,
        ttl_attribute=draw(hs.sampled_from([None, "expires", "ttl"])),
        stream=draw(hs.sampled_from([None, "NEW_IMAGE", "KEYS_ONLY"])),
        point_in_time_recovery=draw(hs.booleans()),
        deletion_protection=draw(hs.booleans()),
        sse=draw(hs.booleans()),
    )


def _definition(table: st.Table) -> Any:
    d = table_definition(table)
    return (
        d.key,
        set(d.attributes),
        set(d.indexes),
        d.billing_mode,
        d.throughput,
        d.ttl_attribute,
        d.stream,
        d.point_in_time_recovery,
        d.deletion_protection,
        d.sse,
    )


@given(tables())
def test_a_table_deployed_as_modelled_has_no_drift(table: st.Table) -> None:
    assert drift(table, described(table)).changes == ()


@given(tables(), tables())
def test_drift_is_empty_exactly_when_the_definitions_agree(model: st.Table, live: st.Table) -> None:
    report = drift(model, described(live))
    assert (report.changes == ()) == (_definition(model) == _definition(live)), report.to_text()
    for change in report.changes:
        if change.subject.startswith("LSI") or change.subject == "table key schema":
            assert change.kind is ChangeClass.TABLE_MIGRATION
        elif change.subject.startswith("GSI") and "throughput" not in change.subject:
            assert change.kind is ChangeClass.ONLINE_INDEX
        else:
            assert change.kind is ChangeClass.SAFE


def test_the_quoted_cases() -> None:
    model = st.Table("t", indexes=[st.GSI("GSI1", pk="G")], ttl_attribute="expires")
    live = st.Table("t", billing_mode="PROVISIONED", throughput=st.Throughput(1, 1))
    subjects = [c.subject for c in drift(model, described(live)).changes]
    assert subjects == [
        "GSI GSI1 missing",
        "setting billing_mode",
        "setting throughput",
        "setting ttl_attribute",
    ]


def test_endpoints_without_backups_leave_pitr_uncompared() -> None:
    deployed = described(st.Table("t"))
    report = drift(
        st.Table("t", point_in_time_recovery=True), Deployed(deployed.table, deployed.ttl, None)
    )
    assert report.changes == ()
    assert "point-in-time recovery not compared" in report.to_text()


def native(pk: list[str], sk: list[str]) -> st.Table:
    parts = (
        [st.KeyPart(a, NATIVE_TYPES[a]) for a in pk],
        [st.KeyPart(a, NATIVE_TYPES[a]) for a in sk],
    )
    return st.Table("t", indexes=[st.NativeGSI("ByArea", pk=parts[0], sk=parts[1])])


def test_native_gsi_part_order_and_parts_are_compared() -> None:
    model = native(["tenant", "region"], ["day", "seq"])
    assert drift(model, described(model)).changes == ()
    for live in (
        native(["region", "tenant"], ["day", "seq"]),  # partition parts swapped
        native(["tenant", "region"], ["seq", "day"]),  # sort parts swapped
        native(["tenant", "region"], ["day"]),  # a sort part missing
        native(["tenant"], ["region", "day", "seq"]),  # a part moved to the sort key
    ):
        (change,) = drift(model, described(live)).changes
        assert change.subject == "GSI ByArea changed"
        assert change.kind is ChangeClass.ONLINE_INDEX
        have = create_table_request(live)["GlobalSecondaryIndexes"][0]["KeySchema"]
        shown = ", ".join(
            f"{k['AttributeName']} ({NATIVE_TYPES[k['AttributeName']]}, {k['KeyType']})"
            for k in have
        )
        assert f"deployed key {shown}," in change.reason
