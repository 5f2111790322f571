"""Model changes over stored items: snapshot, planner (and its effects), runner, guard backfill.

`snapshot` records what a model stores; `planner` compares two snapshots through
`effects` (every stored attribute followed through both models) and classifies the
change; `runner` carries a plan out on a live table; `backfill` writes the uniqueness
guards of a constraint added to an entity with stored items. Import the module you need.
"""
