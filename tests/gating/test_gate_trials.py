"""Trials through the API: numbering, supersession, pass^k, flaky cases, quarantine, history, paired compare."""

import pytest

from datasets.models import Dataset, GoldenCase
from evalgate.calls import runs_for_attempt
from gating.models import GatePolicy, GateRun
from tests.factories import run_payload

GOOD = [{"span_id": "t", "kind": "tool", "name": "quote_room", "input": {"room": "Focus"}}]
BAD = [{"span_id": "t", "kind": "tool", "name": "book_room", "input": {"room": "Focus"}}]
CASES = ("quote", "book", "cancel")


@pytest.fixture
def dataset(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="desk")
    for name in CASES:
        GoldenCase.objects.create(dataset=dataset, name=name, expectations={"expected_tools": ["quote_room"]})
    return dataset


def _policy(dataset, **fields):
    GatePolicy.objects.update_or_create(dataset=dataset, defaults=fields)


def _upload(actors, experiment, outcomes, *, numbered=True, prefix=""):
    """outcomes: {case: "ppf"} one letter per trial (p passes, f fails), trials numbered 1.. in order."""
    batch = [
        run_payload(
            f"{prefix}{experiment}-{case}-{i}", dataset="desk", case=case, experiment=experiment,
            spans=GOOD if letter == "p" else BAD, started_at=f"2026-11-30T10:00:{i:02d}Z",
            **({"trial": i} if numbered else {}),
        )
        for case, letters in outcomes.items()
        for i, letter in enumerate(letters, start=1)
    ]  # fmt: skip
    response = actors.api().post("/v1/api/traces", {"traces": batch}, format="json")
    assert response.status_code == 201, response.content


def _gate(actors, experiment, **body):
    response = actors.api().post("/v1/api/gate", {"dataset": "desk", "experiment": experiment, **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _case(answer, name):
    return next(c for c in answer["cases"] if c["name"] == name)


def test_with_three_trials_every_trial_must_pass_and_a_mixed_case_is_flaky(actors, dataset):
    _policy(dataset, trials=3)
    _upload(actors, "v1", {"quote": "ppp", "book": "pfp", "cancel": "ppp"})
    answer = _gate(actors, "v1")
    assert (answer["verdict"], answer["passed_cases"], answer["k"]) == ("FAIL", 2, 3)
    book = _case(answer, "book")
    assert (book["passed"], book["flaky"], book["trials"], book["passed_trials"]) == (False, True, 3, 2)
    assert [(t["trial"], t["passed"]) for t in book["trial_results"]] == [(1, True), (2, False), (3, True)]
    assert book["trace_id"] == "v1-book-2"  # the seed fields come from the first failing trial
    assert (book["tool_choice_ok"], book["actual_tools"]) == (False, ["book_room"])
    assert book["reasons"][0] == "2 of 3 trials passed; the policy needs 3"
    assert (answer["flaky_cases"], answer["flaky"]) == (1, ["book"])
    assert answer["pass_at_1"] == pytest.approx((1 + 2 / 3 + 1) / 3)
    assert answer["pass_hat_k"] == pytest.approx(2 / 3)


def test_a_lower_trial_pass_ratio_passes_the_flaky_case_and_max_flaky_can_still_block_it(actors, dataset):
    _policy(dataset, trials=3, trial_pass_ratio=0.6)
    _upload(actors, "v1", {"quote": "ppp", "book": "pfp", "cancel": "ppp"})
    answer = _gate(actors, "v1")
    assert answer["verdict"] == "PASS" and _case(answer, "book")["flaky"] is True
    _policy(dataset, trials=3, trial_pass_ratio=0.6, max_flaky=0)
    blocked = _gate(actors, "v1")
    assert blocked["verdict"] == "FAIL" and blocked["blocked_by"] == ["1 cases are flaky; the policy allows 0"]


def test_a_case_short_of_trials_is_unmeasured_and_counts_against_max_abstained(actors, dataset):
    _policy(dataset, trials=3)
    _upload(actors, "v1", {"quote": "ppp", "book": "pp", "cancel": "ppp"})
    answer = _gate(actors, "v1")
    book = _case(answer, "book")
    assert (book["passed"], book["measured"], book["reasons"][0]) == (False, False, "2 of 3 trials recorded")
    assert (answer["verdict"], answer["unmeasured_cases"]) == ("FAIL", 1)
    _policy(dataset, trials=3, max_abstained=1)
    assert _gate(actors, "v1")["verdict"] == "PASS"


def test_runs_without_a_trial_are_numbered_in_start_order_and_all_count(actors, dataset):
    _upload(actors, "v1", {"quote": "fp", "book": "p", "cancel": "p"}, numbered=False)
    answer = _gate(actors, "v1")
    quote = _case(answer, "quote")
    assert [(t["trial"], t["trace_id"], t["passed"]) for t in quote["trial_results"]] == [
        (1, "v1-quote-1", False),
        (2, "v1-quote-2", True),
    ]
    assert quote["passed"] is False  # the second try happening to work does not hide the first


def test_a_ci_rerun_of_the_same_trials_supersedes_the_earlier_runs(actors, dataset):
    _upload(actors, "v1", {"quote": "f", "book": "p", "cancel": "p"}, prefix="attempt1-")
    assert _gate(actors, "v1")["verdict"] == "FAIL"
    batch = [
        run_payload(
            f"attempt2-{case}", dataset="desk", case=case, experiment="v1", spans=GOOD, trial=1,
            started_at="2026-11-30T11:00:00Z",
        )
        for case in CASES
    ]  # fmt: skip
    assert actors.api().post("/v1/api/traces", {"traces": batch}, format="json").status_code == 201
    answer = _gate(actors, "v1")
    assert answer["verdict"] == "PASS"
    quote = _case(answer, "quote")
    assert (quote["trace_id"], quote["superseded"]) == ("attempt2-quote", ["attempt1-v1-quote-1"])


def test_one_trial_reads_as_before_with_trials_fields_that_reduce_to_it(actors, dataset):
    _upload(actors, "v1", {"quote": "p", "book": "f", "cancel": "p"})
    answer = _gate(actors, "v1")
    book = _case(answer, "book")
    assert (book["trials"], book["passed_trials"], book["flaky"]) == (1, 0, False)
    assert book["reasons"] == ["tool_choice: expected ['quote_room'], called ['book_room']"]
    assert (answer["pass_at_1"], answer["pass_hat_k"], answer["pass_rate"]) == (2 / 3, 2 / 3, 2 / 3)


def test_a_quarantined_case_is_run_and_shown_but_does_not_gate(actors, dataset):
    book = dataset.cases.get(name="book")
    api = actors.api()
    refused = api.patch(f"/v1/api/cases/{book.pk}", {"quarantined": True}, format="json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "quarantine_reason"
    patched = api.patch(
        f"/v1/api/cases/{book.pk}", {"quarantined": True, "quarantine_reason": "flaky booking API"}, format="json"
    )
    assert patched.status_code == 200 and patched.json()["quarantined"] is True
    assert patched.json()["revisions"][0]["new"] == {"quarantined": True, "quarantine_reason": "flaky booking API"}
    _upload(actors, "v1", {"quote": "p", "book": "f", "cancel": "p"})
    answer = _gate(actors, "v1")
    assert (answer["verdict"], answer["total_cases"], answer["quarantined_cases"]) == ("PASS", 2, 1)
    assert [c["name"] for c in answer["cases"]] == ["quote", "cancel"]
    assert [(c["name"], c["passed"]) for c in answer["quarantined"]] == [("book", False)]
    lifted = api.patch(f"/v1/api/cases/{book.pk}", {"quarantined": False}, format="json").json()
    assert (lifted["quarantined"], lifted["quarantine_reason"], lifted["version"]) == (False, "", 3)
    assert _gate(actors, "v1")["verdict"] == "FAIL"


def test_a_case_history_lists_its_outcome_per_experiment_newest_first_with_a_flip_rate(actors, dataset):
    _policy(dataset, trials=2)
    for experiment, book in (("v1", "pp"), ("v2", "pf"), ("v3", "ff"), ("v4", "pp")):
        _upload(actors, experiment, {"quote": "pp", "book": book, "cancel": "pp"})
        _gate(actors, experiment)
    book = dataset.cases.get(name="book")
    history = actors.api().get(f"/v1/api/cases/{book.pk}/history").json()
    assert [(e["experiment"], e["outcome"], e["flaky"]) for e in history["experiments"]] == [
        ("v4", "passed", False),
        ("v3", "failed", False),
        ("v2", "failed", True),
        ("v1", "passed", False),
    ]
    assert history["flip_rate"] == pytest.approx(2 / 3)
    assert [t["passed"] for t in history["experiments"][2]["trial_results"]] == [True, False]
    assert actors.api().get(f"/v1/api/cases/{book.pk}/history?limit=2").json()["flip_rate"] == 1.0
    flaky = actors.api().get("/v1/api/datasets/desk/cases?flaky=true").json()["results"]
    assert [c["name"] for c in flaky] == ["book"]
    assert actors.outsider_api().get(f"/v1/api/cases/{book.pk}/history").status_code == 404


def test_a_gate_runs_cases_are_served_paged_failures_first(actors, dataset):
    _upload(actors, "v1", {"quote": "p", "book": "f", "cancel": "f"})
    gate_run_id = _gate(actors, "v1")["gate_run_id"]
    page = actors.api().get(f"/v1/api/gate-runs/{gate_run_id}/cases?page_size=2").json()
    assert [c["name"] for c in page["results"]] == ["book", "cancel"]
    rest = actors.api().get(page["next"]).json()
    assert [c["name"] for c in rest["results"]] == ["quote"] and rest["next"] is None
    in_order = actors.api().get(f"/v1/api/gate-runs/{gate_run_id}/cases?order=position").json()["results"]
    assert [c["name"] for c in in_order] == ["quote", "book", "cancel"]
    assert actors.outsider_api().get(f"/v1/api/gate-runs/{gate_run_id}/cases").status_code == 404


def test_compare_pairs_the_cases_with_mcnemar_and_wilson(actors, dataset):
    _upload(actors, "v1", {"quote": "p", "book": "p", "cancel": "f"})
    _upload(actors, "v2", {"quote": "p", "book": "f", "cancel": "f"})
    _gate(actors, "v1")
    _gate(actors, "v2")
    cases = actors.api().get("/v1/api/experiments/compare?base=v1&candidate=v2").json()["cases"]
    assert {k: cases[k] for k in ("paired", "both_pass", "both_fail", "pass_to_fail", "fail_to_pass")} == {
        "paired": 3,
        "both_pass": 1,
        "both_fail": 1,
        "pass_to_fail": 1,
        "fail_to_pass": 0,
    }
    assert cases["p_value"] == 1.0  # one discordant pair: 2 * P(X <= 0), X ~ Bin(1, 1/2)
    assert cases["base"]["pass_rate"] == pytest.approx(2 / 3)
    assert cases["base"]["ci95"] == [pytest.approx(0.2077, abs=1e-4), pytest.approx(0.9385, abs=1e-4)]
    assert GateRun.objects.count() == 2


def test_a_run_of_a_case_no_longer_active_is_not_a_trial(actors, dataset):
    _upload(actors, "v1", {"quote": "p", "book": "f", "cancel": "p"})
    GoldenCase.objects.filter(dataset=dataset, name="book").update(status="archived")
    answer = _gate(actors, "v1")
    assert (answer["verdict"], answer["passed_cases"], answer["total_cases"]) == ("PASS", 2, 2)
    assert sorted(c["name"] for c in answer["cases"]) == ["cancel", "quote"]


def test_a_case_not_gated_on_tool_choice_still_reports_the_tools_its_run_called(actors):
    plain = Dataset.objects.create(project=actors.acme, name="plain")
    GoldenCase.objects.create(dataset=plain, name="fast", expectations={"latency_threshold_ms": 5000})
    run = run_payload("v1-fast", dataset="plain", case="fast", experiment="v1", spans=GOOD, latency_ms=900)
    assert actors.api().post("/v1/api/traces", {"traces": [run]}, format="json").status_code == 201
    response = actors.api().post("/v1/api/gate", {"dataset": "plain", "experiment": "v1"}, format="json")
    case = response.json()["cases"][0]
    assert [c["scorer"] for c in case["checks"]] == ["latency_budget"]
    assert (case["passed"], case["actual_tools"]) == (True, ["quote_room"])


def _resend(actors, case, trial, *, passing, trace_id, experiment="v1"):
    payload = run_payload(
        trace_id, dataset="desk", case=case, experiment=experiment, spans=GOOD if passing else BAD, trial=trial,
        started_at="2026-11-30T11:00:00Z",
    )  # fmt: skip
    assert actors.api().post("/v1/api/traces", payload, format="json").status_code == 201


def test_it_keeps_a_failed_trial_re_sent_until_it_passed_as_a_flaky_case(actors, dataset):
    _policy(dataset, trials=3, max_flaky=0)
    _upload(actors, "v1", {"quote": "pfp", "book": "ppp", "cancel": "ppp"})
    _resend(actors, "quote", 2, passing=True, trace_id="v1-quote-2-again")
    answer = _gate(actors, "v1")
    assert (answer["verdict"], answer["passed_cases"], answer["pass_hat_k"]) == ("FAIL", 3, 1.0)
    assert (answer["flaky_cases"], answer["flaky"]) == (1, ["quote"])
    assert answer["blocked_by"] == ["1 cases are flaky; the policy allows 0"]
    assert answer["retried"] == [
        {
            "case": "quote",
            "trial": 2,
            "superseded": {"trace_id": "v1-quote-2", "passed": False},
            "counted": {"trace_id": "v1-quote-2-again", "passed": True},
        }
    ]
    assert _case(answer, "quote")["superseded"] == ["v1-quote-2"]


def test_it_does_not_list_a_re_sent_trial_whose_earlier_run_passed(actors, dataset):
    _upload(actors, "v1", {"quote": "p", "book": "p", "cancel": "p"})
    _resend(actors, "quote", 1, passing=True, trace_id="v1-quote-1-again")
    answer = _gate(actors, "v1")
    assert (answer["verdict"], answer["retried"], answer["flaky_cases"]) == ("PASS", [], 0)


def test_it_counts_a_whole_ci_job_re_run_with_attempt_the_same_way(actors, dataset):
    _policy(dataset, max_flaky=0)

    def job(attempt, failing, started_at):
        runs = [
            run_payload(f"sha-1-{case}", dataset="desk", case=case, experiment="sha-1", started_at=started_at,
                        spans=BAD if case == failing else GOOD)
            for case in CASES
        ]  # fmt: skip
        response = actors.api().post("/v1/api/traces", {"traces": runs_for_attempt(runs, attempt)}, format="json")
        assert response.status_code == 201, response.content
        return _gate(actors, "sha-1")

    assert job("1", "book", "2026-11-30T10:00:00Z")["verdict"] == "FAIL"
    again = job("2", None, "2026-11-30T11:00:00Z")
    assert (again["verdict"], again["passed_cases"], again["flaky"]) == ("FAIL", 3, ["book"])
    assert [(r["case"], r["superseded"]["trace_id"], r["counted"]["trace_id"]) for r in again["retried"]] == [
        ("book", "sha-1-book@1", "sha-1-book@2")
    ]
