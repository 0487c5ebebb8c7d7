"""What a capture from the pages says: per run, in the page's words.

``capture_into`` captures through the reference guard (``scoring.review.capture_guard``)
and words its refusal for the form: "Run <id> failed tool_choice; tick '<the box's
label>' to capture it anyway", not the API's ``trace_ids[0]``. ``capture_report`` says
of each run what happened: captured, already a case, or skipped with the checks it
failed and the box that would take it anyway.
"""

from django.contrib import messages

from datasets.capture import MAX_TRACES_PER_CAPTURE
from scoring.review.capture_guard import FailedAsReference, cases_capture_into
from web.pages.refusals import refusal

# Runs named per line of the report; the rest are counted.
NAMED_MAX = 20


def capture_into(*, project, form, data, by, max_runs=MAX_TRACES_PER_CAPTURE, skip_failing=False):
    """``(dataset, captured, skipped)``, or ``None`` after putting the refusal on ``form`` in the page's words.

    One transaction: the new dataset and every new case are written, or nothing is.
    """
    with refusal(form):
        try:
            return cases_capture_into(
                project=project, data=data, by=by, dataset_name=form.cleaned_data.get("dataset"),
                new_dataset_name=form.cleaned_data.get("new_dataset"), max_runs=max_runs, skip_failing=skip_failing,
            )  # fmt: skip
        except FailedAsReference as exc:
            _failed_show(form, exc)
    return None


def _failed_show(form, exc):
    """Each failing run on the form: what it failed, and the box that captures it anyway."""
    box = _accept_label(form)
    for trace_id, checks in exc.failed.items():
        form.add_error(
            None,
            f"Run {trace_id} failed {', '.join(checks)}, so its answer would make its own failure the "
            f"reference. Nothing was captured: write its expected answer instead, or tick '{box}' to "
            "capture it anyway.",
        )


def _accept_label(form):
    field = form.fields.get("accept_failed_output")
    return field.label if field is not None else "Take the answer even if the run failed a check"


def _named(trace_ids):
    shown = ", ".join(trace_ids[:NAMED_MAX])
    more = len(trace_ids) - NAMED_MAX
    return f"{shown} and {more} more" if more > 0 else shown


def _runs(n):
    return f"{n} run{'s' if n != 1 else ''}"


def capture_lines(dataset, captured, skipped, *, box, matching=None):
    """The report's lines: captured, already cases, skipped (each naming its runs)."""
    new = [c.trace_id for c in captured if c.created]
    there = [f"{c.trace_id} (case {c.case.name})" for c in captured if not c.created]
    head = f"All {_runs(matching)} matching the filter: c" if matching is not None else "C"
    lines = [f"{head}aptured {_runs(len(new))} into {dataset.name}" + (f": {_named(new)}." if new else ".")]
    if there:
        lines.append(f"Already a case in {dataset.name}, no twin created: {_named(there)}.")
    if new and not any(c.case.expected_output is not None for c in captured if c.created):
        lines.append("The new cases need an expected answer: see the review queue.")
    if skipped:
        failing = [f"{s['trace_id']} ({', '.join(s['failed_checks'])})" for s in skipped]
        lines.append(
            f"Skipped {_runs(len(skipped))} that failed a check, whose answers would become the reference of "
            f"their own failure: {_named(failing)}. Tick '{box}' to capture them anyway."
        )
    return lines


def capture_report(request, form, dataset, captured, skipped, matching=None):
    """The report as messages of ``request``: a warning when nothing new was captured."""
    lines = capture_lines(dataset, captured, skipped, box=_accept_label(form), matching=matching)
    level = messages.success if any(c.created for c in captured) or not skipped else messages.warning
    for line in lines:
        level(request, line)
