"""Long-running work split into units that any number of workers share.

`units` (the contract a job kind is written against), `local` (units run in one process),
`leases` (the job record and unit leases in the job's own table, as operations), `engine`
(`start_job`, `run_job`, `cancel_job`), `status` (`job_status`), `workers` (worker
processes on one machine), `spark` (units as Spark tasks), `progress` (a bar on a
terminal, flushed lines otherwise). Each is imported on its own.
"""
