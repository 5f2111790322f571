"""The lean transport's endpoint memo against botocore's own resolution, field by field.

Generated client configurations (regions of every partition, the ``local`` region,
FIPS, dual-stack, custom endpoint URLs, plain HTTP, account ids and every
``account_id_endpoint_mode``, unsigned clients) and generated requests of every
`LEAN_ACTIONS` operation (table names and ARNs, odd values botocore refuses) go through
`EndpointMemo.resolve` twice (the miss and the remembered answer) and through the
client's ``_resolve_endpoint_ruleset``: same URL, headers, properties and request
context, or the same exception. The memo's key is compared with the parameters
botocore's resolver computes; refreshed credentials that change the account id, hooks
on ``before-endpoint-resolution``, a botocore context and debug logging are checked to
give botocore's answers and side effects.
"""

from __future__ import annotations

import datetime
import functools
import logging
from collections.abc import Callable
from typing import Any

import boto3
import botocore.session
import jmespath
import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.context import get_context, start_as_current_context
from botocore.credentials import RefreshableCredentials
from hypothesis import given, settings
from hypothesis import strategies as st

from singletable.io import botocore_internals as internals
from singletable.io import lean_endpoint
from singletable.io.lean import LEAN_ACTIONS
from singletable.io.lean_endpoint import EndpointMemo, context_path_search

REGIONS = [
    "us-east-1",
    "eu-west-1",
    "us-gov-west-1",
    "cn-north-1",
    "us-iso-east-1",
    "eusc-de-east-1",
    "local",
]
ENDPOINTS = [None, "https://ddb.example.com", "http://127.0.0.1:8000", "https://h:8443/p"]
ACCOUNTS = [None, "123456789012", "111122223333"]
MODES = [None, "preferred", "disabled", "required"]
TABLES = [
    "t",
    "Table-1.x_y",
    "arn:aws:dynamodb:us-east-1:123456789012:table/t",
    "arn:aws:dynamodb:eu-west-1:111122223333:table/other",
    "arn:aws-cn:dynamodb:cn-north-1:123456789012:table/t",
    "arn:aws:s3:::bucket",
    "arn:aws:dynamodb:us-east-1::table/t",
]


@functools.cache
def make_client(
    region: str,
    endpoint_url: str | None,
    fips: bool | None,
    dualstack: bool | None,
    account_id: str | None,
    mode: str | None,
    use_ssl: bool,
    unsigned: bool,
) -> Any:
    config: dict[str, Any] = {"parameter_validation": False}
    if fips is not None:
        config["use_fips_endpoint"] = fips
    if dualstack is not None:
        config["use_dualstack_endpoint"] = dualstack
    if mode is not None:
        config["account_id_endpoint_mode"] = mode
    if unsigned:
        config["signature_version"] = UNSIGNED
    session = boto3.Session(
        aws_access_key_id="k",
        aws_secret_access_key="s",
        aws_account_id=account_id,
        region_name=region,
    )
    return session.client(
        "dynamodb", endpoint_url=endpoint_url, use_ssl=use_ssl, config=Config(**config)
    )


clients = st.builds(
    make_client,
    st.sampled_from(REGIONS),
    st.sampled_from(ENDPOINTS),
    st.sampled_from([None, True, False]),
    st.sampled_from([None, True, False]),
    st.sampled_from(ACCOUNTS),
    st.sampled_from(MODES),
    st.booleans(),
    st.booleans(),
)

tables = st.sampled_from(TABLES) | st.text(max_size=6)
MEMBERS = ["RequestItems", "TransactItems", "Get", "Put", "Update", "Delete", "ConditionCheck"]
MEMBERS += ["TableName", "t"]
# What botocore refuses or jmespath reads oddly: the memo must leave it to botocore.
odd = st.sampled_from([None, 3, True, b"t", ["t"], {"t": 1}, ("t",)])


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    action = draw(st.sampled_from(sorted(LEAN_ACTIONS)))
    name = LEAN_ACTIONS[action]
    weird = draw(st.integers(0, 5)) == 0
    if name in ("BatchGetItem", "BatchWriteItem"):
        if weird:
            return name, {"RequestItems": draw(odd)}
        names = draw(st.lists(tables, max_size=4))
        return name, {"RequestItems": {n: [] for n in names}}
    if name in ("TransactGetItems", "TransactWriteItems"):
        kinds = (
            ["Get"] if name == "TransactGetItems" else ["Put", "Update", "Delete", "ConditionCheck"]
        )
        items: list[Any] = []
        for _ in range(draw(st.integers(0, 4))):
            item = {
                kind: {"TableName": draw(tables)} for kind in draw(st.sets(st.sampled_from(kinds)))
            }
            items.append(
                item if not weird else draw(st.sampled_from([item, None, "x", {"Put": 1}]))
            )
        return name, {
            "TransactItems": items if not weird else draw(st.sampled_from([items, None, {}]))
        }
    params: dict[str, Any] = {"Key": {}}
    if weird:
        params["TableName"] = draw(odd)
    elif draw(st.integers(0, 9)):
        params["TableName"] = draw(tables)
    return name, params


def outcome(call: Callable[[], Any]) -> Any:
    """The result, or (exception type, message)."""
    try:
        return call()
    except Exception as exc:  # compared: the same exception, or none
        return type(exc), str(exc)


def resolved(resolve: Callable[..., Any], model: Any, params: Any) -> Any:
    """``resolve``'s (result, request context), or (exception type, message)."""
    context: dict[str, Any] = {}
    return outcome(lambda: (resolve(model, params, context), context))


def provider_params(client: Any, model: Any, params: dict[str, Any]) -> tuple[Any, ...]:
    """What botocore's resolver computes, in the ruleset's order (lists as tuples)."""
    inputs = internals.endpoint_rule_inputs(client)
    assert inputs is not None
    computed = client._ruleset_resolver._get_provider_params(model, params, {})
    values = (computed.get(name) for name, _ in inputs.parameters)
    return tuple(tuple(v) if isinstance(v, list) else v for v in values)


@settings(max_examples=150, deadline=None)
@given(client=clients, request=requests())
def test_memo_resolves_as_botocore(client: Any, request: tuple[str, dict[str, Any]]) -> None:
    name, params = request
    model = client.meta.service_model.operation_model(name)
    memo = EndpointMemo(client)
    expected = resolved(client._resolve_endpoint_ruleset, model, params)
    assert resolved(memo.resolve, model, params) == expected  # the miss
    assert resolved(memo.resolve, model, params) == expected  # remembered
    try:
        key = memo.key(model, params)
    except Exception:  # botocore raises the same (compared above)
        key = None
    if key is not None:
        assert key == provider_params(client, model, params)


@settings(max_examples=40, deadline=None)
@given(client=clients, batch=st.lists(requests(), min_size=1, max_size=12))
def test_one_memo_over_many_requests(client: Any, batch: list[tuple[str, dict[str, Any]]]) -> None:
    # Answers remembered for one request must not leak into another's.
    memo = EndpointMemo(client)
    for name, params in batch + batch:
        model = client.meta.service_model.operation_model(name)
        expected = resolved(client._resolve_endpoint_ruleset, model, params)
        assert resolved(memo.resolve, model, params) == expected


def context_paths() -> set[str]:
    """The operation context parameters' paths of the lean operations."""
    model = make_client("us-east-1", None, None, None, None, None, True, False).meta.service_model
    return {
        parameter["path"]
        for name in LEAN_ACTIONS.values()
        # (an empty list when the operation has none)
        for parameter in (model.operation_model(name).operation_context_parameters or {}).values()
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(TABLES),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(MEMBERS), inner, max_size=4)
    ),
    max_leaves=12,
)
# Expressions of the node kinds context_path_search compiles (fields, subexpressions,
# projections, multi-select lists, flattens), over the same member names.
expressions = st.recursive(
    st.sampled_from(MEMBERS),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(MEMBERS)).map(".".join),
        st.tuples(inner, inner).map(lambda pair: f"{pair[0]}[*].{pair[1]}"),
        inner.map(lambda e: f"{e}[*]"),
        inner.map(lambda e: f"{e}[]"),
        st.lists(inner, min_size=1, max_size=3).map(lambda es: f"[{', '.join(es)}]"),
        st.tuples(inner, st.lists(inner, min_size=1, max_size=3)).map(
            lambda pair: f"{pair[0]}.[{', '.join(pair[1])}]"
        ),
    ),
    max_leaves=6,
)


def parses(expression: str) -> bool:
    try:
        jmespath.compile(expression)
    except jmespath.exceptions.ParseError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(expression=expressions.filter(parses), data=st.data())
def test_compiled_expressions_are_jmespaths(expression: str, data: st.DataObject) -> None:
    search = context_path_search(expression)
    for params in data.draw(st.lists(json_values, min_size=1, max_size=3)):
        expected = outcome(functools.partial(jmespath.search, expression, params))
        assert outcome(functools.partial(search, params)) == expected


@settings(max_examples=300, deadline=None)
@given(
    path=st.sampled_from(sorted(context_paths())),
    params=json_values.filter(lambda v: isinstance(v, dict)),
)
def test_context_path_search_is_jmespaths(path: str, params: dict[str, Any]) -> None:
    assert outcome(lambda: context_path_search(path)(params)) == outcome(
        lambda: jmespath.search(path, params)
    )


def test_the_lean_operations_context_paths_are_covered() -> None:
    # The paths the test above draws from: keys() for the batches, projections for the
    # transactions (a new kind of path in a botocore upgrade shows here).
    paths = context_paths()
    assert "keys(RequestItems)" in paths
    assert len(paths) == 3


# -- what the memo does not key on ------------------------------------------------------------


class Accounts:
    """Refreshable credentials whose every read refreshes, from ``self.account``."""

    def __init__(self, account: str) -> None:
        self.account = account
        self.refreshes = 0
        #: Accounts the next refreshes take, before ``account``.
        self.queued: list[str] = []

    def refresh(self) -> dict[str, Any]:
        self.refreshes += 1
        if self.queued:
            self.account = self.queued.pop(0)
        soon = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=1)
        return {
            "access_key": "k",
            "secret_key": "s",
            "token": "t",
            "expiry_time": soon.isoformat(),
            "account_id": self.account,
        }


def refreshing_client(accounts: Accounts) -> Any:
    core = botocore.session.Session()
    credentials = RefreshableCredentials.create_from_metadata(
        accounts.refresh(), accounts.refresh, "test"
    )
    core._credentials = credentials  # type: ignore[attr-defined]
    return boto3.Session(botocore_session=core, region_name="us-east-1").client("dynamodb")


def test_refreshed_credentials_with_another_account_change_the_endpoint() -> None:
    accounts = Accounts("123456789012")
    client = refreshing_client(accounts)
    memo = EndpointMemo(client)
    model = client.meta.service_model.operation_model("PutItem")
    params = {"TableName": "t"}
    urls = []
    for account in ["123456789012", "123456789012", "111122223333", "111122223333"]:
        accounts.account = account
        expected = resolved(client._resolve_endpoint_ruleset, model, params)
        got = resolved(memo.resolve, model, params)
        assert got == expected
        urls.append(got[0][0])
    assert urls == [
        "https://123456789012.ddb.us-east-1.amazonaws.com",
        "https://123456789012.ddb.us-east-1.amazonaws.com",
        "https://111122223333.ddb.us-east-1.amazonaws.com",
        "https://111122223333.ddb.us-east-1.amazonaws.com",
    ]


def test_a_remembered_answer_reads_the_account_id_once_as_botocore_does() -> None:
    accounts = Accounts("123456789012")
    client = refreshing_client(accounts)
    memo = EndpointMemo(client)
    model = client.meta.service_model.operation_model("GetItem")
    memo.resolve(model, {"TableName": "t"}, {})
    before = accounts.refreshes
    client._resolve_endpoint_ruleset(model, {"TableName": "t"}, {})
    by_botocore = accounts.refreshes - before
    memo.resolve(model, {"TableName": "t"}, {})
    assert accounts.refreshes - before - by_botocore == by_botocore == 1


@pytest.mark.parametrize(
    "event", ["before-endpoint-resolution.dynamodb", "before-endpoint-resolution"]
)
def test_hooks_on_endpoint_resolution_see_each_call_once(event: str) -> None:
    client = make_client("us-east-1", None, None, None, None, None, True, False)
    memo = EndpointMemo(client)
    model = client.meta.service_model.operation_model("GetItem")
    seen: list[dict[str, Any]] = []

    def move(builtins: dict[str, Any], params: dict[str, Any], **_: Any) -> None:
        seen.append(params)
        builtins["AWS::Region"] = params["TableName"]

    before = memo.resolve(model, {"TableName": "eu-west-1"}, {})  # remembered before the hook
    assert before[0] == "https://dynamodb.us-east-1.amazonaws.com"
    client.meta.events.register(event, move)
    try:
        for region in ["eu-west-1", "us-east-1", "eu-west-1"]:
            params = {"TableName": region}
            expected = resolved(client._resolve_endpoint_ruleset, model, params)
            assert resolved(memo.resolve, model, params) == expected
            assert expected[0][0] == f"https://dynamodb.{region}.amazonaws.com"
        assert len(seen) == 6
    finally:
        client.meta.events.unregister(event, move)
    assert memo.resolve(model, {"TableName": "eu-west-1"}, {})[0] == before[0]


def test_a_botocore_context_records_the_same_features() -> None:
    client = make_client("us-east-1", None, None, None, "123456789012", "preferred", True, False)
    memo = EndpointMemo(client)
    model = client.meta.service_model.operation_model("GetItem")
    memo.resolve(model, {"TableName": "t"}, {})  # remembered
    features = []
    for resolve in (client._resolve_endpoint_ruleset, memo.resolve):
        with start_as_current_context():
            resolve(model, {"TableName": "t"}, {})
            context = get_context()
            assert context is not None
            features.append(set(context.features))
    assert features[0] == features[1] != set()


def test_debug_logging_logs_what_botocore_logs(caplog: pytest.LogCaptureFixture) -> None:
    client = make_client("eu-west-1", None, None, None, None, None, True, False)
    memo = EndpointMemo(client)
    model = client.meta.service_model.operation_model("Query")
    memo.resolve(model, {"TableName": "t"}, {})  # remembered
    logged = []
    for resolve in (client._resolve_endpoint_ruleset, memo.resolve):
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="botocore.regions"):
            resolve(model, {"TableName": "t"}, {})
        logged.append([r.getMessage() for r in caplog.records if r.name == "botocore.regions"])
    assert logged[0] == logged[1] != []


def test_a_context_already_written_is_merged_by_botocore() -> None:
    # The "local" region's endpoint has auth schemes: botocore writes a signing context.
    client = make_client("local", None, None, None, None, None, True, False)
    memo = EndpointMemo(client)
    model = client.meta.service_model.operation_model("GetItem")
    memo.resolve(model, {"TableName": "t"}, {})  # remembered
    contexts = []
    for resolve in (client._resolve_endpoint_ruleset, memo.resolve):
        context: dict[str, Any] = {"signing": {"x": 1}}
        resolve(model, {"TableName": "t"}, context)
        contexts.append(context)
    assert contexts[0] == contexts[1]
    assert contexts[0]["signing"] == {"x": 1, "region": "us-east-1", "signing_name": "dynamodb"}


def test_an_account_id_changing_during_a_miss_is_not_remembered() -> None:
    # The account id reads: the memo's key (A), botocore's (B), the memo's again (B).
    accounts = Accounts("123456789012")
    client = refreshing_client(accounts)
    accounts.queued = ["123456789012", "111122223333", "111122223333"]
    memo = EndpointMemo(client)
    model = client.meta.service_model.operation_model("GetItem")
    assert memo.resolve(model, {"TableName": "t"}, {})[0].startswith("https://111122223333.")
    accounts.queued, accounts.account = [], "123456789012"
    assert memo.resolve(model, {"TableName": "t"}, {})[0].startswith("https://123456789012.")


def test_remembered_answers_are_copies_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lean_endpoint, "MAX_RESULTS", 3)
    client = make_client("us-east-1", None, None, None, None, None, True, False)
    memo = EndpointMemo(client)
    model = client.meta.service_model.operation_model("GetItem")
    memo.resolve(model, {"TableName": "t"}, {})
    remembered = memo.resolve(model, {"TableName": "t"}, {})
    remembered[1]["X"] = "changed by the caller"
    assert memo.resolve(model, {"TableName": "t"}, {})[1] == {}
    for name in ["a", "b", "c", "d", "t"]:
        assert memo.resolve(model, {"TableName": name}, {}) == (
            client._resolve_endpoint_ruleset(model, {"TableName": name}, {})
        )
        assert 1 <= len(memo._results) <= 3


def test_a_client_without_rules_is_left_to_botocore(monkeypatch: pytest.MonkeyPatch) -> None:
    client = make_client("us-east-1", "https://h:1", None, None, None, None, True, False)
    client = boto3.Session(aws_access_key_id="k", aws_secret_access_key="s").client(
        "dynamodb", region_name="us-east-1", endpoint_url="https://h:1"
    )
    monkeypatch.setattr(client, "_ruleset_resolver", None)
    assert internals.endpoint_rule_inputs(client) is None
    memo = EndpointMemo(client)
    model = client.meta.service_model.operation_model("GetItem")
    context: dict[str, Any] = {}
    assert memo.resolve(model, {"TableName": "t"}, context) == ("https://h:1", {}, {})
    assert context == {}
