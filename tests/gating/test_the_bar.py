"""The bar cannot be moved by the key a CI job holds, and every move by someone allowed shows on the verdict."""

import pytest

from datasets.models import Dataset, GoldenCase
from gating.models import GatePolicy, PolicyRevision
from scoring.judge.services import judge_configure
from tests.factories import run_payload

POLICY = "/v1/api/datasets/refills/gate-policy"


@pytest.fixture
def dataset(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="refills")
    for name in ("refill_lisinopril", "refill_metformin", "refill_unknown_drug"):
        GoldenCase.objects.create(dataset=dataset, name=name, input=name, expectations={"contains": "REFILL-OK"})
    return dataset


def _upload(api, experiment, passing):
    """One run per case; the cases in ``passing`` answer right."""
    runs = [
        run_payload(
            f"{experiment}-{case}",
            dataset="refills",
            case=case,
            experiment=experiment,
            input=case,
            output="REFILL-OK" if case in passing else "Sorry, I cannot help.",
        )  # fmt: skip
        for case in ("refill_lisinopril", "refill_metformin", "refill_unknown_drug")
    ]
    assert api.post("/v1/api/traces", {"traces": runs}, format="json").status_code == 201


def _gate(api, experiment, **body):
    response = api.post("/v1/api/gate", {"dataset": "refills", "experiment": experiment, **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _assert_needs(response, scope):
    assert response.status_code == 403, response.content
    assert response.json()["required_scope"] == scope


@pytest.mark.parametrize(
    "loosening",
    [
        {"trial_pass_ratio": 0.2},
        {"max_flaky": None},
        {"fail_on_regression": False},
        {"ratchet": False},
        {"max_abstained": 5},
        {"tolerance": 0.5},
        {"trials": 1},
        {"judge_min_kappa": None},
        {"judge_min_labels": 5},
        {"scorers": []},
        {"input_match": "off"},
    ],
)
def test_a_loosening_needs_an_admin_key(actors, dataset, loosening):
    GatePolicy.objects.create(
        dataset=dataset,
        trials=3,
        max_flaky=0,
        judge_min_kappa=0.6,
        judge_min_labels=30,
        scorers=["no_errors"],
        input_match="require",
    )
    body = {**loosening, "reason": "green build"}
    _assert_needs(actors.ci_api().put(POLICY, body, format="json"), "curate")
    _assert_needs(actors.ci_api(("curate",)).put(POLICY, body, format="json"), "admin")
    assert not PolicyRevision.objects.exists()


def test_an_admin_loosens_only_with_a_reason_and_the_revision_says_who_and_why(actors, dataset):
    GatePolicy.objects.create(dataset=dataset, trial_pass_ratio=1.0)
    response = actors.api().put(POLICY, {"trial_pass_ratio": 0.5}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "reason", "message": "is required to loosen the gate"}]
    response = actors.api().put(POLICY, {"trial_pass_ratio": 0.5, "reason": "flaky vendor API"}, format="json")
    assert response.status_code == 200 and response.json()["revision"] == 1
    history = actors.ci_api().get(POLICY + "/history").json()["results"]
    assert history[0]["author"] == "key ci" and history[0]["reason"] == "flaky vendor API"
    assert history[0]["changes"] == [{"field": "trial_pass_ratio", "old": 1.0, "new": 0.5, "loosens": True}]


def test_a_curate_key_tightens_and_a_ci_key_cannot(actors, dataset):
    _assert_needs(actors.ci_api().put(POLICY, {"trials": 3}, format="json"), "curate")
    response = actors.ci_api(("curate",)).put(POLICY, {"trials": 3, "max_flaky": 0}, format="json")
    assert response.status_code == 200, response.content
    revision = PolicyRevision.objects.get()
    assert (revision.number, revision.loosens, revision.author) == (1, False, "key ci curate")
    assert actors.api().put(POLICY, {"trials": 3}, format="json").json()["revision"] == 1  # nothing changed


def test_the_history_is_paged_newest_first_and_hidden_from_outsiders(actors, dataset):
    for trials in (2, 3, 4):
        actors.api().put(POLICY, {"trials": trials}, format="json")
    page = actors.api().get(POLICY + "/history", {"page_size": 2}).json()
    assert [r["revision"] for r in page["results"]] == [3, 2]
    assert [r["revision"] for r in actors.api().get(page["next"]).json()["results"]] == [1]
    assert actors.outsider_api().get(POLICY + "/history").status_code == 404


def test_clearing_the_baseline_does_not_reopen_init_floor(actors, dataset):
    admin = actors.api()
    _upload(admin, "v1", passing={"refill_lisinopril", "refill_metformin", "refill_unknown_drug"})
    assert _gate(admin, "v1", set_baseline=True, init_floor=True)["floor_initialised"] is True
    assert GatePolicy.objects.get().min_pass_rate == 1.0
    _assert_needs(actors.ci_api().put(POLICY, {"baseline": None}, format="json"), "curate")
    _assert_needs(actors.ci_api(("curate",)).put(POLICY, {"baseline": None}, format="json"), "admin")
    admin.put(POLICY, {"baseline": None, "reason": "rebuilding the baseline"}, format="json")
    _upload(admin, "v2", passing={"refill_lisinopril"})
    answer = _gate(actors.ci_api(), "v2", set_baseline=True, init_floor=True)
    assert (answer["verdict"], answer["floor_initialised"], answer["floor"]) == ("FAIL", False, 1.0)
    assert GatePolicy.objects.get().min_pass_rate == 1.0


def test_the_verdict_lists_every_move_of_the_bar_since_the_baseline(actors, dataset):
    admin = actors.api()
    _upload(admin, "v1", passing={"refill_lisinopril", "refill_metformin", "refill_unknown_drug"})
    first = _gate(admin, "v1", set_baseline=True)
    assert (first["bar_moved"], first["policy_revision"]) == ([], 0)  # decided before it recorded the baseline
    admin.put(POLICY, {"fail_on_regression": False, "reason": "known outage of the pharmacy API"}, format="json")
    case = GoldenCase.objects.get(name="refill_unknown_drug")
    admin.patch(
        f"/v1/api/cases/{case.pk}", {"quarantined": True, "quarantine_reason": "drug list moved"}, format="json"
    )
    metformin = GoldenCase.objects.get(name="refill_metformin")
    admin.patch(f"/v1/api/cases/{metformin.pk}", {"expectations": {}}, format="json")
    admin.delete(f"/v1/api/cases/{GoldenCase.objects.get(name='refill_lisinopril').pk}")
    judge_configure(project=actors.acme, endpoint="http://127.0.0.1:9/v1", model="judge-a")
    judge_configure(project=actors.acme, endpoint="http://127.0.0.1:9/v1", model="judge-yes-man")
    _upload(admin, "v2", passing=set())
    answer = _gate(actors.ci_api(), "v2")
    assert answer["policy_revision"] == 2
    moves = {m["kind"]: m for m in answer["bar_moved"]}
    assert moves["policy"]["what"] == "fail_on_regression True → False"
    assert (moves["policy"]["by"], moves["policy"]["reason"]) == ("key ci", "known outage of the pharmacy API")
    whats = sorted(m["what"] for m in answer["bar_moved"] if m["kind"] == "case")
    assert whats == [
        "case 'refill_lisinopril' archived",
        "case 'refill_metformin' lost checks: contains",
        "case 'refill_unknown_drug' quarantined",
    ]
    assert moves["judge"]["what"] == "judge changed: model judge-yes-man"
    assert answer["bar_moved_more"] == 0


def test_tightening_is_not_a_move_of_the_bar(actors, dataset):
    admin = actors.api()
    _upload(admin, "v1", passing={"refill_lisinopril", "refill_metformin", "refill_unknown_drug"})
    _gate(admin, "v1", set_baseline=True)
    actors.ci_api(("curate",)).put(POLICY, {"scorers": ["no_errors"]}, format="json")
    _upload(admin, "v2", passing={"refill_lisinopril", "refill_metformin", "refill_unknown_drug"})
    answer = _gate(admin, "v2")
    assert (answer["bar_moved"], answer["policy_revision"]) == ([], 2)


def test_a_judge_gates_only_once_calibrated_by_default(actors, dataset):
    policy = actors.ci_api().get(POLICY).json()
    assert (policy["judge_min_kappa"], policy["judge_min_labels"]) == (0.6, 30)
