"""Model changes over stored items: snapshot, planner (and its effects), runner, guard backfill.

`snapshot` records what a model stores; `planner` compares two snapshots through
`effects` (every stored attribute followed through both models) and classifies the
change; `runner` carries a plan out on a live table; `drift` checks a deployed table
against the model (`check_deployed`); `backfill` writes the uniqueness guards of a
constraint added to an entity with stored items; `unique_check` checks the guards against
the items (and repairs them) after writes that bypassed singletable.
"""

from __future__ import annotations

from singletable.tooling.migrations.backfill import UniqueBackfillReport
from singletable.tooling.migrations.drift import DriftReport, check_deployed
from singletable.tooling.migrations.jobrun import MigrationJob
from singletable.tooling.migrations.planner import Change, ChangeClass, MigrationPlan, plan_changes
from singletable.tooling.migrations.runner import (
    MigrationReport,
    RewriteStats,
    ScanTotals,
    Transform,
    Transforms,
    migrate,
    migrate_async,
)
from singletable.tooling.migrations.snapshot import (
    load_snapshot,
    read_snapshot,
    snapshot,
    snapshot_json,
)
from singletable.tooling.migrations.unique_check import (
    GuardFinding,
    UniqueCheckReport,
    check_unique,
)
from singletable.tooling.migrations.work import MIGRATE_KIND

__all__ = [
    "Change",
    "ChangeClass",
    "DriftReport",
    "GuardFinding",
    "MIGRATE_KIND",
    "MigrationJob",
    "MigrationPlan",
    "MigrationReport",
    "RewriteStats",
    "ScanTotals",
    "Transform",
    "Transforms",
    "UniqueBackfillReport",
    "UniqueCheckReport",
    "check_deployed",
    "check_unique",
    "load_snapshot",
    "migrate",
    "migrate_async",
    "plan_changes",
    "read_snapshot",
    "snapshot",
    "snapshot_json",
]
