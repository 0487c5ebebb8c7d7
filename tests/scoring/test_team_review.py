"""Team review: assignees, several reviewers per item, blind review, agreement and adjudication."""

import pytest
from django.test import Client

from datasets.models import Dataset
from evalsite.errors import Invalid
from evalsite.models import Role
from evalsite.projects import membership_set
from gating.models import GatePolicy
from scoring.judge.calibration import _paired_runs
from scoring.labels import label_config_create, label_configs_for_criteria, label_write
from scoring.models import QueueItem, QueueReview, Score, ScoreSource
from scoring.review.adjudication import adjudicate, queue_disagreements, reference_label, reviewer_agreement
from scoring.review.assignment import queue_label, queue_team_create, review_record, team_next
from scoring.review.queue import Outcome, queue_progress
from tests.base import user_create
from tests.factories import trace_create


def _client(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def team(actors):
    actors.dana = user_create("dana")
    membership_set(user=actors.dana, project=actors.acme, role=Role.REVIEWER)
    actors.config = label_config_create(project=actors.acme, data={"name": "helpful"})
    actors.runs = [trace_create(actors.acme, f"r{i}", output=f"answer {i}") for i in (1, 2, 3)]
    actors.queue = queue_team_create(
        project=actors.acme,
        data={"name": "pair", "reviewers_per_item": 2, "blind": True, "assignees": ["bob", "dana"]},
        by=actors.alice,
    )
    return actors


def _label(team, user, run, value):
    return queue_label(queue=team.queue, trace=run, user=user, values=[(team.config, value)])


def test_bad_team_settings_are_refused_naming_each_field_and_nothing_is_written(actors):
    with pytest.raises(Invalid) as raised:
        queue_team_create(
            project=actors.acme,
            data={"name": "x", "reviewers_per_item": 0, "blind": "yes", "assignees": ["victor", "nobody"]},
        )
    fields = {e["field"]: e["message"] for e in raised.value.errors}
    assert set(fields) == {"reviewers_per_item", "blind", "assignees"}
    assert "victor" in fields["assignees"], "a viewer may not be assigned"
    assert not actors.acme.queue_filters.exists()


def test_a_queue_of_cases_takes_one_reviewer_per_item(actors):
    with pytest.raises(Invalid) as raised:
        queue_team_create(
            project=actors.acme, data={"name": "c", "kind": "cases_needing_answer", "reviewers_per_item": 2}
        )
    assert [e["field"] for e in raised.value.errors] == ["reviewers_per_item"]
    assert not actors.acme.queue_filters.exists()


def test_two_reviewers_label_each_item_and_it_is_done_at_the_second(team):
    r1, r2, _ = team.runs
    assert team_next(queue=team.queue, user=team.bob) == r1.pk
    assert team_next(queue=team.queue, user=team.dana) == r1.pk, "no exclusive lease: both get the first item"
    _label(team, team.bob, r1, True)
    assert team_next(queue=team.queue, user=team.bob) == r2.pk, "bob is not handed what he labelled"
    assert team_next(queue=team.queue, user=team.dana) == r1.pk, "r1 still needs a second reviewer"
    assert not QueueItem.objects.get(item=r1.pk).done
    _label(team, team.dana, r1, False)
    assert QueueItem.objects.get(item=r1.pk).done
    assert queue_progress(team.queue).done == 1
    assert team_next(queue=team.queue, user=team.dana) == r2.pk


def test_a_second_label_of_the_same_reviewer_is_one_turn_and_one_label(team):
    r1 = team.runs[0]
    _label(team, team.bob, r1, True)
    _label(team, team.bob, r1, False)
    assert QueueReview.objects.filter(item=r1.pk).count() == 1
    assert Score.objects.filter(trace=r1, source=ScoreSource.HUMAN).count() == 1
    assert not QueueItem.objects.get(item=r1.pk).done, "one reviewer twice is not two reviewers"


def test_a_skip_is_the_reviewers_turn_but_counts_no_label(team):
    r1, r2, _ = team.runs
    review_record(queue=team.queue, item=r1.pk, user=team.bob, outcome=Outcome.SKIPPED)
    assert team_next(queue=team.queue, user=team.bob) == r2.pk
    _label(team, team.dana, r1, True)
    assert not QueueItem.objects.get(item=r1.pk).done


def test_a_reviewer_not_assigned_is_handed_nothing_and_cannot_label_in_the_queue(team):
    assert team_next(queue=team.queue, user=team.alice) is None
    with pytest.raises(Invalid):
        _label(team, team.alice, team.runs[0], True)
    assert not Score.objects.exists()
    response = _client(team.alice).get(f"/p/acme/queue/{team.queue.pk}/")
    assert response.status_code == 200 and "assigned to other reviewers" in response.content.decode()


def test_blind_review_hides_the_other_reviewers_label_on_the_item_page(team):
    r1 = team.runs[0]
    url = f"/p/acme/queue/{team.queue.pk}/items/{r1.pk}/"
    posted = _client(team.bob).post(url, {"action": "label", f"config_{team.config.pk}": "true", "comment": "bob-says"})
    assert posted.status_code == 302
    page = _client(team.dana).get(url).content.decode()
    assert 'id="blind-note"' in page and "bob-says" not in page and ">bob<" not in page
    assert "No labels yet." in page
    mine = _client(team.bob).get(url).content.decode()
    assert "bob-says" in mine


def test_the_queue_form_saves_the_team_settings(actors):
    response = _client(actors.alice).post(
        "/p/acme/queue/",
        {"name": "team", "kind": "runs", "reviewers_per_item": "3", "blind": "on", "assignees": ["bob"]},
    )
    assert response.status_code == 302
    queue = actors.acme.queue_filters.get(name="team")
    assert (queue.reviewers_per_item, queue.blind, [u.username for u in queue.assignees.all()]) == (3, True, ["bob"])
    bad = _client(actors.alice).post("/p/acme/queue/", {"name": "t2", "kind": "runs", "reviewers_per_item": "11"})
    assert bad.status_code == 400 and not actors.acme.queue_filters.filter(name="t2").exists()


def test_disagreements_are_adjudicated_into_the_runs_reference_label(team):
    r1, r2, r3 = team.runs
    for run, bob, dana in ((r1, True, False), (r2, True, True), (r3, False, True)):
        _label(team, team.bob, run, bob)
        _label(team, team.dana, run, dana)
    found = queue_disagreements(queue=team.queue)
    assert [d["trace"].trace_id for d in found] == ["r1", "r3"]
    assert {(g["author"], g["label"]) for g in found[0]["labels"]} == {("bob", True), ("dana", False)}
    figure = reviewer_agreement(project=team.acme, config=team.config, queue=team.queue)
    # Two reviewers, 3 items: p_o = 1/3; bob says yes 2 of 3, dana 2 of 3: p_e = 4/9 + 1/9 = 5/9.
    assert (figure.method, figure.items, figure.reviewers) == ("kappa", 3, 2)
    assert figure.value == pytest.approx((1 / 3 - 5 / 9) / (1 - 5 / 9))
    score = adjudicate(queue=team.queue, trace=r1, config=team.config, value=False, comment="no source",
                       decided_by={"name": "alice", "by": "user"})  # fmt: skip
    assert (score.passed, score.detail["decided_by"], score.detail["by"], score.reason) == (
        False, "alice", "reference", "no source",
    )  # fmt: skip
    assert reference_label(r1, team.config) == score
    assert [d["trace"].trace_id for d in queue_disagreements(queue=team.queue)] == ["r3"]
    again = reviewer_agreement(project=team.acme, config=team.config, queue=team.queue)
    assert again.value == figure.value, "a reference label is not a reviewer's label"
    with pytest.raises(Invalid) as raised:
        adjudicate(
            queue=team.queue, trace=r3, config=team.config, value="maybe", decided_by={"name": "a", "by": "user"}
        )
    assert raised.value.errors[0]["field"] == "value"


def test_the_reference_label_decides_the_reviewers_verdict_for_the_judges_calibration(team):
    criterion = label_config_create(project=team.acme, data={"name": "grounded"})
    r1 = team.runs[0]
    for name in ("bob", "dana", "eve"):
        label_write(project=team.acme, trace=r1, config=criterion, value=True, author={"name": name, "by": "user"})
    Score.objects.create(project=team.acme, trace=r1, scorer="grounded", config_hash="x", value=0, passed=False,
                         source=ScoreSource.JUDGE)  # fmt: skip
    assert _paired_runs(team.acme, "grounded").get().vote == 3
    review_record(queue=team.queue, item=r1.pk, user=team.bob)
    adjudicate(queue=team.queue, trace=r1, config=criterion, value=False, decided_by={"name": "alice", "by": "user"})
    assert _paired_runs(team.acme, "grounded").get().vote < 0, "the decision outweighs the three reviewers"


def test_only_an_admin_decides_on_the_adjudication_page(team):
    r1 = team.runs[0]
    _label(team, team.bob, r1, True)
    _label(team, team.dana, r1, False)
    url = f"/p/acme/queue/{team.queue.pk}/adjudication/"
    page = _client(team.bob).get(url).content.decode()
    assert "An admin decides." in page and 'class="decide-form"' not in page
    form = {"item": "r1", "config": "helpful", "value": "true"}
    assert _client(team.bob).post(url, form).status_code == 403
    assert reference_label(r1, team.config) is None
    admin = _client(team.alice)
    assert 'class="decide-form"' in admin.get(url).content.decode()
    assert admin.post(url, form).status_code == 302
    reference = reference_label(r1, team.config)
    assert (reference.passed, reference.detail["decided_by"]) == (True, "alice")
    assert 'id="no-disagreements"' in admin.get(url).content.decode()
    agreement = admin.get("/p/acme/agreement/").content.decode()
    assert 'id="reviewer-agreement"' in agreement and "kappa" in agreement


def test_the_agreement_page_says_a_criterion_gates_only_a_dataset_whose_policy_names_it(actors):
    label_configs_for_criteria(project=actors.acme, criteria={"grounded": "Is it grounded?"})
    named = Dataset.objects.create(project=actors.acme, name="named")
    silent = Dataset.objects.create(project=actors.acme, name="silent")
    GatePolicy.objects.create(dataset=named, judge_min_kappa=None, scorers=["grounded"])
    GatePolicy.objects.create(dataset=silent, judge_min_kappa=None, scorers=[])
    page = _client(actors.victor).get("/p/acme/agreement/").content.decode()
    gating = page.split('<ul class="gating">', 1)[1].split("</ul>", 1)[0]
    named_row, silent_row = (gating.split(f"<li>{name}:", 1)[1].split("</li>", 1)[0] for name in ("named", "silent"))
    assert ">gates<" in named_row and "not among" not in named_row
    assert ">not named<" in silent_row and ">gates<" not in silent_row
    assert "only cases whose expectations name it are judged by it" in silent_row
