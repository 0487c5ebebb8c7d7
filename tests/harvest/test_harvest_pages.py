"""Harvest's pages: the groups list, a group, capture of a representative, the group as a queue, coverage."""

from django.test import Client

from datasets.models import Dataset, GoldenCase, Trace
from harvest.models import FailureGroup
from harvest.services import groups_build
from scoring.models import QueueFilter
from tests.harvest.traffic import traffic_create


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def _built(actors):
    planted = traffic_create(actors.acme)
    groups_build(project_id=actors.acme.pk)
    return planted


def _group_of(planted, mode):
    return FailureGroup.objects.get(members__trace__trace_id=planted[mode][0])


def test_a_viewer_reads_the_groups_biggest_first_with_uncovered_marked(actors):
    _built(actors)
    page = _client(actors.victor).get("/p/acme/harvest/?window=7d").content.decode()
    assert page.count('<td><span class="badge fail">uncovered</span></td>') == 6
    assert page.index("<td>120</td>") < page.index("<td>60</td>") < page.index("<td>12</td>")
    assert 'href="/p/acme/harvest/"' in page  # in the navigation


def test_the_list_filters_by_failed_check(actors):
    _built(actors)
    page = _client(actors.victor).get("/p/acme/harvest/?window=7d&scorer=json_valid").content.decode()
    assert page.count("data-group=") == 1 and "<td>45</td>" in page


def test_a_group_page_shows_its_reasons_and_representatives(actors):
    planted = _built(actors)
    group = _group_of(planted, "bad_json")
    page = _client(actors.victor).get(f"/p/acme/harvest/{group.pk}/").content.decode()
    assert "the answer is not JSON" in page
    assert page.count('<li><a href="/p/acme/runs/bad_json-') == 3
    assert "capture-form" not in page  # a viewer reads only


def test_a_reviewer_captures_a_representative_with_the_corrected_answer(actors):
    planted = _built(actors)
    group = _group_of(planted, "bad_json")
    Dataset.objects.create(project=actors.acme, name="golden")
    trace_id = Trace.objects.get(pk=group.representatives[0]).trace_id
    response = _client(actors.bob).post(
        f"/p/acme/harvest/{group.pk}/",
        {"trace_id": trace_id, "dataset": "golden", "expected_output": '{"invoices": []}',
         "expected_output_format": "text"},
    )  # fmt: skip
    assert response.status_code == 302
    case = GoldenCase.objects.get(dataset__name="golden")
    assert case.source_trace_id == trace_id and case.expected_output == '{"invoices": []}'
    page = _client(actors.victor).get("/p/acme/harvest/").content.decode()
    assert page.count('<td><span class="badge pass">covered</span></td>') == 1


def test_the_answer_of_a_failing_run_is_not_taken_as_expected(actors):
    planted = _built(actors)
    group = _group_of(planted, "bad_json")
    Dataset.objects.create(project=actors.acme, name="golden")
    response = _client(actors.bob).post(
        f"/p/acme/harvest/{group.pk}/",
        {"trace_id": planted["bad_json"][0], "dataset": "golden", "use_output_as_expected": "on",
         "expected_output_format": "text"},
    )  # fmt: skip
    assert response.status_code == 400
    assert "failed json_valid" in response.content.decode()
    assert not GoldenCase.objects.exists()


def test_a_viewer_cannot_capture(actors):
    planted = _built(actors)
    group = _group_of(planted, "bad_json")
    response = _client(actors.victor).post(f"/p/acme/harvest/{group.pk}/", {"trace_id": planted["bad_json"][0]})
    assert response.status_code == 403


def test_a_reviewer_opens_the_group_as_a_queue(actors):
    planted = _built(actors)
    group = _group_of(planted, "timeouts")
    response = _client(actors.bob).post(f"/p/acme/harvest/{group.pk}/queue/?window=7d")
    queue = QueueFilter.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/p/acme/queue/{queue.pk}/"
    assert len(queue.runs) == 12


def test_an_outsider_gets_404_for_a_group_page(actors):
    planted = _built(actors)
    group = _group_of(planted, "timeouts")
    assert _client(actors.charlie).get(f"/p/acme/harvest/{group.pk}/").status_code == 404


def test_the_dataset_page_shows_coverage_and_the_biggest_uncovered_groups(actors):
    _built(actors)
    Dataset.objects.create(project=actors.acme, name="golden")
    page = _client(actors.victor).get("/p/acme/datasets/golden/").content.decode()
    assert "<strong>0%</strong> of the 287 failing production runs" in page
    assert "The biggest uncovered groups" in page
