"""The capacity figures of docs/capacity.md are what the estimator computes."""

from docs_src import capacity


def test_ten_2kb_items() -> None:
    r = capacity.main()
    assert r["query"] == 2.5  # 20 KB = 5 blocks of 4 KB, 0.5 RCU each, rounded once
    assert r["query_consistent"] == 5.0
    assert r["gets"] == 5.0  # each GetItem rounds up to one block
    assert r["gets_consistent"] == 10.0
    assert r["explain"]["capacity"]["rcu"] == 2.5
    assert r["explain"]["capacity"]["wcu"] == 0.0
    assert r["explain"]["request"]["KeyConditionExpression"].startswith("#n0 = :v0 AND")


def test_writes_round_up_per_kilobyte() -> None:
    r = capacity.main()
    assert (r["put_1024"], r["put_1025"]) == (1.0, 2.0)
