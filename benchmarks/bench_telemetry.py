"""Cost of telemetry on a get and on a 100-item query page, tracing off, no-op and recording.

Each call is timed on the same `Connection`, in one process, in four modes, interleaved
round by round so that a noisy phase of the (shared) machine hits them all:

* ``off``: as if ``opentelemetry-api`` were not installed (`singletable.io.telemetry`
  sees no API: the path of a program that never imports it);
* ``off again``: the very same, timed a second time: its ratio to ``off`` is the noise
  floor of the run (an A/A comparison);
* ``api``: the API loaded, no SDK (the API's proxy providers, as in a program that
  imports OpenTelemetry but configures nothing);
* ``sdk``: the SDK's TracerProvider with a SimpleSpanProcessor into an InMemorySpanExporter
  and a MeterProvider with an InMemoryMetricReader (spans, attributes and metrics recorded;
  botocore's own instrumentation is not on, so only singletable's cost is in the figure).

No server time: a ``before-send`` handler answers each call with a canned body (an item;
a page of 100 items), so what is timed is singletable plus botocore on the client, the
case where any overhead shows most. Both transports (boto3, lean).

Per round, each mode runs ``--calls`` calls; the per-call time is the round's mean CPU
time of this process (``time.process_time``: on a shared machine the other processes
delay a call's wall time, much less its CPU time). The ratio of a mode is its time over
``off``'s in the same round; reported: the median ratio over the rounds and its spread
(min-max), and the ratio of the modes' best rounds, beside the A/A figures. Run:
``python3 benchmarks/bench_telemetry.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from botocore.awsrequest import AWSResponse, HTTPHeaders
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_overheads

import singletable as st
from singletable.io import telemetry

MODES = ("off", "off again", "api", "sdk")

table = st.Table("bench-telemetry")


class Order(st.Entity, table=table, pk="C#{customer}", sk="O#{order_id}"):
    customer: str
    order_id: int
    status: str = "new"
    total: int = 0
    note: str = ""


def _bodies() -> dict[str, bytes]:
    items = [
        Order(customer="c", order_id=i, total=i * 10, note="x" * 40).to_item() for i in range(100)
    ]
    return {
        "GetItem": json.dumps({"Item": items[0]}).encode(),
        "Query": json.dumps({"Items": items, "Count": 100, "ScannedCount": 100}).encode(),
    }


def make_client() -> Any:
    """A client configured as `Connection` builds its own, answered from canned bodies.

    bench_overheads' client, whose own canned answer is for BatchWriteItem only.
    """
    client = bench_overheads.make_client()
    bodies = _bodies()

    def answer(request: Any, **_: Any) -> AWSResponse:
        target = request.headers["X-Amz-Target"]
        target = target.decode() if isinstance(target, bytes) else target
        headers = HTTPHeaders()
        headers["x-amzn-requestid"] = "canned"
        headers["content-type"] = "application/x-amz-json-1.0"
        body = bodies[target.split(".")[-1]]
        return AWSResponse(request.url, 200, headers, bench_overheads._Raw(body))

    client.meta.events.register("before-send.dynamodb", answer)
    return client


class Modes:
    """Switches `singletable.io.telemetry` between the four modes, in one process."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
        self._api_trace = telemetry.trace
        self._get_tracer_provider = trace.get_tracer_provider
        self._get_meter_provider = metrics.get_meter_provider

    @contextmanager
    def mode(self, name: str) -> Iterator[None]:
        self.exporter.clear()
        telemetry.refresh()  # the mode's providers, from its first call
        if name.startswith("off"):
            # What telemetry sees when the API is not installed: no module bound, and
            # none loaded (its one sys.modules look-up answers no).
            saved = telemetry._api_loaded
            telemetry.trace = None
            telemetry._api_loaded = lambda: False
            try:
                yield
            finally:
                telemetry._api_loaded = saved
                telemetry.trace = self._api_trace
            return
        if name == "sdk":
            trace.get_tracer_provider = lambda: self.tracer_provider
            metrics.get_meter_provider = lambda: self.meter_provider
        try:
            yield
        finally:
            trace.get_tracer_provider = self._get_tracer_provider
            metrics.get_meter_provider = self._get_meter_provider


def workloads(db: st.Connection) -> dict[str, Callable[[], Any]]:
    get = Order.get(customer="c", order_id=0)
    page = Order.query(customer="c").limit(100)

    def one_get() -> Any:
        return get.run(db)

    def one_page() -> Any:
        return page.page(db)

    return {"get": one_get, "query page (100 items)": one_page}


def measure(rounds: int, calls: int) -> dict[tuple[str, str, str], list[float]]:
    """(transport, workload, mode) -> the per-call µs of each round."""
    telemetry._api_loaded()  # this script imported the API: bind it
    modes = Modes()
    times: dict[tuple[str, str, str], list[float]] = {}
    for transport in ("boto3", "lean"):
        db = st.Connection(make_client(), transport=transport)
        for workload, call in workloads(db).items():
            for name in MODES:  # warm every path once
                with modes.mode(name):
                    call()
            for r in range(rounds):
                order = MODES[r % len(MODES) :] + MODES[: r % len(MODES)]
                for name in order:
                    with modes.mode(name):
                        start = time.process_time()
                        for _ in range(calls):
                            call()
                        elapsed = time.process_time() - start
                    times.setdefault((transport, workload, name), []).append(elapsed / calls * 1e6)
    return times


def report(times: dict[tuple[str, str, str], list[float]]) -> dict[str, float]:
    medians: dict[str, float] = {}
    for transport, workload in dict.fromkeys((t, w) for t, w, _ in times):
        off = times[(transport, workload, "off")]
        print(f"  {transport:5} {workload}: off {statistics.median(off):8.1f} µs/call")
        for name in MODES[1:]:
            ratios = [m / o for m, o in zip(times[(transport, workload, name)], off, strict=True)]
            median = statistics.median(ratios)
            medians[f"{transport} {workload} {name}"] = median
            mine = times[(transport, workload, name)]
            best = min(mine) / min(off)
            print(
                f"    {name:9} {statistics.median(mine):8.1f} µs  ratio {median:.3f} "
                f"(rounds {min(ratios):.3f}-{max(ratios):.3f}; best/best {best:.3f})"
            )
    return medians


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Measure and print the ratios; returns the median ratio of each (transport, call, mode)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="two rounds of a few calls")
    args = parser.parse_args(argv)
    rounds, calls = (2, 5) if args.quick else (args.rounds, args.calls)
    print(f"bench_telemetry: {rounds} rounds x {calls} calls; python {sys.version.split()[0]}")
    return report(measure(rounds, calls))


if __name__ == "__main__":
    main()
