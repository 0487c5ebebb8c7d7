"""A project exported to a zip of JSONL and imported as another: the same counts, the same gate."""

import io
import zipfile

import orjson
import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from datasets.models import Dataset, Experiment, GoldenCase, Span, Trace
from evalsite.errors import Invalid
from evalsite.models import Project
from gating.evaluation import gate_request
from gating.models import GatePolicy
from lifecycle.archive import project_export, project_import
from lifecycle.exports import export_run
from lifecycle.models import ProjectExport
from scoring.models import Score
from tests.factories import run_payload

CASES = ["quote_a", "quote_b", "quote_c"]


def _counts(project):
    return {
        "datasets": Dataset.objects.filter(project=project).count(),
        "experiments": Experiment.objects.filter(project=project).count(),
        "cases": GoldenCase.objects.filter(dataset__project=project).count(),
        "sources": GoldenCase.objects.filter(dataset__project=project, source_run__isnull=False).count(),
        "runs": Trace.objects.filter(project=project).count(),
        "spans": Span.objects.filter(trace__project=project).count(),
        "scores": Score.objects.filter(project=project).count(),
        "labels": Score.objects.filter(project=project, source="human").count(),
    }


def _verdict(project):
    gate_run = gate_request(project=project, dataset_name="reservo", experiment_name="v2", baseline_name="v1")
    return gate_run.verdict, gate_run.pass_rate, gate_run.passed_cases, gate_run.total_cases


@pytest.fixture
def acme(actors):
    api = actors.api()
    api.post("/v1/api/datasets", {"name": "reservo", "description": "golden"}, format="json")
    for name in CASES:
        case = {"name": name, "input": name, "expectations": {"expected_tools": ["quote_room"], "contains": "EUR"}}
        assert api.post("/v1/api/datasets/reservo/cases", case, format="json").status_code == 201
    runs = [run_payload(f"v1-{c}", experiment="v1", dataset="reservo", case=c, output="75 EUR") for c in CASES]
    # v2 broke one case: no EUR in the answer.
    runs += [run_payload(f"v2-{c}", experiment="v2", dataset="reservo", case=c, output="75 EUR") for c in CASES[:2]]
    runs.append(run_payload("v2-quote_c", experiment="v2", dataset="reservo", case="quote_c", output="75"))
    runs.append(run_payload("prod-17", output="a production answer", tags=["prod"], metadata={"user": "u1"}))
    assert api.post("/v1/api/traces", {"traces": runs}, format="json").status_code == 201
    captured = {"trace_ids": ["prod-17"]}
    assert api.post("/v1/api/datasets/reservo/cases/from-traces", captured, format="json").status_code in (200, 201)
    GoldenCase.objects.filter(source_trace_id="prod-17").update(status="draft")
    api.post("/v1/api/gate", {"dataset": "reservo", "experiment": "v1", "set_baseline": True}, format="json")
    trace = Trace.objects.get(trace_id="prod-17")
    Score.objects.create(
        project=actors.acme, trace=trace, scorer="helpful", config_hash="h", value=1, passed=True, source="human"
    )
    return actors.acme


def test_an_export_imports_as_a_project_with_the_same_counts_and_gate_verdict(acme):
    archive = project_export(acme)
    copy = project_import(data=archive, slug="acme-copy")
    assert (copy.slug, copy.name) == ("acme-copy", "Acme")
    assert _counts(copy) == _counts(acme)
    assert _counts(copy)["sources"] == 1 and _counts(copy)["labels"] == 1
    assert GatePolicy.objects.get(dataset__project=copy).baseline.name == "v1"
    original = _verdict(acme)
    assert original[0] == "FAIL" and original[2:] == (2, 3)
    assert _verdict(copy) == original
    run = Trace.objects.get(project=copy, trace_id="prod-17")
    assert (run.tags, run.metadata, run.output) == (["prod"], {"user": "u1"}, "a production answer")


def test_the_archive_is_jsonl_files_with_a_manifest(acme):
    archive = zipfile.ZipFile(io.BytesIO(project_export(acme)))
    manifest = orjson.loads(archive.read("manifest.json"))
    assert manifest["format"] == "evalsite-project"
    assert manifest["counts"]["runs"] == 7 == len(archive.read("runs.jsonl").splitlines())
    assert {"datasets.jsonl", "experiments.jsonl", "cases.jsonl", "runs.jsonl", "scores.jsonl"} <= set(
        archive.namelist()
    )


def _with(archive_bytes, name, body):
    source = zipfile.ZipFile(io.BytesIO(archive_bytes))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.namelist():
            target.writestr(item, body if item == name else source.read(item))
    return out.getvalue()


def test_a_bad_line_names_its_file_and_line_and_writes_nothing(acme):
    archive = project_export(acme)
    lines = zipfile.ZipFile(io.BytesIO(archive)).read("runs.jsonl").splitlines()
    broken = orjson.loads(lines[2])
    broken["status"] = "maybe"
    lines[2] = orjson.dumps(broken)
    with pytest.raises(Invalid) as error:
        project_import(data=_with(archive, "runs.jsonl", b"\n".join(lines)), slug="broken")
    assert error.value.errors[0]["field"] == "runs.jsonl:3"
    assert not Project.objects.filter(slug="broken").exists()
    with pytest.raises(Invalid, match="archive: is not an evalsite project archive"):
        project_import(data=b"not a zip", slug="broken")


@pytest.mark.parametrize("slug", ["../x", "a/b", "Acme", "acme moved", "", "x" * 101])
def test_an_import_refuses_a_slug_create_project_would_refuse_and_writes_nothing(acme, tmp_path, slug):
    call_command("export_project", "acme", "-o", str(tmp_path / "acme.zip"))
    projects = Project.objects.count()
    with pytest.raises(CommandError, match="slug"):
        call_command("import_project", str(tmp_path / "acme.zip"), "--slug", slug)
    with pytest.raises(CommandError, match="slug"):
        call_command("create_project", slug)
    assert Project.objects.count() == projects


def test_an_archive_whose_own_slug_is_bad_is_refused_naming_the_slug(acme):
    archive = project_export(acme)
    manifest = orjson.loads(zipfile.ZipFile(io.BytesIO(archive)).read("manifest.json"))
    manifest["project"]["slug"] = "../x"
    projects = Project.objects.count()
    with pytest.raises(Invalid) as error:
        project_import(data=_with(archive, "manifest.json", orjson.dumps(manifest)))
    assert error.value.errors == [
        {"field": "slug", "message": "must be lowercase letters, digits, hyphens or underscores; got '../x'"}
    ]
    assert Project.objects.count() == projects


def test_the_commands_and_the_admins_download_round_trip(acme, actors, tmp_path, settings):
    settings.EVALSITE_EXPORT_DIR = tmp_path / "exports"
    call_command("export_project", "acme", "-o", str(tmp_path / "acme.zip"))
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["acme.zip"]  # no temporary file left
    call_command("import_project", str(tmp_path / "acme.zip"), "--slug", "moved")
    assert _counts(Project.objects.get(slug="moved")) == _counts(acme)
    admin, viewer = Client(), Client()
    admin.force_login(actors.alice)
    viewer.force_login(actors.victor)
    assert viewer.post("/p/acme/settings/exports/").status_code == 403
    assert admin.get("/p/acme/settings/exports/").status_code == 405  # asking for an export is a POST
    # In this test's transaction the commit never comes, so no task is sent: the test runs the job.
    assert admin.post("/p/acme/settings/exports/").status_code == 302
    [job] = ProjectExport.objects.filter(project=acme)
    early = admin.get(f"/p/acme/settings/exports/{job.pk}.zip", follow=True)
    assert early.redirect_chain[0][0].endswith("/p/acme/settings/#exports-heading")
    assert any(str(m).startswith(f"Export {job.pk} cannot be downloaded: ") for m in early.context["messages"])
    assert export_run(job.pk) == "done"  # what the worker runs
    page = admin.get("/p/acme/settings/").content.decode()
    assert f'href="/p/acme/settings/exports/{job.pk}.zip"' in page
    response = admin.get(f"/p/acme/settings/exports/{job.pk}.zip")
    assert (response.status_code, response["Content-Type"]) == (200, "application/zip")
    body = b"".join(response.streaming_content)
    assert zipfile.ZipFile(io.BytesIO(body)).read("manifest.json")
    assert viewer.get(f"/p/acme/settings/exports/{job.pk}.zip").status_code == 403


def test_a_member_that_inflates_like_a_zip_bomb_is_refused_before_it_is_read_whole(acme):
    bomb = _with(project_export(acme), "runs.jsonl", b"\n" * (8 * 1024 * 1024))
    assert len(bomb) < 100_000  # 8 MiB of line breaks deflate to a few kilobytes
    projects = Project.objects.count()
    with pytest.raises(Invalid) as error:
        project_import(data=bomb, slug="bomb")
    [problem] = error.value.errors
    assert problem["field"] == "runs.jsonl"
    assert "inflates more than 200 times its compressed size" in problem["message"]
    assert Project.objects.count() == projects


def test_a_member_or_an_archive_over_its_size_limit_is_refused_naming_the_setting(acme, settings):
    archive = project_export(acme)
    sizes = {i.filename: i.file_size for i in zipfile.ZipFile(io.BytesIO(archive)).infolist()}
    settings.EVALSITE_ARCHIVE_MAX_MEMBER_BYTES = sizes["runs.jsonl"] - 1
    with pytest.raises(Invalid) as error:
        project_import(data=archive, slug="big")
    assert error.value.errors[0]["field"] == "runs.jsonl"
    assert "EVALSITE_ARCHIVE_MAX_MEMBER_BYTES" in error.value.errors[0]["message"]
    settings.EVALSITE_ARCHIVE_MAX_MEMBER_BYTES = 10**9
    settings.EVALSITE_ARCHIVE_MAX_TOTAL_BYTES = sum(sizes.values()) - 1
    with pytest.raises(Invalid, match="EVALSITE_ARCHIVE_MAX_TOTAL_BYTES"):
        project_import(data=archive, slug="big")
    assert not Project.objects.filter(slug="big").exists()
    settings.EVALSITE_ARCHIVE_MAX_TOTAL_BYTES = 10**9
    assert _counts(project_import(data=archive, slug="big")) == _counts(acme)


@pytest.mark.parametrize(
    ("field", "value"),
    [("quota_per_minute", "many"), ("quota_per_minute", -1), ("retention_days", 0), ("retention_days", "30")],
)
def test_an_archived_quota_or_retention_out_of_its_rules_is_refused_and_nothing_is_written(acme, field, value):
    archive = project_export(acme)
    manifest = orjson.loads(zipfile.ZipFile(io.BytesIO(archive)).read("manifest.json"))
    manifest["project"][field] = value
    with pytest.raises(Invalid, match=f"project.{field} must be"):
        project_import(data=_with(archive, "manifest.json", orjson.dumps(manifest)), slug="odd")
    assert not Project.objects.filter(slug="odd").exists()


@pytest.mark.parametrize(
    ("line_change", "message"),
    [
        (
            lambda line: line.replace(b'"trace_id":', b'"trace_id":"dup","trace_id":', 1),
            "holds the key 'trace_id' twice",
        ),
        (lambda line: line.replace(b'"name":"', b'"name":"a\\u0000', 1), "NUL character"),
    ],
)
def test_an_archived_line_is_read_by_the_rules_of_every_json_body(acme, line_change, message):
    archive = project_export(acme)
    lines = zipfile.ZipFile(io.BytesIO(archive)).read("runs.jsonl").splitlines()
    lines[1] = line_change(lines[1])
    with pytest.raises(Invalid) as error:
        project_import(data=_with(archive, "runs.jsonl", b"\n".join(lines)), slug="odd")
    assert error.value.errors[0]["field"] == "runs.jsonl:2"
    assert message in error.value.errors[0]["message"]
    assert not Project.objects.filter(slug="odd").exists()
