"""Models whose generated artefacts are compared with the files in tests/expected/."""

from __future__ import annotations

import singletable as st


def full_table(name: str = "orders-prod") -> st.Table:
    """A table that uses every definition feature: provisioned, GSI, LSI, TTL, stream, ..."""
    return st.Table(
        name,
        billing_mode="PROVISIONED",
        throughput=st.Throughput(5, 5),
        indexes=[
            st.GSI(
                "ByCustomer",
                pk="GSI1PK",
                sk="GSI1SK",
                projection=st.Projection.include("total", "status"),
            ),
            st.GSI("ByStatus", pk="GSI2PK", throughput=st.Throughput(2, 1)),
            st.LSI("ByDate", sk="LSI1SK", projection=st.Projection.keys_only()),
            # Native (multi-attribute) keys: typed here, since no entity is defined.
            st.NativeGSI(
                "ByRegion",
                pk=[st.KeyPart("region", "S"), st.KeyPart("tier", "N")],
                sk=[st.KeyPart("placed", "S"), st.KeyPart("seq", "N"), st.KeyPart("tag", "B")],
                projection=st.Projection.keys_only(),
                throughput=st.Throughput(1, 1),
            ),
        ],
        ttl_attribute="expires",
        stream="NEW_AND_OLD_IMAGES",
        point_in_time_recovery=True,
        deletion_protection=True,
        sse=True,
        tags={"team": "core", "env": "prod"},
    )
