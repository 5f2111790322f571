"""The worked example of docs/native-keys.md: one model declared both ways, same answers."""

from docs_src import native_keys


def test_both_declarations_answer_the_same_query_and_native_items_are_smaller() -> None:
    r = native_keys.main()
    # Logins (every third event) since 12:00, newest first, whichever the index.
    assert r["native"] == r["synthetic"] == [12, 9, 6]
    # The native item holds no index attributes: the parts are its own fields.
    assert set(r["synthetic_item"]) - set(r["native_item"]) == {"GSI1PK", "GSI1SK"}
    assert r["native_item"]["at"] == {"N": "1782201600000"}
    assert r["native_put"] == (2.0, 102)  # 1 WCU for the item, 1 for its index entry
    assert r["synthetic_put"] == (2.0, 152)
    assert r["native_request"]["KeyConditionExpression"] == "#n0 = :v0 AND #n1 = :v1 AND #n2 >= :v2"
    assert r["synthetic_request"]["ExpressionAttributeValues"][":v0"] == {"S": "ACTION#acme#login"}
