"""Tooling built on the model and the operations; import the module you need.

* `capacity`: RCU/WCU estimates from item sizes (`explain`, `estimate_capacity`).
* `schema`: CloudFormation (JSON/YAML) for the tables of a model.
* `snapshot`: the deterministic model snapshot committed next to the code.
* `planner`: what a model change does to stored items, classified (`plan_changes`).
* `effects`: the stored-item analysis under the planner (old vs new model, per attribute).
* `lint`: hot-partition warnings.
* `migrate`: the runner that carries a plan out on a live table.
* `progress`: the progress display of long-running work (a bar, or flushed lines).

The modules are not imported here, so that importing one (the CLI's ``synth`` needs only
`schema`) does not load the others.
"""
