"""JSONL export and import of a dataset's cases."""

import json
from pathlib import Path

import pytest

from datasets.models import CaseRevision, GoldenCase
from tests.factories import trace_create

GOLDEN_SET = Path(__file__).resolve().parents[2] / "examples" / "reservo" / "golden_cases.jsonl"
KEYS = ["name", "input", "expected_output", "expectations", "status", "notes", "metadata", "source_trace_id"]


@pytest.fixture
def api(actors):
    client = actors.api()
    for name in ("reservo", "copy"):
        assert client.post("/v1/api/datasets", {"name": name}, format="json").status_code == 201
    return client


def _import(api, text, dataset="reservo"):
    return api.post(f"/v1/api/datasets/{dataset}/import", data=text.encode(), content_type="application/jsonl")


def _export(api, dataset="reservo", query="format=jsonl"):
    response = api.get(f"/v1/api/datasets/{dataset}/export?{query}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/jsonl"
    return b"".join(response.streaming_content).decode()


def _lines(*cases):
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)


def _errors(response):
    return [(e["line"], e["field"]) for e in response.json()["errors"]]


def test_the_example_golden_set_imports(api):
    response = _import(api, GOLDEN_SET.read_text())
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["created"] == 5
    assert [c["line"] for c in body["cases"]] == [1, 2, 3, 4, 5]
    case = GoldenCase.objects.get(name="quote_focus_pro_3h")
    assert case.expectations["target_tool"] == "quote_room"
    assert case.metadata["model_script"][0]["stop_reason"] == "tool_use"
    assert CaseRevision.objects.filter(action="created").count() == 5


def test_export_writes_one_case_per_line_with_exactly_the_known_keys(api, actors):
    trace_create(actors.acme, "run-1")
    api.post("/v1/api/datasets/reservo/cases/from-traces", {"trace_ids": ["run-1"]}, format="json")
    lines = _export(api).splitlines()
    assert len(lines) == 1
    row = json.loads(lines[0])
    assert list(row) == KEYS
    assert row["source_trace_id"] == "run-1"
    response = api.get("/v1/api/datasets/reservo/export?format=jsonl")
    assert "reservo.jsonl" in response["Content-Disposition"]


def test_export_then_import_into_an_empty_dataset_reproduces_the_cases(api, actors):
    trace_create(actors.acme, "run-1")
    _import(api, GOLDEN_SET.read_text())
    api.post("/v1/api/datasets/reservo/cases/from-traces", {"trace_ids": ["run-1"]}, format="json")
    api.post(
        "/v1/api/datasets/reservo/cases",
        {"name": "odd", "input": {"q": [1, 2.5, None]}, "expected_output": False, "status": "draft", "notes": "n"},
        format="json",
    )
    archived = api.post("/v1/api/datasets/reservo/cases", {"name": "gone"}, format="json").json()
    api.delete(f"/v1/api/cases/{archived['id']}")

    exported = _export(api)
    response = _import(api, exported, dataset="copy")
    assert response.status_code == 201, response.content

    def cases(dataset):
        return list(GoldenCase.objects.filter(dataset__name=dataset).order_by("id").values(*KEYS))

    assert cases("copy") == cases("reservo")
    assert len(cases("copy")) == 8
    assert _export(api, dataset="copy") == exported


def test_export_can_keep_only_one_status(api):
    _import(api, _lines({"name": "a"}, {"name": "b", "status": "archived"}))
    assert [json.loads(x)["name"] for x in _export(api, query="format=jsonl&status=active").splitlines()] == ["a"]


def test_export_refuses_another_format(api):
    response = api.get("/v1/api/datasets/reservo/export?format=csv")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "format"


def test_a_bad_line_is_a_400_naming_its_line_and_field_and_nothing_is_written(api):
    text = (
        _lines({"name": "ok"}, {"name": "bad", "expectations": {"tool_match": "exactly"}})
        + "\n"
        + _lines({"name": "typo", "expected": "x"})
    )
    response = _import(api, text)
    assert response.status_code == 400
    assert _errors(response) == [(2, "expectations.tool_match"), (4, "expected")]
    assert response.json()["errors"][0]["message"].startswith("line 2: expectations.tool_match")
    assert not GoldenCase.objects.exists()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"name": "a"}\n{"name": "b",\n', [(2, None)]),
        ('{"name": "a"}\n["b"]\n', [(2, None)]),
        ('{"input": "no name"}\n', [(1, "name")]),
        ('{"name": "a"}\n{"name": "a"}\n', [(2, "name")]),
        ('{"name": "a", "source_trace_id": "r"}\n{"name": "b", "source_trace_id": "r"}\n', [(2, "source_trace_id")]),
        ('{"name": "a", "status": "retired"}\n', [(1, "status")]),
        ("\n\n", [(None, None)]),
    ],
)
def test_it_reports_each_kind_of_bad_line(api, text, expected):
    response = _import(api, text)
    assert response.status_code == 400
    assert _errors(response) == expected
    assert not GoldenCase.objects.exists()


def test_a_line_that_is_not_utf8_is_named(api):
    response = api.post(
        "/v1/api/datasets/reservo/import", data=b'{"name": "a"}\n{"name": "\xff"}\n', content_type="application/jsonl"
    )
    assert response.status_code == 400
    assert _errors(response) == [(2, None)]


def test_reimporting_a_name_updates_that_case_with_a_revision(api):
    _import(api, _lines({"name": "a", "input": "q", "notes": "old"}, {"name": "b"}))
    response = _import(api, _lines({"name": "a", "input": "q", "expected_output": "yes"}, {"name": "c"}))
    assert response.status_code == 201
    body = response.json()
    assert (body["created"], body["updated"], body["unchanged"]) == (1, 1, 0)
    a = GoldenCase.objects.get(name="a")
    assert (a.version, a.expected_output, a.notes) == (2, "yes", "")
    revision = a.revisions.get(version=2)
    assert revision.action == "updated"
    assert revision.old == {"expected_output": None, "notes": "old"}
    # A case the file does not mention is left alone.
    assert GoldenCase.objects.get(name="b").status == "active"


def test_reimporting_the_same_file_changes_nothing(api):
    text = GOLDEN_SET.read_text()
    _import(api, text)
    response = _import(api, text)
    assert response.status_code == 200
    assert response.json()["unchanged"] == 5
    assert CaseRevision.objects.count() == 5


def test_an_import_that_archives_a_case_records_it_as_archived(api):
    _import(api, _lines({"name": "a"}))
    _import(api, _lines({"name": "a", "status": "archived"}))
    assert GoldenCase.objects.get(name="a").revisions.get(version=2).action == "archived"


def test_a_line_that_changes_where_a_case_came_from_is_a_409(api, actors):
    trace_create(actors.acme, "r1")
    api.post("/v1/api/datasets/reservo/cases/from-traces", {"trace_ids": ["r1"], "name": "a"}, format="json")
    response = _import(api, _lines({"name": "b"}, {"name": "a", "source_trace_id": "r2"}))
    assert response.status_code == 409
    assert _errors(response) == [(2, "source_trace_id")]
    response = _import(api, _lines({"name": "c", "source_trace_id": "r1"}))
    assert response.status_code == 409
    assert _errors(response) == [(1, "source_trace_id")]
    assert list(GoldenCase.objects.values_list("name", flat=True)) == ["a"]


def test_imported_cases_link_runs_that_exist(api, actors):
    trace_create(actors.acme, "r1")
    _import(api, _lines({"name": "a", "source_trace_id": "r1"}, {"name": "b", "source_trace_id": "not-stored"}))
    assert GoldenCase.objects.get(name="a").source_run.trace_id == "r1"
    b = GoldenCase.objects.get(name="b")
    assert (b.source_trace_id, b.source_run_id) == ("not-stored", None)


def test_an_outsider_gets_404_for_export_and_import(api, actors):
    _import(api, _lines({"name": "a"}))
    outsider = actors.outsider_api()
    assert outsider.get("/v1/api/datasets/reservo/export?format=jsonl").status_code == 404
    response = outsider.post(
        "/v1/api/datasets/reservo/import", data=b'{"name": "x"}\n', content_type="application/jsonl"
    )
    assert response.status_code == 404
    assert list(GoldenCase.objects.values_list("name", flat=True)) == ["a"]


def test_a_large_file_imports_and_reimports_in_one_piece(api):
    text = _lines(*({"name": f"case-{i:04d}", "input": f"q{i}", "source_trace_id": f"r{i}"} for i in range(1100)))
    assert _import(api, text).json()["created"] == 1100
    changed = _lines(*({"name": f"case-{i:04d}", "input": f"q{i}", "notes": "checked"} for i in range(1100)))
    body = _import(api, changed).json()
    assert (body["created"], body["updated"]) == (0, 1100)
    assert GoldenCase.objects.filter(notes="checked", source_trace_id__startswith="r").count() == 1100


def test_a_line_with_a_nul_character_is_named(api):
    response = _import(api, _lines({"name": "a"}, {"name": "b", "input": "x\u0000y"}))
    assert response.status_code == 400
    assert _errors(response) == [(2, "input")]
