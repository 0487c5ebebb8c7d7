"""What the run page shows above its spans: the run's verdict from its checks, a timeline
of its spans, and each scorer's abstention once.

The timeline is drawn server-side as rows of bars (left and width in percent of the
run's span of time), so it reads without JavaScript and scales to any width.
"""

from datetime import timedelta


def _end(span):
    if span.ended_at is not None:
        return span.ended_at
    if span.started_at is not None and span.latency_ms is not None:
        return span.started_at + timedelta(milliseconds=span.latency_ms)
    return span.started_at


def span_timeline(spans):
    """``{rows: [{span, left, width, start_ms, duration_ms}], total_ms, untimed}`` of the spans in tree order.

    A span without a start time is counted in ``untimed`` and left out of the bars; a
    span without a duration is drawn as a thin mark at its start.
    """
    timed = [s for s in spans if s.started_at is not None]
    if not timed:
        return {"rows": [], "total_ms": 0, "untimed": len(spans)}
    start = min(s.started_at for s in timed)
    end = max(_end(s) for s in timed)
    total_ms = max((end - start).total_seconds() * 1000, 1.0)
    rows = []
    for span in timed:
        offset = (span.started_at - start).total_seconds() * 1000
        duration = (_end(span) - span.started_at).total_seconds() * 1000
        rows.append(
            {
                "span": span,
                "left": f"{offset / total_ms * 100:.2f}",
                "width": f"{max(duration / total_ms * 100, 0.4):.2f}",
                "start_ms": round(offset),
                "duration_ms": round(duration),
            }
        )
    return {"rows": rows, "total_ms": round(total_ms), "untimed": len(spans) - len(timed)}


def run_verdict(scores):
    """``(label, tone, failed scorers)`` of a run from its current (not stale) scores."""
    current = [s for s in scores if not s.stale]
    failed = sorted({s.scorer for s in current if not s.passed})
    if failed:
        return f"{len(failed)} check{'s' if len(failed) != 1 else ''} failed", "fail", failed
    if current:
        return "checks passed", "pass", []
    return "not scored", "warn", []


def abstentions_once(abstentions):
    """The newest abstention of each scorer (``abstentions`` newest first), each with ``times``."""
    newest = {}
    for abstention in abstentions:
        if abstention.scorer in newest:
            newest[abstention.scorer].times += 1
        else:
            abstention.times = 1
            newest[abstention.scorer] = abstention
    return list(newest.values())
