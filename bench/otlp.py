"""Benchmark: OTLP ingestion of agent traces with message content, beside the runs API.

One gunicorn web process (one worker, ``--threads`` threads) on a fresh database takes N
agent runs of 5 spans each (an agent, two model calls with their messages and tokens,
a tool call with arguments and result, a formatting step), sent:

- as OTLP/HTTP protobuf to ``POST /v1/traces``, ``--runs-per-export`` runs per export
  (100 runs = 500 spans: about what a BatchSpanProcessor sends, 512 spans at most);
- with ``--logs``, the model calls' content as openai-v2 style log records to
  ``POST /v1/logs`` after the spans instead of as span attributes;
- as the same runs to ``POST /v1/api/traces``, the same number of runs per request.

It reports spans/s and runs/s for each (PostgreSQL at ``BENCH_PG_URL``, database
``evalsite_bench_otlp``, dropped and recreated). Each export is priced, mapped and merged into
runs exactly as a real exporter's would be.

    .venv/bin/python bench/otlp.py [--runs 5000] [--runs-per-export 100] [--db postgresql sqlite]
                                   [--threads 1] [--logs]
"""

import argparse
import platform
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue, KeyValueList  # noqa: E402

import bench.ingest  # noqa: E402
from bench.ingest import fresh_environment, run_payloads  # noqa: E402
from tests.live import free_port  # noqa: E402

SPANS_PER_RUN = 5
# Its own database, so that it never drops one another benchmark is using.
bench.ingest.PG_DB = "evalsite_bench_otlp"
T0 = 1_790_000_000_000_000_000
MS = 1_000_000


def _value(value):
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, dict):
        return AnyValue(kvlist_value=KeyValueList(values=[KeyValue(key=k, value=_value(v)) for k, v in value.items()]))
    return AnyValue(string_value=str(value))


def _attrs(values):
    return [KeyValue(key=k, value=_value(v)) for k, v in values.items()]


def _messages(role, text):
    return orjson.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}]).decode()


def _run_spans(i, *, content_in_logs):
    """The 5 spans of run ``i`` (and its log records when the content goes in logs)."""
    trace_id = (i + 1).to_bytes(16, "big")
    hours = i % 8 + 1
    question = f"How much is Focus pro for {hours} hours?"
    answer = f"Focus pro for {hours} hours is {hours * 25}.00 EUR."
    start = T0 + i * 2000 * MS
    llm = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini"}
    calls = [
        (llm | {"gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 30}, question, "quote_room?"),
        (llm | {"gen_ai.usage.input_tokens": 180, "gen_ai.usage.output_tokens": 25}, question, answer),
    ]
    specs = [
        (1, None, "invoke_agent reservo", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "reservo"}),
        (2, 1, "chat gpt-4o-mini", calls[0][0]),
        (3, 1, "execute_tool quote_room", {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "quote_room",
            "gen_ai.tool.call.arguments": orjson.dumps({"room": "Focus", "tier": "pro", "hours": hours}).decode(),
            "gen_ai.tool.call.result": orjson.dumps({"total_cents": hours * 2500}).decode(),
        }),
        (4, 1, "chat gpt-4o-mini", calls[1][0]),
        (5, 1, "format_answer", {"locale": "es"}),
    ]  # fmt: skip
    logs = []
    for number, (_, user_text, assistant_text) in zip((2, 4), calls, strict=True):
        attributes = specs[number - 1][3]
        if content_in_logs:
            span_id = (i * 10 + number).to_bytes(8, "big")
            logs += [
                ("gen_ai.user.message", trace_id, span_id, {"content": user_text}),
                ("gen_ai.choice", trace_id, span_id,
                 {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": assistant_text}}),
            ]  # fmt: skip
        else:
            attributes["gen_ai.input.messages"] = _messages("user", user_text)
            attributes["gen_ai.output.messages"] = _messages("assistant", assistant_text)
    spans = []
    for number, parent, name, attributes in specs:
        spans.append({
            "trace_id": trace_id, "span_id": (i * 10 + number).to_bytes(8, "big"),
            "parent_span_id": (i * 10 + parent).to_bytes(8, "big") if parent else b"",
            "name": name, "start_time_unix_nano": start + number * MS, "end_time_unix_nano": start + 1450 * MS,
            "attributes": _attrs(attributes),
        })  # fmt: skip
    return spans, logs


def otlp_bodies(runs, per_export, *, content_in_logs):
    """``[(path, body)]``: the trace exports, then (with ``content_in_logs``) the log exports."""
    traces, log_bodies = [], []
    for first in range(0, runs, per_export):
        request, logs_request = ExportTraceServiceRequest(), ExportLogsServiceRequest()
        scope = request.resource_spans.add()
        scope.resource.attributes.extend(_attrs({"service.name": "reservo", "evalsite.experiment": "v1"}))
        spans_scope = scope.scope_spans.add()
        logs_scope = logs_request.resource_logs.add().scope_logs.add()
        for i in range(first, min(first + per_export, runs)):
            spans, logs = _run_spans(i, content_in_logs=content_in_logs)
            for span in spans:
                spans_scope.spans.add(**span)
            for name, trace_id, span_id, body in logs:
                logs_scope.log_records.add(
                    event_name=name, trace_id=trace_id, span_id=span_id, time_unix_nano=T0, body=_value(body)
                )
        traces.append(("/v1/traces", request.SerializeToString()))
        if content_in_logs:
            log_bodies.append(("/v1/logs", logs_request.SerializeToString()))
    return traces + log_bodies


def api_bodies(runs, per_request):
    return [
        ("/v1/api/traces", orjson.dumps({"traces": run_payloads(min(per_request, runs - i), i)}))
        for i in range(0, runs, per_request)
    ]


def measure(db, bodies, var_dir, *, threads):
    """Seconds to post ``bodies`` in order to a fresh one-process server."""
    env, key = fresh_environment(db, var_dir)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "evalsite.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1",
         "--threads", str(threads), "--worker-class", "gthread", "--timeout", "300", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        started = time.perf_counter()
        for path, body in bodies:
            content_type = "application/json" if path.startswith("/v1/api/") else "application/x-protobuf"
            request = urllib.request.Request(
                base + path,
                data=body,
                method="POST",
                headers={"Authorization": f"Bearer {key}", "Content-Type": content_type},
            )
            with urllib.request.urlopen(request, timeout=300) as response:
                answer = response.read()
                if response.status not in (200, 201) or (not path.startswith("/v1/api/") and answer):
                    raise SystemExit(f"{path} answered {response.status}: {answer[:300]!r}")
        return time.perf_counter() - started
    finally:
        server.terminate()
        server.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5000)
    parser.add_argument("--runs-per-export", type=int, default=100)
    parser.add_argument("--db", nargs="+", default=["postgresql"], choices=["postgresql", "sqlite"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--logs", action="store_true", help="also measure content sent as log records")
    args = parser.parse_args()
    print(f"{platform.machine()}, {platform.python_version()}, {args.runs} runs x {SPANS_PER_RUN} spans, "
          f"{args.runs_per_export} runs per request, {args.threads} thread(s)")  # fmt: skip
    paths = {
        "runs API (POST /v1/api/traces)": api_bodies(args.runs, args.runs_per_export),
        "OTLP spans with content (POST /v1/traces)": otlp_bodies(
            args.runs, args.runs_per_export, content_in_logs=False
        ),
    }
    if args.logs:
        paths["OTLP spans, content as log records (/v1/traces + /v1/logs)"] = otlp_bodies(
            args.runs, args.runs_per_export, content_in_logs=True
        )
    print("| database | path | seconds | runs/s | spans/s |\n|---|---|---|---|---|")
    for db in args.db:
        for name, bodies in paths.items():
            with tempfile.TemporaryDirectory() as var_dir:
                seconds = measure(db, bodies, Path(var_dir), threads=args.threads)
            print(f"| {db} | {name} | {seconds:.2f} | {args.runs / seconds:,.0f} | "
                  f"{args.runs * SPANS_PER_RUN / seconds:,.0f} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
