"""The job example of docs/jobs.md runs and does what the page says."""

from docs_src import jobs


def test_jobs_example() -> None:
    out = jobs.main()
    status = out["status"]
    assert out["audited"] == 200
    assert (status.state, status.done, status.total) == ("done", 4, 4)
    assert status.counts == {"scanned": 200, "written": 200}
