"""What a model costs to run: `capacity` (RCU/WCU estimates, `explain`), `lint` (hot partitions).

`capacity` is built from `report` (the estimate's lines), `sizes` (the unit rules, item and
index-entry sizes) and `billing` (the lines of one item write or read, or of a query page).
"""
