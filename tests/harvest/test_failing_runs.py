"""Which production runs harvest reads as failing, when a late span changed the run after it was judged."""

from dataclasses import replace
from datetime import timedelta

from django.db.models import F
from django.utils import timezone

from datasets.models import Trace
from harvest.loading import failures_load
from tests.harvest.traffic import MODES, PASSING, traffic_create

BY_NAME = {mode.name: mode for mode in MODES}


def _late_span(project, trace_ids):
    # What OpenTelemetry ingestion does to a run when a span of it arrives late.
    Trace.objects.filter(project=project, trace_id__in=trace_ids).update(revision=F("revision") + 1)


def _failing(project):
    failures = failures_load(project_id=project.pk, since=timezone.now() - timedelta(days=90))
    pks = dict(Trace.objects.filter(pk__in=list(failures)).values_list("pk", "trace_id"))
    return {pks[pk]: failure for pk, failure in failures.items()}


def test_feedback_given_before_a_late_span_still_makes_the_run_failing(actors):
    planted = traffic_create(
        actors.acme, modes=[replace(BY_NAME["thumbs_down"], count=4)], passing=replace(PASSING, count=2)
    )
    _late_span(actors.acme, planted["thumbs_down"])
    failing = _failing(actors.acme)
    assert sorted(failing) == sorted(planted["thumbs_down"])
    assert all(failure.feedback == {"thumbs"} and not failure.failed for failure in failing.values())


def test_a_failed_check_computed_before_a_late_span_is_left_out(actors):
    planted = traffic_create(
        actors.acme,
        modes=[replace(BY_NAME["bad_json"], count=4), replace(BY_NAME["wrong_tool"], count=3)],
        passing=replace(PASSING, count=2),
    )
    _late_span(actors.acme, planted["bad_json"])
    failing = _failing(actors.acme)
    assert sorted(failing) == sorted(planted["wrong_tool"])
    assert all(failure.failed == {"tool_choice"} for failure in failing.values())
