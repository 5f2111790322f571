"""What a model costs to run: `capacity` (RCU/WCU estimates, `explain`), `lint` (hot partitions)."""
