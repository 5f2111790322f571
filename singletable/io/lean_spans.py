"""The lean transport's DynamoDB client span, as opentelemetry-instrumentation-botocore makes it.

The lean transport (`singletable.io.lean`) bypasses botocore's ``_make_api_call``, which
the instrumentation wraps; so that a dashboard cannot tell the transports apart, this
module makes the span the instrumentation would have made, exactly when it is active:
the same name (``DynamoDB.<Action>``), kind and attributes, those of
``opentelemetry-instrumentation-botocore`` 0.66b2 (which still uses the older names
``db.system = "dynamodb"``, ``db.operation``, ``net.peer.name``: equal to botocore's is the
point). tests/io/test_telemetry.py compares the two call by call.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlparse

from singletable.io import telemetry

__all__ = ["lean_sender"]


def _botocore_instrumented() -> bool:
    # The lean transport mirrors the boto3 transport: a client span exactly when
    # opentelemetry-instrumentation-botocore would have made one. Looked up, not imported:
    # an instrumentation nobody loaded instruments nothing.
    module = sys.modules.get("opentelemetry.instrumentation.botocore")
    utils = sys.modules.get("opentelemetry.instrumentation.utils")
    if module is None or utils is None:
        return False
    instrumented = module.BotocoreInstrumentor().is_instrumented_by_opentelemetry
    return bool(instrumented and utils.is_instrumentation_enabled())


def _json_list(value: Any) -> list[str] | None:
    return [json.dumps(v) for v in value] if isinstance(value, list) else None


def _json_one(value: Any) -> list[str] | None:
    return [json.dumps(value)] if value is not None else None


def _json_text(value: Any) -> str | None:
    return json.dumps(value) if isinstance(value, dict) else None


_READ_REQUEST = {
    "aws.dynamodb.consistent_read": "ConsistentRead",
    "aws.dynamodb.projection": "ProjectionExpression",
}
_QUERY_REQUEST = {
    "aws.dynamodb.scan_forward": "ScanIndexForward",
    "aws.dynamodb.attributes_to_get": "AttributesToGet",
    **_READ_REQUEST,
    "aws.dynamodb.index_name": "IndexName",
    "aws.dynamodb.limit": "Limit",
    "aws.dynamodb.select": "Select",
}
_WRITE_RESPONSE: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "aws.dynamodb.consumed_capacity": ("ConsumedCapacity", _json_one),
    "aws.dynamodb.item_collection_metrics": ("ItemCollectionMetrics", _json_text),
}
#: Per wire operation: (request attributes, response attributes), as the botocore
#: instrumentation's DynamoDB extension sets them (transactions: none).
_CLIENT_ATTRIBUTES: dict[
    str, tuple[dict[str, str], dict[str, tuple[str, Callable[[Any], Any]]]]
] = {
    "GetItem": (_READ_REQUEST, {"aws.dynamodb.consumed_capacity": ("ConsumedCapacity", _json_one)}),
    "PutItem": ({}, _WRITE_RESPONSE),
    "UpdateItem": ({}, _WRITE_RESPONSE),
    "DeleteItem": ({}, _WRITE_RESPONSE),
    "Query": (_QUERY_REQUEST, {"aws.dynamodb.consumed_capacity": ("ConsumedCapacity", _json_one)}),
    "Scan": (
        {"aws.dynamodb.segment": "Segment", "aws.dynamodb.total_segments": "TotalSegments"}
        | _QUERY_REQUEST,
        {
            "aws.dynamodb.count": ("Count", lambda v: v),
            "aws.dynamodb.scanned_count": ("ScannedCount", lambda v: v),
            "aws.dynamodb.consumed_capacity": ("ConsumedCapacity", _json_one),
        },
    ),
    "BatchGetItem": ({}, {"aws.dynamodb.consumed_capacity": ("ConsumedCapacity", _json_list)}),
    "BatchWriteItem": (
        {},
        {
            "aws.dynamodb.consumed_capacity": ("ConsumedCapacity", _json_list),
            "aws.dynamodb.item_collection_metrics": ("ItemCollectionMetrics", _json_text),
        },
    ),
}


def _client_span_attributes(wire: str, params: Mapping[str, Any], client: Any) -> dict[str, Any]:
    endpoint = client.meta.endpoint_url
    parsed = urlparse(endpoint)
    attributes: dict[str, Any] = {
        "rpc.system": "aws-api",
        "rpc.service": "DynamoDB",
        "rpc.method": wire,
        "cloud.region": client.meta.region_name,
    }
    if parsed.hostname:
        attributes["server.address"] = parsed.hostname
        attributes["server.port"] = parsed.port or 443
    attributes["db.system"] = "dynamodb"
    attributes["db.operation"] = wire
    attributes["net.peer.name"] = parsed.netloc
    if wire in _CLIENT_ATTRIBUTES:
        tables = list(params["RequestItems"]) if "RequestItems" in params else [params["TableName"]]
        attributes["aws.dynamodb.table_names"] = tables
        for name, key in _CLIENT_ATTRIBUTES[wire][0].items():
            if params.get(key) is not None:
                attributes[name] = params[key]
    return attributes


def _response_attributes(span: Any, wire: str, response: Mapping[str, Any] | None) -> None:
    if response is None:
        return
    metadata = response.get("ResponseMetadata") or {}
    headers = metadata.get("HTTPHeaders") or {}
    request_id = metadata.get("RequestId") or headers.get("x-amzn-requestid")
    if request_id:
        span.set_attribute("aws.request_id", request_id)
    if metadata.get("RetryAttempts") is not None:
        span.set_attribute("retry_attempts", metadata["RetryAttempts"])
    if metadata.get("HTTPStatusCode") is not None:
        span.set_attribute("http.status_code", metadata["HTTPStatusCode"])


def _client_call(
    send: Callable[[str, dict[str, Any]], dict[str, Any]],
    action: str,
    params: dict[str, Any],
    client: Any,
    tracer: Any,
) -> dict[str, Any]:
    wire = telemetry.WIRE_NAMES[action]
    with tracer.start_as_current_span(
        f"DynamoDB.{wire}",
        kind=telemetry.SpanKind.CLIENT,
        attributes=_client_span_attributes(wire, params, client),
        set_status_on_exception=False,
    ) as span:
        try:
            response = send(action, params)
        except Exception as exc:
            failed = getattr(exc, "response", None)
            if isinstance(failed, Mapping):
                _response_attributes(span, wire, failed)
            span.set_status(telemetry.Status(telemetry.StatusCode.ERROR, str(exc)))
            raise
        _response_attributes(span, wire, response)
        for name, (key, convert) in _CLIENT_ATTRIBUTES.get(wire, ({}, {}))[1].items():
            value = response.get(key)
            if value is not None and (converted := convert(value)) is not None:
                span.set_attribute(name, converted)
        return response


def lean_sender(
    send: Callable[..., dict[str, Any]],
    supports: Callable[[str], bool],
    client: Any,
) -> Callable[..., dict[str, Any]]:
    """The lean transport's ``send``, making the client span botocore's instrumentation would.

    Calls the lean path hands to the boto3 client (`supports` says no) are left to
    botocore's own instrumentation.
    """

    def traced_send(action: str, params: dict[str, Any], decode_body: Any = None) -> dict[str, Any]:
        instruments = telemetry.resolve()
        if instruments is None or not supports(action) or not _botocore_instrumented():
            return send(action, params, decode_body)
        return _client_call(
            functools.partial(send, decode_body=decode_body),
            action,
            params,
            client,
            instruments.tracer,
        )

    return traced_send
