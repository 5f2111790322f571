"""Tooling built on the model, the operations and the executors, in rooms; import a module.

* `migrations`: the stored-format `snapshot`, the `planner` (with `effects`, its
  stored-item analysis), the `runner` that carries a plan out on a live table, and the
  uniqueness-guard `backfill`.
* `bulk`: JSON Lines `load` and `export`.
* `cost`: `capacity` (RCU/WCU estimates, `explain`) and `lint` (hot partitions).
* `definitions`: `schema` (CloudFormation JSON/YAML and ``create_table`` JSON).
* `jobs`: what long-running work shares (`progress`).
* `browser`: the local collection browser (``singletable browse``).

Nothing is imported here, so that importing one room (the CLI's ``synth`` needs only
`definitions`) does not load the others; each room's ``__init__`` states its public names.
"""

__all__: list[str] = []
