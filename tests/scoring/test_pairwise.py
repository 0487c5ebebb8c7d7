"""Pairwise review: judgements of two experiments' answers to one case, one per author, and a pair's figures."""

import pytest
from django.db import IntegrityError, transaction

from checks.stats import win_rate
from datasets.models import Experiment, GoldenCase
from evalsite.errors import Invalid
from scoring.models import PairwiseJudgement
from scoring.review.pairwise import pairwise_cases, pairwise_judge, pairwise_summary
from tests.scoring.pairwise_data import larder_create


@pytest.fixture
def larder(actors):
    larder_create(actors)
    v1, v2 = (Experiment.objects.get(project=actors.acme, name=n) for n in ("v1", "v2"))
    return v1, v2


def _case(name):
    return GoldenCase.objects.get(dataset__name="larder", name=name).pk


def test_win_rate_leaves_ties_out_and_gives_the_wilson_interval():
    figures = win_rate(2, 1, 5)
    assert figures["n"] == 8 and figures["decisive"] == 3
    assert figures["win_rate"] == pytest.approx(2 / 3)
    assert figures["ci95"] == [pytest.approx(0.208, abs=5e-4), pytest.approx(0.939, abs=5e-4)]  # as 2 of 3
    assert win_rate(0, 0, 4) == {
        "wins": 0,
        "losses": 0,
        "ties": 4,
        "n": 4,
        "decisive": 0,
        "win_rate": None,
        "ci95": None,
    }


def test_the_cases_of_a_pair_are_those_both_experiments_answered_with_their_runs(actors, larder):
    v1, v2 = larder
    rows = pairwise_cases(project=actors.acme, first=v2, second=v1)
    assert [(r["case"].name, r["first"].trace_id, r["second"].trace_id) for r in rows] == [
        ("bread", "v2-bread", "v1-bread"),
        ("eggs", "v2-eggs", "v1-eggs"),
        ("milk", "v2-milk", "v1-milk"),
    ]
    GoldenCase.objects.filter(name="milk").update(status="archived")
    assert len(pairwise_cases(project=actors.acme, first=v2, second=v1)) == 2


def test_judging_again_replaces_the_judgement_whichever_way_the_pair_is_named(actors, larder):
    v1, v2 = larder
    _, created = pairwise_judge(
        project=actors.acme, first=v2, second=v1, case_id=_case("eggs"), verdict="better", author="bob"
    )
    assert created
    _, created = pairwise_judge(
        project=actors.acme, first=v1, second=v2, case_id=_case("eggs"), verdict="better", author="bob"
    )
    assert not created
    assert PairwiseJudgement.objects.count() == 1
    summary = pairwise_summary(first=v2, second=v1)
    assert (summary["wins"], summary["losses"], summary["ties"]) == (0, 1, 0)  # v1 better, seen from v2


def test_the_database_refuses_a_second_judgement_of_the_same_author(actors, larder):
    v1, v2 = larder
    judgement, _ = pairwise_judge(
        project=actors.acme, first=v2, second=v1, case_id=_case("milk"), verdict="tie", author="bob"
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        PairwiseJudgement.objects.create(
            project=actors.acme, case_id=judgement.case_id, experiment_a=judgement.experiment_a,
            experiment_b=judgement.experiment_b, author="bob", verdict="better",
        )  # fmt: skip


def test_the_summary_counts_every_author_and_is_the_mirror_image_from_the_other_side(actors, larder):
    v1, v2 = larder
    for author, case, verdict in [
        ("bob", "eggs", "better"),
        ("bob", "milk", "better"),
        ("bob", "bread", "tie"),
        ("alice", "eggs", "worse"),
    ]:
        pairwise_judge(project=actors.acme, first=v2, second=v1, case_id=_case(case), verdict=verdict, author=author)
    ours = pairwise_summary(first=v2, second=v1)
    assert (ours["wins"], ours["losses"], ours["ties"], ours["n"], ours["reviewers"], ours["cases"]) == (
        2,
        1,
        1,
        4,
        2,
        3,
    )
    assert ours["win_rate"] == pytest.approx(2 / 3)
    theirs = pairwise_summary(first=v1, second=v2)
    assert (theirs["wins"], theirs["losses"], theirs["ties"]) == (1, 2, 1)


def test_a_case_one_side_did_not_answer_or_an_unknown_verdict_is_refused_naming_the_field(actors, larder):
    v1, v2 = larder
    other = GoldenCase.objects.create(dataset=GoldenCase.objects.get(name="eggs").dataset, name="flour")
    with pytest.raises(Invalid) as error:
        pairwise_judge(project=actors.acme, first=v2, second=v1, case_id=other.pk, verdict="better", author="bob")
    assert error.value.errors[0]["field"] == "case_id"
    with pytest.raises(Invalid) as error:
        pairwise_judge(project=actors.acme, first=v2, second=v1, case_id=_case("eggs"), verdict="meh", author="bob")
    assert error.value.errors[0]["field"] == "verdict"
    with pytest.raises(Invalid) as error:
        pairwise_summary(first=v2, second=v2)
    assert error.value.errors[0]["field"] == "against"
    assert PairwiseJudgement.objects.count() == 0


# The HTTP API.


def test_an_app_judges_through_the_api_and_reads_the_figures(actors, larder):
    body = {"experiment": "v2", "against": "v1", "case_id": _case("eggs"), "verdict": "better"}
    response = actors.ci_api(["label"]).post("/v1/api/pairwise/judgements", body, format="json")
    assert response.status_code == 201, response.content
    answer = response.json()
    assert (answer["verdict"], answer["trace_id"], answer["against_trace_id"]) == ("better", "v2-eggs", "v1-eggs")
    assert answer["author"] == "key:ci label"
    replaced = actors.ci_api(["label"]).post("/v1/api/pairwise/judgements", {**body, "verdict": "worse"}, format="json")
    assert replaced.status_code == 200 and replaced.json()["verdict"] == "worse"  # the same key name: replaced
    replaced = actors.ci_api(["label"]).post("/v1/api/pairwise/judgements", body, format="json")
    assert replaced.status_code == 200
    other = actors.api().post("/v1/api/pairwise/judgements", {**body, "verdict": "tie"}, format="json")
    assert other.status_code == 201 and other.json()["author"] == "key:ci"  # another key: another author
    figures = actors.api().get("/v1/api/pairwise", {"experiment": "v2", "against": "v1"}).json()
    assert (figures["wins"], figures["ties"], figures["n"], figures["win_rate"]) == (1, 1, 2, 1.0)
    assert figures["ci95"] == [pytest.approx(0.2065, abs=5e-4), 1.0]


def test_the_api_answers_400_naming_the_bad_field(actors, larder):
    api = actors.api()
    bad_verdict = api.post(
        "/v1/api/pairwise/judgements",
        {"experiment": "v2", "against": "v1", "case_id": _case("eggs"), "verdict": "meh"},
        format="json",
    )
    assert bad_verdict.status_code == 400 and "verdict" in bad_verdict.content.decode()
    no_case = api.post(
        "/v1/api/pairwise/judgements", {"experiment": "v2", "against": "v1", "verdict": "tie"}, format="json"
    )
    assert no_case.status_code == 400 and "case_id" in no_case.content.decode()
    same = api.get("/v1/api/pairwise", {"experiment": "v2", "against": "v2"})
    assert same.status_code == 400 and "against" in same.content.decode()
    unknown = api.get("/v1/api/pairwise", {"experiment": "v9", "against": "v1"})
    assert unknown.status_code == 404


def test_a_key_without_the_label_scope_cannot_judge(actors, larder):
    body = {"experiment": "v2", "against": "v1", "case_id": _case("eggs"), "verdict": "better"}
    assert actors.ci_api(["ingest"]).post("/v1/api/pairwise/judgements", body, format="json").status_code == 403
    assert PairwiseJudgement.objects.count() == 0


def test_an_outsider_gets_404(actors, larder):
    body = {"experiment": "v2", "against": "v1", "case_id": _case("eggs"), "verdict": "better"}
    assert actors.outsider_api().post("/v1/api/pairwise/judgements", body, format="json").status_code == 404
    assert actors.outsider_api().get("/v1/api/pairwise", {"experiment": "v2", "against": "v1"}).status_code == 404


def test_the_openapi_schema_describes_pairwise_review_without_a_warning(tmp_path):
    from django.core.management import call_command

    call_command("spectacular", "--fail-on-warn", "--validate", "--file", str(tmp_path / "schema.yaml"))
    schema = (tmp_path / "schema.yaml").read_text()
    assert "/v1/api/pairwise/judgements:" in schema and "PairwiseVerdictEnum" in schema
