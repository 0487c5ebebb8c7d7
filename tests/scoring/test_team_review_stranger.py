"""A team of three reviewers labels 60 runs of a recipe-substitution assistant, blind, through the pages.

Mireille and Keziah agree on every run; Tomasz labels ten of them the other way on
purpose. The agreement the page and the API show must be Krippendorff's alpha computed
by hand below, and exactly those ten runs must wait in adjudication.
"""

import pytest
from django.test import Client

from evalsite.models import Role
from evalsite.projects import membership_set
from scoring.labels import label_config_create
from tests.base import user_create
from tests.factories import trace_create

INGREDIENTS = ["butter", "eggs", "buttermilk", "cream", "honey", "yeast", "flour", "sugar", "milk", "rice vinegar"]
RUNS = 60
# Runs where Tomasz disagrees: five the others find safe, five they find unsafe.
FLIPPED = {1, 2, 4, 5, 7} | {0, 3, 6, 9, 12}


def _safe(i):
    """Mireille's and Keziah's label of run i: 40 substitutions safe, 20 not (every third)."""
    return i % 3 != 0


def _hand_alpha():
    # 60 units of 3 values: n = 180. Tomasz flips five true to false and five false to true, so
    # the values still count 120 true and 60 false. Each flipped unit (x, x, y) adds 1 to o_xy and
    # to o_yx (pairs within a unit weigh 1/(m_u - 1) = 1/2): disagreeing coincidences 10 * 2 = 20.
    # Nominal alpha = 1 - (n - 1) * sum(o_ck, c != k) / sum(n_c * n_k, c != k)
    #               = 1 - 179 * 20 / (2 * 120 * 60) = 1 - 3580 / 14400.
    return 1 - 3580 / 14400


def _client(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def kitchen(actors):
    team = [user_create(name) for name in ("mireille", "tomasz", "keziah")]
    for user in team:
        membership_set(user=user, project=actors.acme, role=Role.REVIEWER)
    config = label_config_create(
        project=actors.acme, data={"name": "substitution_safe", "description": "Would the dish still work?"}
    )
    for i in range(RUNS):
        missing = INGREDIENTS[i % len(INGREDIENTS)]
        trace_create(
            actors.acme, f"sub-{i:02d}", input=f"I have no {missing} for recipe {i}; what can I use?",
            output=f"Use the substitute #{i} for {missing}.",
        )  # fmt: skip
    created = _client(actors.alice).post(
        "/p/acme/queue/",
        {"name": "substitutions", "kind": "runs", "reviewers_per_item": "3", "blind": "on",
         "assignees": ["mireille", "tomasz", "keziah"]},
    )  # fmt: skip
    assert created.status_code == 302
    return actors, team, config, actors.acme.queue_filters.get(name="substitutions")


def _work_the_queue(user, queue, config, label_of):
    """The reviewer takes items until the queue has none left for them; returns how many they labelled."""
    client, done = _client(user), 0
    while True:
        response = client.get(f"/p/acme/queue/{queue.pk}/")
        if response.status_code == 200:
            assert "Nothing left for you" in response.content.decode()
            return done
        item_url = response["Location"]
        page = client.get(item_url).content.decode()
        trace_id = page.split("<code>", 1)[1].split("</code>", 1)[0]
        assert 'id="blind-note"' in page and "No labels yet." in page, "blind: nobody else's label is shown"
        value = label_of(int(trace_id.split("-")[1]))
        posted = client.post(item_url, {"action": "label", f"config_{config.pk}": "true" if value else "false"})
        assert posted.status_code == 302
        done += 1


def test_three_reviewers_blind_their_agreement_and_the_ten_disagreements(kitchen):
    actors, (mireille, tomasz, keziah), config, queue = kitchen
    assert _work_the_queue(mireille, queue, config, _safe) == RUNS
    assert _work_the_queue(tomasz, queue, config, lambda i: _safe(i) != (i in FLIPPED)) == RUNS
    assert _work_the_queue(keziah, queue, config, _safe) == RUNS
    figure = actors.api().get(f"/v1/api/queues/{queue.pk}/agreement").json()["labels"]
    assert [(f["config"], f["method"], f["items"], f["reviewers"]) for f in figure] == [
        ("substitution_safe", "alpha-nominal", RUNS, 3)
    ]
    assert figure[0]["value"] == pytest.approx(_hand_alpha(), abs=1e-12)
    page = _client(actors.alice).get(f"/p/acme/queue/{queue.pk}/adjudication/").content.decode()
    assert f"{_hand_alpha():.3f}" in page  # 0.751
    assert f'<span id="disagreement-count">{len(FLIPPED)}</span>' in page
    waiting = actors.api().get(f"/v1/api/queues/{queue.pk}/adjudications").json()["results"]
    assert sorted(d["trace_id"] for d in waiting) == sorted(f"sub-{i:02d}" for i in FLIPPED)
    assert all({g["author"] for g in d["labels"]} == {"mireille", "tomasz", "keziah"} for d in waiting)
    progress = actors.api().get(f"/v1/api/queues/{queue.pk}").json()["progress"]
    assert progress == {"done": RUNS, "total": RUNS}
