"""The queue, labels and agreement pages over HTTP: who may label (viewers get 403), what is shown, outsiders 404."""

import pytest
from django.test import Client

from datasets.models import Dataset, GoldenCase
from gating.models import GatePolicy
from scoring.labels import label_config_create, label_configs_for_criteria, label_write
from scoring.models import QueueItem, Score, ScoreSource
from scoring.review.queue import queue_filter_create
from tests.factories import trace_create
from web.pages.diffs import value_diff, word_diff
from web.pages.label_forms import LabelForm


def _client(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def acme(actors):
    label_config_create(project=actors.acme, data={"name": "helpful", "description": "Did it help?"})
    label_config_create(
        project=actors.acme, data={"name": "tone", "kind": "categorical", "options": ["rude", "neutral", "warm"]}
    )
    for i in (1, 2, 3):
        trace_create(actors.acme, f"r{i}", output=f"answer {i}")
    actors.queue = queue_filter_create(project=actors.acme, data={"name": "all"})
    return actors


def _item_url(actors, trace_id):
    pk = actors.acme.traces.get(trace_id=trace_id).pk
    return f"/p/acme/queue/{actors.queue.pk}/items/{pk}/"


def test_a_reviewer_is_sent_to_the_next_run_labels_it_and_moves_on(acme):
    bob = _client(acme.bob)
    response = bob.get(f"/p/acme/queue/{acme.queue.pk}/")
    assert response.status_code == 302 and response["Location"] == _item_url(acme, "r1")
    page = bob.get(response["Location"]).content.decode()
    assert "1 of 3" in page and "answer 1" in page and "quote_room" in page
    config = acme.acme.label_configs.get(name="helpful")
    posted = bob.post(_item_url(acme, "r1"), {"action": "label", f"config_{config.pk}": "false", "comment": "wrong"})
    assert posted.status_code == 302
    label = Score.objects.get(source=ScoreSource.HUMAN)
    assert (label.trace.trace_id, label.passed, label.detail["author"], label.reason) == ("r1", False, "bob", "wrong")
    assert bob.get(f"/p/acme/queue/{acme.queue.pk}/")["Location"] == _item_url(acme, "r2")
    assert "2 of 3" in bob.get(_item_url(acme, "r2")).content.decode()


def test_a_label_with_no_value_chosen_is_refused_and_nothing_is_written(acme):
    response = _client(acme.bob).post(_item_url(acme, "r1"), {"action": "label", "comment": "hm"})
    assert response.status_code == 400
    assert "Choose a value for at least one label" in response.content.decode()
    assert not Score.objects.filter(source=ScoreSource.HUMAN).exists()
    assert not QueueItem.objects.filter(done=True).exists()


def test_a_viewer_reads_the_queue_but_cannot_label_skip_or_save_a_queue(acme):
    victor = _client(acme.victor)
    response = victor.get(f"/p/acme/queue/{acme.queue.pk}/")
    assert response.status_code == 302
    page = victor.get(response["Location"]).content.decode()
    assert "can read the queue but not label" in page and 'id="label-form"' not in page
    assert not QueueItem.objects.exists(), "a viewer's visit claims nothing"
    config = acme.acme.label_configs.get(name="helpful")
    assert victor.post(_item_url(acme, "r1"), {"action": "label", f"config_{config.pk}": "true"}).status_code == 403
    assert victor.post(_item_url(acme, "r1"), {"action": "skip"}).status_code == 403
    assert victor.post("/p/acme/queue/", {"name": "mine", "kind": "runs"}).status_code == 403
    assert victor.post("/p/acme/runs/r1/", {"action": "label", f"config_{config.pk}": "true"}).status_code == 403
    assert not Score.objects.filter(source=ScoreSource.HUMAN).exists()


def test_an_outsider_gets_404_on_every_queue_and_labels_page(acme):
    charlie = _client(acme.charlie)
    for url in ("/p/acme/queue/", f"/p/acme/queue/{acme.queue.pk}/", _item_url(acme, "r1"), "/p/acme/labels/",
                "/p/acme/agreement/"):  # fmt: skip
        assert charlie.get(url).status_code == 404, url
    other = queue_filter_create(project=acme.umbrella, data={"name": "theirs"})
    assert _client(acme.alice).get(f"/p/acme/queue/{other.pk}/").status_code == 404


def test_a_run_held_by_another_reviewer_cannot_be_labelled_by_a_second_one(acme):
    _client(acme.bob).get(f"/p/acme/queue/{acme.queue.pk}/")
    alice = _client(acme.alice)
    assert alice.get(f"/p/acme/queue/{acme.queue.pk}/")["Location"] == _item_url(acme, "r2")
    page = alice.get(_item_url(acme, "r1")).content.decode()
    assert "bob is working on this item" in page and 'id="label-form"' not in page
    config = acme.acme.label_configs.get(name="helpful")
    alice.post(_item_url(acme, "r1"), {"action": "label", f"config_{config.pk}": "true"})
    assert not Score.objects.filter(source=ScoreSource.HUMAN).exists()


def test_the_expected_answer_is_shown_beside_the_answer_word_by_word(acme):
    dataset = Dataset.objects.create(project=acme.acme, name="reservo")
    case = GoldenCase.objects.create(dataset=dataset, name="quote", input="q", expected_output="costs 75,00 EUR")
    trace_create(acme.acme, "r4", output="costs 80,00 EUR", case=case.pk)
    page = _client(acme.bob).get(_item_url(acme, "r4")).content.decode()
    assert "<del>75,00</del>" in page and "<ins>80,00</ins>" in page


def test_the_run_page_shows_labels_as_tags_and_takes_a_label(acme):
    bob = _client(acme.bob)
    config = acme.acme.label_configs.get(name="tone")
    assert bob.post("/p/acme/runs/r1/", {"action": "label", f"config_{config.pk}": "warm"}).status_code == 302
    page = bob.get("/p/acme/runs/r1/").content.decode()
    assert 'id="run-label-tags"' in page and "tone: warm" in page


def test_the_labels_page_filters_by_author(acme):
    helpful = acme.acme.label_configs.get(name="helpful")
    r1, r2 = acme.acme.traces.get(trace_id="r1"), acme.acme.traces.get(trace_id="r2")
    label_write(project=acme.acme, trace=r1, config=helpful, value=True, author={"name": "bob", "by": "user"})
    label_write(project=acme.acme, trace=r2, config=helpful, value=False, author={"name": "app", "by": "key"})
    victor = _client(acme.victor)
    page = victor.get("/p/acme/labels/?author=bob").content.decode()
    assert ">r1<" in page and ">r2<" not in page
    page = victor.get("/p/acme/labels/?config=helpful").content.decode()
    assert ">r1<" in page and ">r2<" in page


def test_the_agreement_page_says_whether_the_judge_gates_and_opens_the_disagreements(acme):
    label_configs_for_criteria(project=acme.acme, criteria={"relevant": "Is it relevant?"})
    config = acme.acme.label_configs.get(name="relevant")
    dataset = Dataset.objects.create(project=acme.acme, name="reservo")
    GatePolicy.objects.create(dataset=dataset, judge_min_kappa=0.6, judge_min_labels=30)
    for trace, judge, human in zip(
        acme.acme.traces.order_by("id"), (True, True, False), (True, False, False), strict=True
    ):
        Score.objects.create(project=acme.acme, trace=trace, scorer="relevant", scorer_version="m", value=float(judge),
                             passed=judge, reason=f"judge on {trace.trace_id}", source=ScoreSource.JUDGE,
                             run_revision=trace.revision)  # fmt: skip
        label_write(project=acme.acme, trace=trace, config=config, value=human, author={"name": "bob", "by": "user"})
    page = _client(acme.victor).get("/p/acme/agreement/").content.decode()
    assert 'class="agreement-n">3<' in page and "advisory" in page and "on 3 labels (needs 0.60 on 30)" in page
    assert "judge on r2" in page and "judge on r1" not in page
    response = _client(acme.bob).post("/p/acme/agreement/", {"criterion": "relevant"})
    assert response.status_code == 302
    item = _client(acme.bob).get(response["Location"])
    assert item["Location"].endswith(f"/items/{acme.acme.traces.get(trace_id='r2').pk}/")


def test_the_review_page_opens_its_cases_in_the_queue_by_dataset(acme):
    a = Dataset.objects.create(project=acme.acme, name="a")
    b = Dataset.objects.create(project=acme.acme, name="b")
    GoldenCase.objects.create(dataset=a, name="in_a", input="q")
    case_b = GoldenCase.objects.create(dataset=b, name="in_b", input="q")
    bob = _client(acme.bob)
    page = bob.get("/p/acme/review/?dataset=b").content.decode()
    assert "in_b" in page and "in_a" not in page
    queue = bob.post("/p/acme/review/", {"dataset": "b"})["Location"]
    assert bob.get(queue)["Location"].endswith(f"/items/{case_b.pk}/")
    posted = bob.post(bob.get(queue)["Location"], {"action": "expected", "expected_output": "75,00 EUR",
                                                  "expected_output_format": "text", "version": 1})  # fmt: skip
    assert posted.status_code == 302
    case_b.refresh_from_db()
    assert case_b.expected_output == "75,00 EUR"
    assert "Nothing left" in bob.get(queue).content.decode()


def test_the_runs_list_filters_on_a_label(acme):
    helpful = acme.acme.label_configs.get(name="helpful")
    r2 = acme.acme.traces.get(trace_id="r2")
    label_write(project=acme.acme, trace=r2, config=helpful, value=False, author={"name": "bob", "by": "user"})
    page = _client(acme.victor).get("/p/acme/runs/?label=helpful:false").content.decode()
    assert "/p/acme/runs/r2/" in page and "/p/acme/runs/r1/" not in page


def test_a_run_outside_the_queues_filter_is_not_one_of_its_items(acme):
    queue = queue_filter_create(project=acme.acme, data={"name": "failed", "failed_scorer": "any"})
    pk = acme.acme.traces.get(trace_id="r1").pk
    assert _client(acme.bob).get(f"/p/acme/queue/{queue.pk}/items/{pk}/").status_code == 404
    assert not QueueItem.objects.filter(queue=queue).exists()


def test_text_differs_by_words_and_json_objects_by_keys():
    assert word_diff("costs 75,00 EUR", "costs 80,00 EUR") == [
        ("equal", "costs "), ("delete", "75,00"), ("insert", "80,00"), ("equal", " EUR"),
    ]  # fmt: skip
    kind, rows = value_diff('{"room": "Focus", "hours": 3}', {"room": "Focus", "hours": 2, "tier": "pro"})
    assert kind == "keys"
    assert [(r["key"], r["state"]) for r in rows] == [("hours", "changed"), ("room", "same"), ("tier", "extra")]
    assert value_diff("[1, 2]", "[1, 3]")[0] == "words"


def test_a_small_numeric_range_is_one_choice_per_step(acme):
    quality = label_config_create(
        project=acme.acme, data={"name": "quality", "kind": "numeric", "minimum": 1, "maximum": 5}
    )
    wide = label_config_create(project=acme.acme, data={"name": "score", "kind": "numeric", "minimum": 0, "maximum": 1})
    form = LabelForm({f"config_{quality.pk}": "4", f"config_{wide.pk}": "0.25"}, configs=[quality, wide])
    assert form.is_valid(), form.errors
    assert [(c.name, v) for c, v in form.values()] == [("quality", 4), ("score", 0.25)]
    assert [c[1] for c in form.fields[f"config_{quality.pk}"].choices] == ["1", "2", "3", "4", "5"]


def test_an_admin_defines_and_archives_a_label_config_on_the_labels_page(acme):
    alice = _client(acme.alice)
    body = {"action": "create", "name": "stars", "kind": "numeric", "minimum": "1", "maximum": "5", "options": ""}
    assert alice.post("/p/acme/labels/", body).status_code == 302
    stars = acme.acme.label_configs.get(name="stars")
    assert (stars.kind, stars.minimum, stars.maximum, stars.pass_threshold) == ("numeric", 1, 5, 3)
    bad = alice.post("/p/acme/labels/", {"action": "create", "name": "mood", "kind": "categorical", "options": "x"})
    assert bad.status_code == 400 and "at least two categories" in bad.content.decode()
    assert alice.post("/p/acme/labels/", {"action": "archive", "config": "stars"}).status_code == 302
    assert acme.acme.label_configs.get(name="stars").archived
    assert _client(acme.bob).post("/p/acme/labels/", {"action": "create", "name": "x"}).status_code == 403
    assert not acme.acme.label_configs.filter(name__in=["mood", "x"]).exists()
