"""What a model costs to run: `capacity` (RCU/WCU estimates, `explain`), `lint` (hot partitions).

`capacity` is built from `report` (the estimate's lines), `sizes` (the unit rules, item and
index-entry sizes) and `billing` (the lines of one item write or read, or of a query page).
"""

from __future__ import annotations

from singletable.tooling.cost.capacity import estimate_capacity, explain
from singletable.tooling.cost.lint import LintWarning, lint_model, lint_report
from singletable.tooling.cost.report import CapacityEstimate, CapacityLine

__all__ = [
    "CapacityEstimate",
    "CapacityLine",
    "LintWarning",
    "estimate_capacity",
    "explain",
    "lint_model",
    "lint_report",
]
