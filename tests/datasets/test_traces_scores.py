"""Runs and their scores through the API: the failed/abstained filters and the detail's scores."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from datasets.models import Trace
from scoring.models import Abstention, Score
from scoring.selectors import runs_annotate_scores
from tests.factories import trace_create


def score_add(trace, scorer, *, passed, value=None, reason=""):
    return Score.objects.create(
        project=trace.project,
        trace=trace,
        scorer=scorer,
        config_hash="0" * 64,
        value=value if value is not None else float(passed),
        passed=passed,
        reason=reason,
    )


def abstention_add(trace, scorer, reason="not_configured"):
    return Abstention.objects.create(project=trace.project, trace=trace, scorer=scorer, reason=reason)


def _ids(api, query):
    response = api.get("/v1/api/traces?" + query)
    assert response.status_code == 200, response.content
    return sorted(t["trace_id"] for t in response.json()["results"])


def test_it_filters_runs_with_a_failed_score(actors):
    clean = trace_create(actors.acme, "clean")
    wrong_tool = trace_create(actors.acme, "wrong-tool")
    slow = trace_create(actors.acme, "slow")
    score_add(clean, "tool_choice", passed=True)
    score_add(wrong_tool, "tool_choice", passed=False)
    score_add(slow, "latency_budget", passed=False)
    score_add(slow, "tool_choice", passed=True)
    api = actors.api()
    assert _ids(api, "scorer_failed=any") == ["slow", "wrong-tool"]
    assert _ids(api, "scorer_failed=tool_choice") == ["wrong-tool"]
    assert _ids(api, "scorer_failed=answered") == []


def test_a_failed_score_of_an_earlier_revision_of_the_run_does_not_list_it_as_failed(actors):
    revised = trace_create(actors.acme, "revised")
    score_add(revised, "tool_choice", passed=False)
    # A span arrived after the run was scored: that score is stale until the next pass.
    Trace.objects.filter(pk=revised.pk).update(revision=2)
    api = actors.api()
    assert _ids(api, "scorer_failed=any") == []
    assert _ids(api, "scorer_failed=tool_choice") == []
    assert _ids(api, "") == ["revised"]
    assert runs_annotate_scores(Trace.objects.filter(pk=revised.pk)).get().has_failed_score is False


def test_it_filters_runs_where_a_scorer_abstained(actors):
    judged = trace_create(actors.acme, "judged")
    unmeasured = trace_create(actors.acme, "unmeasured")
    trace_create(actors.acme, "never-scored")
    score_add(judged, "exact_match", passed=True)
    abstention_add(unmeasured, "exact_match")
    api = actors.api()
    assert _ids(api, "scorer_abstained=any") == ["unmeasured"]
    assert _ids(api, "scorer_abstained=exact_match") == ["unmeasured"]
    assert _ids(api, "scorer_abstained=tool_output") == []
    assert _ids(api, "scorer_abstained=any&scorer_failed=any") == []


def test_the_filtered_list_costs_a_fixed_number_of_queries(actors):
    api = actors.api()
    trace = trace_create(actors.acme, "r0")
    score_add(trace, "answered", passed=False)
    api.get("/v1/api/traces?scorer_failed=any")
    with CaptureQueriesContext(connection) as few:
        api.get("/v1/api/traces?scorer_failed=any&scorer_abstained=any")
    for i in range(1, 20):
        trace = trace_create(actors.acme, f"r{i}")
        score_add(trace, "answered", passed=False)
        abstention_add(trace, "exact_match")
    with CaptureQueriesContext(connection) as many:
        assert len(api.get("/v1/api/traces?scorer_failed=any&scorer_abstained=any").json()["results"]) == 19
    assert len(many) == len(few)


def test_the_run_detail_carries_its_scores_and_abstentions(actors):
    trace = trace_create(actors.acme, "scored")
    score_add(trace, "tool_choice", passed=False, value=0.0, reason="expected ['quote_room'], called ['book_room']")
    score_add(trace, "answered", passed=True)
    abstention_add(trace, "tool_output", reason="target_tool_not_called")
    body = actors.api().get("/v1/api/traces/scored").json()
    assert [(s["scorer"], s["passed"]) for s in body["scores"]] == [("answered", True), ("tool_choice", False)]
    assert body["scores"][1]["reason"] == "expected ['quote_room'], called ['book_room']"
    assert [(a["scorer"], a["kind"], a["reason"]) for a in body["abstentions"]] == [
        ("tool_output", "abstained", "target_tool_not_called")
    ]


def test_another_projects_scores_do_not_select_runs(actors):
    theirs = trace_create(actors.umbrella, "theirs")
    score_add(theirs, "answered", passed=False)
    assert _ids(actors.api(), "scorer_failed=any") == []
    assert actors.outsider_api().get("/v1/api/traces/theirs").json()["scores"][0]["scorer"] == "answered"
