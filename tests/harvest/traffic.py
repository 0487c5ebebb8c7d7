"""Generated production traffic with planted failure modes, stored as the doors and workers store it.

Six modes, of different sizes and inputs; two of them (``wrong_tool`` and
``refund_wrong_tool``) share a signature (the same failed check, the same tool calls), so
only their inputs tell them apart. Runs are ingested through the ingestion service;
their failures are written as a pass and the feedback door write them: failed scores,
negative feedback, a judge's abstentions, errored runs. Passing runs are mixed in.
Each run's ``metadata.mode`` says which mode was planted in it.
"""

import random
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from datasets.ingestion import traces_ingest
from datasets.models import Trace
from scoring.models import Abstention, Score, ScoreSource

ROOMS = ["Focus", "Atlas", "Nova", "Orbit", "Delta", "Zen"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
MONTHS = ["January", "March", "April", "June", "September", "November"]
CITIES = ["Paris", "Lima", "Oslo", "Rome", "Quito", "Tokyo", "Cairo"]
TOPICS = ["marketing", "hiring", "travel", "cloud", "office", "training"]
KINDS = ["group", "weekend", "corporate", "student", "family"]


@dataclass(frozen=True)
class Mode:
    name: str
    count: int
    template: str
    tools: tuple
    failed: str = ""  # a failed check
    reason: str = ""
    feedback: bool = False
    abstained: str = ""
    error: str = ""


MODES = (
    Mode("wrong_tool", 120, "Book the {room} room for {hours} hours on {day}", ("quote_room",),
         failed="tool_choice", reason="expected ['book_room'], got ['quote_room']"),
    Mode("refund_wrong_tool", 60, "Refund my order {number} please, the parcel arrived broken", ("quote_room",),
         failed="tool_choice", reason="expected ['refund_order'], got ['quote_room']"),
    Mode("bad_json", 45, "Export my invoices of {month} as a JSON document", (),
         failed="json_valid", reason="the answer is not JSON: Expecting value at 0"),
    Mode("thumbs_down", 30, "What is the cancellation policy for {kind} bookings", ("lookup_policy",),
         feedback=True, reason="not what I asked"),
    Mode("judge_abstains", 20, "Summarize the meeting notes about the {topic} budget", ("fetch_notes",),
         abstained="helpfulness", reason="prose_reply"),
    Mode("timeouts", 12, "Search flights from {city} to {city2} next {day}", ("search_flights", "search_flights"),
         error="TimeoutError: upstream took 30 s"),
)  # fmt: skip
PASSING = Mode("passing", 80, "Show my bookings of {day} in the {room} room", ("list_bookings",))


def mode_text(mode, rng):
    return mode.template.format(
        room=rng.choice(ROOMS), hours=rng.randint(1, 9), day=rng.choice(DAYS), month=rng.choice(MONTHS),
        number=rng.randint(10_000, 99_999), city=rng.choice(CITIES), city2=rng.choice(CITIES),
        topic=rng.choice(TOPICS), kind=rng.choice(KINDS),
    )  # fmt: skip


def _payload(mode, index, rng, now, prefix):
    spans = [
        {"span_id": f"t{i}", "kind": "tool", "name": tool, "input": {"i": i}, "output": {"ok": True}}
        for i, tool in enumerate(mode.tools)
    ]
    started = now - timedelta(hours=rng.uniform(1, 72))
    return {
        "trace_id": f"{prefix}{mode.name}-{index}",
        "name": "agent",
        "input": mode_text(mode, rng),
        "output": "Done.",
        "status": "error" if mode.error else "ok",
        "error": mode.error or None,
        "started_at": started.isoformat(),
        "latency_ms": 900,
        "metadata": {"mode": mode.name},
        "spans": spans,
    }


def _failures_write(project, mode, runs):
    scores, abstentions = [], []
    for run in runs:
        scores.append(Score(project=project, trace=run, scorer="answered", config_hash="0" * 64, value=1, passed=True))
        if mode.failed:
            scores.append(Score(project=project, trace=run, scorer=mode.failed, config_hash="0" * 64, value=0,
                                passed=False, reason=mode.reason))  # fmt: skip
        if mode.feedback:
            scores.append(Score(project=project, trace=run, scorer="feedback:thumbs", config_hash="1" * 64, value=0,
                                passed=False, reason=mode.reason, source=ScoreSource.FEEDBACK))  # fmt: skip
        if mode.abstained:
            abstentions.append(Abstention(project=project, trace=run, scorer=mode.abstained, reason=mode.reason,
                                          detail={"reply": "It was a good summary overall."}))  # fmt: skip
    Score.objects.bulk_create(scores)
    Abstention.objects.bulk_create(abstentions)


def traffic_create(project, *, modes=MODES, passing=PASSING, seed=7, prefix="", scale=1):
    """Ingest the runs of ``modes`` (each ``count * scale``) and ``passing`` ones, write their failures;
    returns ``{mode name: [trace_id]}``."""
    rng, now = random.Random(seed), timezone.now()
    planted = {}
    for mode in (*modes, passing):
        payloads = [_payload(mode, i, rng, now, prefix) for i in range(mode.count * scale)]
        for start in range(0, len(payloads), 1000):
            traces_ingest(project=project, payload={"traces": payloads[start : start + 1000]})
        runs = list(Trace.objects.filter(project=project, trace_id__in=[p["trace_id"] for p in payloads]))
        _failures_write(project, mode, runs)
        planted[mode.name] = [p["trace_id"] for p in payloads]
    return planted
