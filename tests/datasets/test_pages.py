"""The curation pages: access by role, capture, datasets, cases with their history, review queue."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from datasets.models import CaseRevision, Dataset, GoldenCase, Trace
from evalsite.models import Role
from evalsite.projects import membership_set
from scoring.models import Abstention, Score
from scoring.score_configs import score_configs_store
from tests.factories import trace_create

SPANS = [
    {"span_id": "agent", "kind": "agent", "name": "reservo", "started_at": "2026-11-30T10:00:00Z"},
    {
        "span_id": "tool-1",
        "parent_id": "agent",
        "kind": "tool",
        "name": "book_room",
        "input": {"room": "Focus", "tier": "pro", "hours": 3},
        "output": {"booking_id": "BK-0001"},
        "status": "error",
        "error": "room already booked",
        "latency_ms": 50,
        "started_at": "2026-11-30T10:00:01Z",
    },
]


def browser(user=None):
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def run(actors):
    return trace_create(
        actors.acme,
        "failed-run",
        input="¿Cuánto cuesta Focus pro 3 horas?",
        output="Reservé la sala Focus (BK-0001).",
        spans=SPANS,
    )


@pytest.fixture
def dataset(actors):
    return Dataset.objects.create(project=actors.acme, name="reservo")


def _capture(client, trace_id="failed-run", **fields):
    data = {"dataset": "reservo", "expected_output_format": "text", **fields}
    return client.post(f"/p/acme/runs/{trace_id}/", data)


# ------------------------------------------------------------------------ access


def test_pages_need_a_login(actors):
    response = browser().get("/p/acme/runs/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


@pytest.mark.parametrize(
    "path", ["/p/acme/", "/p/acme/runs/", "/p/acme/runs/failed-run/", "/p/acme/datasets/", "/p/acme/review/"]
)
def test_an_outsider_gets_404_on_every_page(actors, run, path):
    assert browser(actors.charlie).get(path).status_code == 404


def test_an_outsider_gets_404_for_a_dataset_and_a_case(actors, run, dataset):
    case = GoldenCase.objects.create(dataset=dataset, name="c")
    outsider = browser(actors.charlie)
    assert outsider.get("/p/acme/datasets/reservo/").status_code == 404
    assert outsider.get(f"/p/acme/cases/{case.pk}/").status_code == 404
    # Their own project's URL does not reach acme's case either.
    membership_set(user=actors.charlie, project=actors.umbrella, role=Role.ADMIN)
    assert outsider.get(f"/p/umbrella/cases/{case.pk}/").status_code == 404
    assert outsider.post(f"/p/umbrella/cases/{case.pk}/", {"action": "archive"}).status_code == 404
    assert GoldenCase.objects.get().status == "active"


def test_a_viewer_reads_but_sees_no_capture_form(actors, run, dataset):
    viewer = browser(actors.victor)
    page = viewer.get("/p/acme/runs/failed-run/")
    assert page.status_code == 200
    assert b"Capture this run" not in page.content
    assert b'name="trace_ids"' not in viewer.get("/p/acme/runs/").content


def test_a_viewer_posting_anyway_gets_403_and_nothing_is_written(actors, run, dataset):
    viewer = browser(actors.victor)
    assert _capture(viewer).status_code == 403
    assert viewer.post("/p/acme/runs/", {"trace_ids": ["failed-run"], "dataset": "reservo"}).status_code == 403
    assert viewer.post("/p/acme/datasets/", {"name": "mine"}).status_code == 403
    assert not GoldenCase.objects.exists()
    assert Dataset.objects.count() == 1


# ----------------------------------------------------------------------- capture


def test_a_reviewer_captures_a_run_without_taking_its_answer(actors, run, dataset):
    response = _capture(browser(actors.bob))
    assert response.status_code == 302
    case = GoldenCase.objects.get()
    assert case.source_trace_id == "failed-run"
    assert case.input == "¿Cuánto cuesta Focus pro 3 horas?"
    assert case.expected_output is None
    assert CaseRevision.objects.get(case=case).changed_by == actors.bob


def test_the_capture_box_is_unchecked_by_default(actors, run, dataset):
    page = browser(actors.bob).get("/p/acme/runs/failed-run/").content.decode()
    box = page[page.index('name="use_output_as_expected"') - 80 : page.index('name="use_output_as_expected"') + 80]
    assert "checked" not in box


def test_a_reviewer_captures_with_an_expected_answer_written_by_hand(actors, run, dataset):
    client = browser(actors.bob)
    _capture(client, name="quote_focus_pro_3h", expected_output="La sala Focus pro 3 h cuesta 75,00 EUR.")
    case = GoldenCase.objects.get()
    assert case.name == "quote_focus_pro_3h"
    assert case.expected_output == "La sala Focus pro 3 h cuesta 75,00 EUR."
    page = client.get("/p/acme/runs/failed-run/").content.decode()
    assert f"/p/acme/cases/{case.pk}/" in page


def test_the_expected_answer_may_be_json(actors, run, dataset):
    _capture(browser(actors.bob), expected_output='{"total_cents": 7500}', expected_output_format="json")
    assert GoldenCase.objects.get().expected_output == {"total_cents": 7500}


def test_use_output_as_expected_takes_the_runs_answer(actors, run, dataset):
    _capture(browser(actors.bob), use_output_as_expected="on")
    assert GoldenCase.objects.get().expected_output == "Reservé la sala Focus (BK-0001)."


def test_a_bad_expectation_is_shown_next_to_the_field_and_the_input_is_kept(actors, run, dataset):
    response = _capture(
        browser(actors.bob),
        expected_output="75,00 EUR",
        expectations='{"expected_tool": ["quote_room"]}',
        name="kept-name",
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="id_expectations-error"' in html
    assert "expected_tool: is not a known expectation; did you mean &#x27;expected_tools&#x27;?" in html
    assert "75,00 EUR</textarea>" in html
    assert 'value="kept-name"' in html
    assert not GoldenCase.objects.exists()


def test_expectations_that_are_not_json_are_named(actors, run, dataset):
    response = _capture(browser(actors.bob), expectations="{expected_tools: [}")
    assert response.status_code == 400
    assert 'id="id_expectations-error"' in response.content.decode()
    assert "is not valid JSON" in response.content.decode()


def test_capture_needs_a_dataset(actors, run, dataset):
    response = browser(actors.bob).post("/p/acme/runs/failed-run/", {"expected_output_format": "text"})
    assert response.status_code == 400
    assert 'id="id_dataset-error"' in response.content.decode()


def test_capture_into_a_new_dataset_creates_it(actors, run):
    _capture(browser(actors.bob), dataset="", new_dataset="smoke")
    assert GoldenCase.objects.get().dataset.name == "smoke"


def test_a_bad_new_dataset_name_is_named_and_nothing_is_created(actors, run):
    response = _capture(browser(actors.bob), dataset="", new_dataset="ends/cases")
    assert response.status_code == 400
    assert 'id="id_new_dataset-error"' in response.content.decode()
    assert not Dataset.objects.exists()


def test_capturing_twice_does_not_create_a_twin(actors, run, dataset):
    client = browser(actors.bob)
    _capture(client)
    response = _capture(client, expected_output="different")
    assert response.status_code == 302
    assert GoldenCase.objects.count() == 1
    messages = [m.message for m in client.get("/p/acme/runs/failed-run/").context["messages"]]
    assert any("Already a case in reservo, no twin created: failed-run (case failed-run)." in m for m in messages)


def test_several_runs_are_captured_in_one_step_from_the_list(actors, run, dataset):
    trace_create(actors.acme, "other-run")
    response = browser(actors.bob).post(
        "/p/acme/runs/", {"trace_ids": ["failed-run", "other-run"], "dataset": "reservo"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/p/acme/datasets/reservo/"
    assert sorted(GoldenCase.objects.values_list("source_trace_id", flat=True)) == ["failed-run", "other-run"]
    assert not GoldenCase.objects.filter(expected_output__isnull=False).exists()


def test_capturing_from_the_list_needs_a_ticked_run(actors, run, dataset):
    response = browser(actors.bob).post("/p/acme/runs/", {"dataset": "reservo"})
    assert response.status_code == 400
    assert "Tick at least one run" in response.content.decode()


# ---------------------------------------------------------------------- runs pages


def test_the_run_page_shows_the_span_tree_and_tool_calls(actors, run):
    html = browser(actors.victor).get("/p/acme/runs/failed-run/").content.decode()
    assert "book_room" in html
    assert "&quot;room&quot;: &quot;Focus&quot;" in html
    assert "BK-0001" in html
    assert "room already booked" in html
    assert "¿Cuánto cuesta Focus pro 3 horas?" in html


def test_the_run_page_shows_scores_and_abstentions(actors, run):
    Score.objects.create(
        project=actors.acme, trace=run, scorer="tool_choice", config_hash="x", value=0, passed=False,
        reason="expected ['quote_room'], called ['book_room']",
    )  # fmt: skip
    Abstention.objects.create(project=actors.acme, trace=run, scorer="tool_output", reason="target_tool_not_called")
    html = browser(actors.victor).get("/p/acme/runs/failed-run/").content.decode()
    assert "expected [&#x27;quote_room&#x27;], called [&#x27;book_room&#x27;]" in html
    assert "target_tool_not_called" in html


def test_the_run_page_tells_apart_one_scorer_scored_under_two_configs(actors, run):
    schema = {"type": "object", "required": ["room"]}
    for digest, config, passed in (("plain", {}, True), ("with-schema", {"schema": schema}, False)):
        score_configs_store(project_id=actors.acme.pk, configs={digest: json.dumps(config)})
        Score.objects.create(
            project=actors.acme, trace=run, scorer="json_valid", config_hash=digest, value=float(passed), passed=passed
        )
    html = browser(actors.victor).get("/p/acme/runs/failed-run/").content.decode()
    assert html.count(">json_valid") == 2
    assert "schema = {&quot;type&quot;: &quot;object&quot;, &quot;required&quot;: [&quot;room&quot;]}" in html
    assert html.count('class="help settings"') == 1  # the plain one has no settings to show


def test_a_run_id_with_slashes_has_a_page(actors):
    trace_create(actors.acme, "ci/main/42")
    assert browser(actors.victor).get("/p/acme/runs/ci/main/42/").status_code == 200


def test_an_unknown_run_is_404(actors):
    assert browser(actors.victor).get("/p/acme/runs/never-sent/").status_code == 404


def _listed(client, query=""):
    response = client.get("/p/acme/runs/" + query)
    assert response.status_code == 200
    return [r.trace_id for r in response.context["runs"]]


def test_the_runs_list_filters(actors):
    ok = trace_create(actors.acme, "ok-run", output="Focus booked", experiment="v1", started_at="2026-11-01T10:00:00Z")
    bad = trace_create(actors.acme, "bad-run", status="error", experiment="v2", started_at="2026-11-20T10:00:00Z")
    Score.objects.create(project=actors.acme, trace=bad, scorer="no_errors", config_hash="x", value=0, passed=False)
    Abstention.objects.create(project=actors.acme, trace=ok, scorer="exact_match", reason="not_configured")
    client = browser(actors.victor)
    assert _listed(client) == ["bad-run", "ok-run"]
    assert _listed(client, "?status=error") == ["bad-run"]
    assert _listed(client, "?experiment=v1") == ["ok-run"]
    assert _listed(client, "?text=booked") == ["ok-run"]
    assert _listed(client, "?since=2026-11-10T00:00") == ["bad-run"]
    assert _listed(client, "?until=2026-11-10T00:00") == ["ok-run"]
    assert _listed(client, "?failed=any") == ["bad-run"]
    assert _listed(client, "?failed=no_errors") == ["bad-run"]
    assert _listed(client, "?abstained=any") == ["ok-run"]
    assert "No run matches these filters" in client.get("/p/acme/runs/?failed=tool_choice").content.decode()


def test_the_runs_list_pages(actors):
    for i in range(55):
        trace_create(actors.acme, f"r{i:02d}", started_at=f"2026-11-30T10:{i:02d}:00Z")
    client = browser(actors.victor)
    first = client.get("/p/acme/runs/?status=ok")
    assert len(first.context["runs"]) == 50
    older = first.context["older"]
    assert "status=ok" in older
    second = client.get(older)
    assert [r.trace_id for r in second.context["runs"]] == [f"r{i:02d}" for i in range(4, -1, -1)]


def test_the_runs_list_costs_a_fixed_number_of_queries(actors, dataset):
    client = browser(actors.bob)
    trace_create(actors.acme, "r0")
    client.get("/p/acme/runs/")
    with CaptureQueriesContext(connection) as few:
        client.get("/p/acme/runs/?failed=any&abstained=any")
        client.get("/p/acme/runs/")
    for i in range(1, 25):
        trace = trace_create(actors.acme, f"r{i}", experiment=f"v{i}")
        Score.objects.create(
            project=actors.acme, trace=trace, scorer="answered", config_hash="x", value=0, passed=False
        )
        GoldenCase.objects.create(dataset=dataset, name=f"c{i}", source_trace_id=f"r{i}")
    with CaptureQueriesContext(connection) as many:
        client.get("/p/acme/runs/?failed=any&abstained=any")
        assert len(client.get("/p/acme/runs/").context["runs"]) == 25
    assert len(many) == len(few)


def test_the_runs_list_says_what_to_do_when_empty(actors):
    assert "POST /v1/api/traces" in browser(actors.victor).get("/p/acme/runs/").content.decode()


# ------------------------------------------------------------------ dataset pages


def test_a_reviewer_creates_a_dataset(actors):
    response = browser(actors.bob).post("/p/acme/datasets/", {"name": "reservo", "description": "Booking"})
    assert response.status_code == 302
    assert Dataset.objects.get().description == "Booking"


def test_the_form_trims_what_is_typed_around_a_name(actors):
    # The API refuses such a name; a form field drops the blanks typed around it.
    response = browser(actors.bob).post("/p/acme/datasets/", {"name": "  support/west \t"})
    assert response.status_code == 302
    assert Dataset.objects.get().name == "support/west"


def test_a_taken_dataset_name_is_shown_next_to_the_field(actors, dataset):
    response = browser(actors.bob).post("/p/acme/datasets/", {"name": "reservo"})
    assert response.status_code == 400
    assert 'id="id_name-error"' in response.content.decode()


def test_the_datasets_page_says_what_to_do_when_empty(actors):
    assert "No datasets yet" in browser(actors.bob).get("/p/acme/datasets/").content.decode()


def test_the_dataset_page_lists_cases_with_badges_and_source_runs(actors, run, dataset):
    client = browser(actors.bob)
    _capture(client)
    GoldenCase.objects.create(dataset=dataset, name="answered", expected_output="yes", source_trace_id="gone-run")
    html = client.get("/p/acme/datasets/reservo/").content.decode()
    assert "needs expected answer" in html
    assert "/p/acme/runs/failed-run/" in html
    assert "gone-run" in html and "(run deleted)" in html


def test_the_dataset_page_filters_by_status(actors, dataset):
    GoldenCase.objects.create(dataset=dataset, name="live")
    GoldenCase.objects.create(dataset=dataset, name="old", status="archived")
    client = browser(actors.victor)
    assert [c.name for c in client.get("/p/acme/datasets/reservo/").context["cases"]] == ["live"]
    assert [c.name for c in client.get("/p/acme/datasets/reservo/?status=archived").context["cases"]] == ["old"]
    assert len(client.get("/p/acme/datasets/reservo/?status=all").context["cases"]) == 2


def test_a_case_is_edited_and_the_revision_shows_what_changed(actors, run, dataset):
    client = browser(actors.bob)
    _capture(client)
    case = GoldenCase.objects.get()
    form = client.get(f"/p/acme/cases/{case.pk}/").context["form"].initial
    form.update(expected_output="75,00 EUR", expected_output_format="text", action="save")
    response = client.post(f"/p/acme/cases/{case.pk}/", form)
    assert response.status_code == 302, response.content
    case.refresh_from_db()
    assert (case.version, case.expected_output) == (2, "75,00 EUR")
    html = client.get(f"/p/acme/cases/{case.pk}/").content.decode()
    assert "v2" in html and "updated" in html and "bob" in html
    revision = case.revisions.get(version=2)
    assert revision.old == {"expected_output": None}


def test_an_edit_over_a_newer_version_is_refused_and_the_input_kept(actors, dataset):
    case = GoldenCase.objects.create(dataset=dataset, name="c", version=3)
    response = browser(actors.bob).post(
        f"/p/acme/cases/{case.pk}/",
        {"action": "save", "name": "c", "status": "active", "input_format": "text", "expected_output": "mine",
         "expected_output_format": "text", "version": "2"},
    )  # fmt: skip
    assert response.status_code == 400
    assert "mine</textarea>" in response.content.decode()
    assert "it is at version 3" in response.content.decode()
    assert GoldenCase.objects.get().expected_output is None


def test_a_case_is_archived_and_restored_from_its_page(actors, dataset):
    case = GoldenCase.objects.create(dataset=dataset, name="c")
    client = browser(actors.bob)
    client.post(f"/p/acme/cases/{case.pk}/", {"action": "archive"})
    case.refresh_from_db()
    assert case.status == "archived"
    client.post(f"/p/acme/cases/{case.pk}/", {"action": "restore"})
    case.refresh_from_db()
    assert (case.status, case.version) == ("active", 3)
    assert list(case.revisions.order_by("version").values_list("action", flat=True)) == ["archived", "restored"]


def test_a_viewer_cannot_edit_or_archive_a_case(actors, dataset):
    case = GoldenCase.objects.create(dataset=dataset, name="c")
    viewer = browser(actors.victor)
    assert b'id="case-form"' not in viewer.get(f"/p/acme/cases/{case.pk}/").content
    assert viewer.post(f"/p/acme/cases/{case.pk}/", {"action": "archive"}).status_code == 403
    assert viewer.post(f"/p/acme/cases/{case.pk}/", {"action": "save", "name": "x"}).status_code == 403
    assert GoldenCase.objects.get().status == "active"


def test_a_reviewer_writes_a_new_case(actors, dataset):
    response = browser(actors.bob).post(
        "/p/acme/datasets/reservo/cases/new/",
        {"name": "by_hand", "status": "draft", "input": "hola", "input_format": "text", "expected_output": "",
         "expected_output_format": "text", "expectations": '{"contains": "EUR"}'},
    )  # fmt: skip
    assert response.status_code == 302
    case = GoldenCase.objects.get()
    assert (case.status, case.input, case.expected_output, case.expectations) == (
        "draft", "hola", None, {"contains": "EUR"},
    )  # fmt: skip


def test_the_review_queue_lists_cases_needing_an_expected_answer(actors, dataset):
    GoldenCase.objects.create(dataset=dataset, name="todo")
    GoldenCase.objects.create(dataset=dataset, name="done", expected_output="x")
    GoldenCase.objects.create(dataset=dataset, name="shelved", status="archived")
    theirs = Dataset.objects.create(project=actors.umbrella, name="reservo")
    GoldenCase.objects.create(dataset=theirs, name="not-ours")
    assert [c.name for c in browser(actors.victor).get("/p/acme/review/").context["cases"]] == ["todo"]


def test_the_review_queue_says_when_there_is_nothing_to_do(actors):
    assert "Nothing to review" in browser(actors.victor).get("/p/acme/review/").content.decode()


def test_import_and_export_from_the_dataset_page(actors, dataset):
    client = browser(actors.bob)
    good = SimpleUploadedFile("cases.jsonl", b'{"name": "a", "input": "q"}\n{"name": "b"}\n')
    assert client.post("/p/acme/datasets/reservo/import/", {"file": good}).status_code == 302
    assert GoldenCase.objects.count() == 2
    export = client.get("/p/acme/datasets/reservo/export.jsonl")
    assert b"".join(export.streaming_content).count(b"\n") == 2

    bad = SimpleUploadedFile("cases.jsonl", b'{"name": "c"}\n{"name": "d", "status": "gone"}\n')
    response = client.post("/p/acme/datasets/reservo/import/", {"file": bad})
    assert response.status_code == 400
    assert "line 2: status must be one of" in response.content.decode()
    assert GoldenCase.objects.count() == 2


def test_a_viewer_cannot_import(actors, dataset):
    upload = SimpleUploadedFile("cases.jsonl", b'{"name": "a"}\n')
    assert browser(actors.victor).post("/p/acme/datasets/reservo/import/", {"file": upload}).status_code == 403
    assert not GoldenCase.objects.exists()


# ------------------------------------------------------------- home and switcher


def test_home_links_into_each_project(actors):
    html = browser(actors.bob).get("/").content.decode()
    assert 'href="/p/acme/runs/"' in html


def test_a_user_of_several_projects_switches_between_them(actors):
    membership_set(user=actors.alice, project=actors.umbrella, role=Role.VIEWER)
    client = browser(actors.alice)
    html = client.get("/p/acme/runs/").content.decode()
    assert 'action="/switch/"' in html and 'value="umbrella"' in html
    response = client.get("/switch/?project=umbrella")
    assert response["Location"] == "/p/umbrella/"
    assert client.get("/p/umbrella/").status_code == 302
    assert client.session["evalsite_project"] == "umbrella"
    # A project the user is not in leads home.
    assert browser(actors.bob).get("/switch/?project=umbrella")["Location"] == "/"


def test_a_user_of_one_project_sees_no_switcher(actors):
    assert 'action="/switch/"' not in browser(actors.bob).get("/p/acme/runs/").content.decode()


def test_deleting_a_run_keeps_its_cases(actors, run, dataset):
    _capture(browser(actors.bob))
    Trace.objects.filter(pk=run.pk).delete()
    case = GoldenCase.objects.get()
    assert case.source_trace_id == "failed-run"
    assert "(the run has been deleted" in browser(actors.bob).get(f"/p/acme/cases/{case.pk}/").content.decode()


def test_a_broken_page_link_is_a_400_not_an_error(actors):
    assert browser(actors.victor).get("/p/acme/runs/?cursor=not-a-cursor").status_code == 400
    assert browser(actors.victor).get("/p/acme/datasets/res%00ervo/").status_code == 400
