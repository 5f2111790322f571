"""Hot-partition lint: partition-key templates that can only take few values.

DynamoDB serves at most about 3,000 RCU and 1,000 WCU per second from one partition key
(`PARTITION_RCU_LIMIT`, `PARTITION_WCU_LIMIT`). A partition key whose template is built
only from bools, enums, ``Literal`` values, small fixed-width ints or constants has a
finite number of values, so the whole table's (or index's) traffic shares that many
partitions; a ``date`` field puts all of one day's traffic on one key. The lint reads the
compiled plans (key templates and their codecs), never the classes.

Per-key load assumes a uniform spread over the values, the best case: real traffic is
skewed, so the busiest key carries more. 50 values at 10,000 writes/s is 200 WCU per key
(for items up to 1 KB; a larger item costs one WCU per started KB).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from singletable.keys.templates import FieldSegment
from singletable.model.plan import entity_plans
from singletable.model.table import GSI, Table

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan, KeyPlan

__all__ = [
    "FEW_VALUES",
    "PARTITION_RCU_LIMIT",
    "PARTITION_WCU_LIMIT",
    "LintWarning",
    "lint_model",
    "lint_report",
    "native_index_notes",
]

#: DynamoDB's per-partition throughput: read and write capacity units per second.
PARTITION_RCU_LIMIT = 3000
PARTITION_WCU_LIMIT = 1000
#: A finite partition-key cardinality at or below this is reported.
FEW_VALUES = 1000


@dataclass(frozen=True)
class LintWarning:
    """One partition-key template that concentrates load on few keys.

    Attributes:
        entity: The entity name.
        table: The table name.
        index: The GSI name, or ``None`` for the table's own partition key.
        template: The partition-key template, e.g. ``"STATUS#{status}"``.
        values: How many distinct keys the template can produce at one time (1 for a
            constant or a date bucket).
        reason: Why, field by field, e.g. ``"status: enum Status (3 values)"``.
        writes_per_second: The request rate the load figures assume, if one was given.
        wcu_per_key: ``writes_per_second / values`` (uniform spread), or ``None``.
        rcu_per_key: ``reads_per_second / values`` (uniform spread), or ``None``.
    """

    entity: str
    table: str
    index: str | None
    template: str
    values: int
    reason: str
    writes_per_second: float | None = None
    reads_per_second: float | None = None
    wcu_per_key: float | None = None
    rcu_per_key: float | None = None

    @property
    def over_limit(self) -> bool:
        """Whether the given rate exceeds one partition's throughput on each key."""
        return (self.wcu_per_key or 0.0) > PARTITION_WCU_LIMIT or (
            self.rcu_per_key or 0.0
        ) > PARTITION_RCU_LIMIT

    @property
    def where(self) -> str:
        """``"entity Order, GSI ByStatus"`` or ``"entity Order, table app"``."""
        place = f"GSI {self.index}" if self.index else f"table {self.table}"
        return f"entity {self.entity}, {place}"

    def message(self) -> str:
        """A one-paragraph explanation with DynamoDB's limits and, if known, the load."""
        keys = "1 key" if self.values == 1 else f"at most {self.values:,} keys"
        text = (
            f"{self.where}: partition key {self.template!r} can take {keys} "
            f"({self.reason}); each key is one partition, which serves at most "
            f"{PARTITION_RCU_LIMIT:,} RCU and {PARTITION_WCU_LIMIT:,} WCU per second, so "
            f"this key caps the traffic at {self.values * PARTITION_WCU_LIMIT:,} WCU/s and "
            f"{self.values * PARTITION_RCU_LIMIT:,} RCU/s in all"
        )
        loads = []
        if self.wcu_per_key is not None:
            loads.append(
                f"{self.writes_per_second:,g} writes/s -> about {self.wcu_per_key:,.0f} WCU "
                f"per key (limit {PARTITION_WCU_LIMIT:,})"
            )
        if self.rcu_per_key is not None:
            loads.append(
                f"{self.reads_per_second:,g} strongly consistent reads/s -> about "
                f"{self.rcu_per_key:,.0f} RCU per key (limit {PARTITION_RCU_LIMIT:,})"
            )
        if loads:
            text += "; at " + " and ".join(loads) + " with an even spread"
            if self.over_limit:
                text += ": OVER the per-partition limit, expect throttling"
        return text + (
            ". Add a high-cardinality field (an id) to the template, or shard the key "
            "(append a suffix 0..N-1 and read all N)."
        )


def _field_cardinality(segment: FieldSegment) -> tuple[int | None, str]:
    """(distinct values at one time, description); ``None`` when unbounded."""
    params: dict[str, Any] = segment.codec.params()
    kind = params.get("kind")
    name = segment.name
    if kind == "bool":
        return 2, f"{name}: bool (2 values)"
    if kind == "enum":
        enum_cls = getattr(segment.codec, "enum_cls", None)
        label = f"enum {enum_cls.__name__}" if enum_cls is not None else "enum"
        count = len(params.get("values", ()))
        return count, f"{name}: {label} ({count} values)"
    if kind == "literal":
        count = len(params.get("values", ()))
        return count, f"{name}: Literal ({count} values)"
    if kind == "fixed_int":
        count = 10 ** int(params.get("width", 0))
        return count, f"{name}: int of width {params.get('width')} ({count:,} values)"
    if kind == "date":
        return 1, f"{name}: date (all traffic of one day shares one key)"
    return None, f"{name}: {kind}"


def _check(
    plan: EntityPlan,
    key_plan: KeyPlan,
    *,
    few: int,
    writes_per_second: float | None,
    reads_per_second: float | None,
) -> LintWarning | None:
    template = key_plan.pk
    count = 1
    reasons: list[str] = []
    for segment in template.segments:
        if not isinstance(segment, FieldSegment):
            continue
        values, reason = _field_cardinality(segment)
        if values is None:
            return None  # one unbounded field spreads the load
        count *= values
        reasons.append(reason)
    if count > few:
        return None
    reason = "; ".join(reasons) if reasons else "a constant: no fields"
    wcu = None if writes_per_second is None else writes_per_second / count
    rcu = None if reads_per_second is None else reads_per_second / count
    return LintWarning(
        entity=plan.name,
        table=plan.table.name,
        index=key_plan.index,
        template=template.source,
        values=count,
        reason=reason,
        writes_per_second=writes_per_second,
        reads_per_second=reads_per_second,
        wcu_per_key=wcu,
        rcu_per_key=rcu,
    )


def lint_model(
    tables: Iterable[Table],
    *,
    writes_per_second: float | None = None,
    reads_per_second: float | None = None,
    few: int = FEW_VALUES,
) -> list[LintWarning]:
    """Find partition-key templates (table and GSI) that can only take few values.

    Args:
        tables: The tables whose registered entities are checked.
        writes_per_second: A write rate to turn into WCU per key (one WCU per write).
        reads_per_second: A strongly consistent read rate (one RCU per read of <= 4 KB).
        few: Report templates with at most this many values (default `FEW_VALUES`).

    Returns:
        One warning per entity and partition key, in table, entity and index order.
        LSIs share the table's partition key and are not reported separately.
    """
    warnings: list[LintWarning] = []
    for table in tables:
        for plan in entity_plans(table):
            key_plans = [plan.primary] + [
                kp for name, kp in plan.indexes.items() if isinstance(table.indexes[name], GSI)
            ]
            for key_plan in key_plans:
                warning = _check(
                    plan,
                    key_plan,
                    few=few,
                    writes_per_second=writes_per_second,
                    reads_per_second=reads_per_second,
                )
                if warning is not None:
                    warnings.append(warning)
    return warnings


def lint_report(
    tables: Iterable[Table],
    *,
    writes_per_second: float | None = None,
    reads_per_second: float | None = None,
) -> tuple[str, int]:
    """The lint as text for the CLI, and its exit code.

    Returns:
        ``(text, code)``: code 0 when nothing is reported, 1 when some partition keys
        take few values, 2 when the given rate exceeds a partition's limit on a key.
    """
    tables = list(tables)
    warnings = lint_model(
        tables, writes_per_second=writes_per_second, reads_per_second=reads_per_second
    )
    names = ", ".join(t.name for t in tables) or "no tables"
    notes = "".join(f"note: {line}\n" for line in native_index_notes(tables))
    if not warnings:
        return f"hot-partition lint: {names}: no low-cardinality partition keys\n{notes}", 0
    lines = [f"hot-partition lint: {names}: {len(warnings)} warning(s)"]
    for warning in warnings:
        level = "error" if warning.over_limit else "warning"
        lines.append(f"{level}: {warning.message()}")
    code = 2 if any(w.over_limit for w in warnings) else 1
    return "\n".join(lines) + "\n" + notes, code


def native_index_notes(tables: Iterable[Table]) -> list[str]:
    """Which entities each native GSI holds, and which of them can leave it and when.

    An entity is in a native GSI while every part's field is set: an Optional part left
    (or set, or removed to) ``None`` takes the item out; an entity that stores only some
    of the parts is never in it.
    """
    lines: list[str] = []
    for table in tables:
        plans = entity_plans(table)
        for name, index in table.native_indexes.items():
            parts = ", ".join(p.attribute for p in index.parts)
            feeders = [p for p in plans if name in p.native_indexes]
            if not feeders:
                lines.append(
                    f"{table.name}: native GSI {name} ({parts}): no entity stores every part"
                )
            for plan in feeders:
                optional = sorted(plan.native_indexes[name].optional_fields)
                when = (
                    f"leaves it while {' or '.join(optional)} is None"
                    if optional
                    else "always in it"
                )
                lines.append(f"{table.name}: native GSI {name} ({parts}): {plan.name} {when}")
    return lines
