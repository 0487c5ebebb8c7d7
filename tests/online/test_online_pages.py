"""The online rules page: members watch each rule, admins create, pause and resume."""

from django.test import Client

from online.models import OnlineRule
from online.rules import rule_tick
from tests.factories import trace_create

PAGE = "/p/acme/online-rules/"


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def test_an_admin_creates_a_rule_and_everyone_watches_its_counts(actors):
    alice = _client(actors.alice)
    form = {"name": "refills", "scorers": "no_errors", "sample_rate": "1", "experiment": "none", "tags": "prod"}
    assert alice.post(PAGE, form).status_code == 302
    rule = OnlineRule.objects.get()
    assert (rule.filter, rule.scorers) == ({"experiment": "none", "tags": ["prod"]}, ["no_errors"])
    trace_create(actors.acme, "r-1", tags=["prod"])
    rule_tick(rule_id=rule.pk)
    page = _client(actors.victor).get(PAGE).content.decode()
    row = page.split('data-rule="refills"')[1].split("</tr>")[0]
    assert "experiment=none" in row and "tags=[&#x27;prod&#x27;]" in row and "<td>1</td><td>1</td>" in row
    assert 'id="rule-form"' not in page  # viewers read


def test_a_bad_scorer_comes_back_next_to_its_field_and_nothing_is_made(actors):
    response = _client(actors.alice).post(PAGE, {"name": "x", "scorers": "nope", "sample_rate": "0.5"})
    assert response.status_code == 400
    assert "item 1: Unknown scorer: nope." in response.content.decode()
    assert not OnlineRule.objects.exists()


def test_pausing_takes_an_admin(actors):
    _client(actors.alice).post(PAGE, {"name": "x", "scorers": "no_errors", "sample_rate": "1"})
    rule = OnlineRule.objects.get()
    assert _client(actors.bob).post(f"{PAGE}{rule.pk}/pause/").status_code == 403
    assert _client(actors.alice).post(f"{PAGE}{rule.pk}/pause/").status_code == 302
    assert OnlineRule.objects.get().paused
