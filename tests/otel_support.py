"""OpenTelemetry's SDK with in-memory exporters, for the telemetry tests.

The API's global providers can be set once per process; the tests need a fresh pair per
test and none outside the telemetry tests (whose timings and logs they would change). So
`Otel` replaces the API's two provider getters for one test (monkeypatch), which is what
`singletable.io.telemetry` and the API's tracers consult, and instruments botocore and
aiobotocore with the same tracer provider, as an application would.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import metrics, trace
from opentelemetry.instrumentation.botocore import AiobotocoreInstrumentor, BotocoreInstrumentor
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from singletable.io import telemetry


class Otel:
    """The spans and metrics recorded during one test."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        # Delta temporality: each read holds what was recorded since the previous one.
        self.reader = InMemoryMetricReader(
            preferred_temporality={
                kind: AggregationTemporality.DELTA for kind in (Counter, Histogram)
            }
        )
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self._points: list[tuple[str, dict[str, Any], float]] = []

    def spans(self) -> list[ReadableSpan]:
        """The finished spans, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        return [
            s
            for s in self.spans()
            if s.parent is not None and s.parent.span_id == parent.context.span_id
        ]

    def clear(self) -> None:
        """Forget the spans and metric points recorded so far."""
        self.exporter.clear()
        self._collect()
        self._points.clear()

    def _collect(self) -> None:
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data is not None else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    for point in metric.data.data_points:
                        value = getattr(point, "value", None)
                        if value is None:
                            value = point.count  # type: ignore[union-attr]
                        self._points.append((metric.name, dict(point.attributes or {}), value))

    def points(self, metric: str) -> list[tuple[dict[str, Any], float]]:
        """Each data point of ``metric`` since `clear`: (attributes, value or histogram count)."""
        self._collect()
        return [(attributes, value) for name, attributes, value in self._points if name == metric]


def attrs(span: ReadableSpan) -> dict[str, Any]:
    """A span's attributes, as a plain dict."""
    return dict(span.attributes or {})


@pytest.fixture(name="otel")
def otel_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[Otel]:
    """An SDK for this test only, with botocore and aiobotocore instrumented."""
    recorded = Otel()
    getters = trace.get_tracer_provider, metrics.get_meter_provider
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: recorded.tracer_provider)
    monkeypatch.setattr(metrics, "get_meter_provider", lambda: recorded.meter_provider)
    telemetry.refresh()  # singletable looks the providers up at most once a second
    instrumentors: list[Any] = [BotocoreInstrumentor(), AiobotocoreInstrumentor()]  # type: ignore[no-untyped-call]
    for instrumentor in instrumentors:
        instrumentor.instrument(tracer_provider=recorded.tracer_provider)
    try:
        yield recorded
    finally:
        for instrumentor in instrumentors:
            instrumentor.uninstrument()
        recorded.tracer_provider.shutdown()
        recorded.meter_provider.shutdown()
        # The API's own getters back before the next test, and seen at its first operation.
        trace.get_tracer_provider, metrics.get_meter_provider = getters
        telemetry.refresh()
