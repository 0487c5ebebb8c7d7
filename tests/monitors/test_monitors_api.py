"""The monitors API: create, read, change and list alerts; curate writes, any key reads."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from monitors.evaluation import monitor_evaluate
from monitors.models import Monitor
from tests.monitors.conftest import runs_create

BODY = {"name": "checkout quality", "metric": "pass_rate", "scorer": "quality", "target": 0.9}


def test_it_creates_a_monitor_with_defaults_and_a_secret(actors):
    response = actors.api().post("/v1/api/monitors", BODY, format="json")
    assert response.status_code == 201
    body = response.json()
    assert (body["direction"], body["window_minutes"], body["min_runs"], body["state"]) == (
        "above", 60, 30, "insufficient"
    )  # fmt: skip
    assert body["production_only"] is True and len(body["secret"]) == 64


def test_a_bad_field_is_a_400_naming_it_and_nothing_is_written(actors):
    body = {**BODY, "target": 1.5, "webhook_urls": ["https://1.1.1.1/ok", "http://169.254.169.254/"],
            "filter": {"tags": "eu"}}  # fmt: skip
    response = actors.api().post("/v1/api/monitors", body, format="json")
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"target", "webhook_urls[1]", "filter.tags"}
    assert not Monitor.objects.exists()


def test_a_metric_that_is_not_a_text_is_named_not_a_500(actors):
    response = actors.api().post("/v1/api/monitors", {**BODY, "metric": {"a": 1}}, format="json")
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {"metric", "direction"}


def test_a_pass_rate_needs_its_scorer(actors):
    response = actors.api().post("/v1/api/monitors", {**BODY, "scorer": ""}, format="json")
    assert [e["field"] for e in response.json()["errors"]] == ["scorer"]


def test_a_second_monitor_of_the_same_name_is_refused(actors):
    actors.api().post("/v1/api/monitors", BODY, format="json")
    response = actors.api().post("/v1/api/monitors", BODY, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "name"


def test_it_pauses_and_changes_the_target_and_window(actors):
    monitor_id = actors.api().post("/v1/api/monitors", BODY, format="json").json()["id"]
    response = actors.api().patch(
        f"/v1/api/monitors/{monitor_id}", {"paused": True, "target": 0.8, "window_minutes": 15}, format="json"
    )
    assert response.status_code == 200
    assert (response.json()["paused"], response.json()["target"], response.json()["window_minutes"]) == (
        True, 0.8, 15
    )  # fmt: skip


def test_writes_need_curate_and_reads_do_not_show_the_secret_without_it(actors):
    monitor_id = actors.api().post("/v1/api/monitors", BODY, format="json").json()["id"]
    ci = actors.ci_api()
    assert ci.post("/v1/api/monitors", {**BODY, "name": "x"}, format="json").status_code == 403
    assert ci.patch(f"/v1/api/monitors/{monitor_id}", {"paused": True}, format="json").status_code == 403
    body = ci.get(f"/v1/api/monitors/{monitor_id}").json()
    assert body["name"] == "checkout quality" and "secret" not in body


def test_it_lists_a_monitors_alerts_newest_first_paged(actors):
    runs_create(actors.acme, prefix="bad", count=200, failing=60)
    monitor_id = actors.api().post("/v1/api/monitors", BODY, format="json").json()["id"]
    alert = monitor_evaluate(monitor_id=monitor_id)
    body = actors.api().get(f"/v1/api/monitors/{monitor_id}/alerts?page_size=1").json()
    assert [a["id"] for a in body["results"]] == [alert.pk]
    assert body["results"][0]["kind"] == "fired" and len(body["results"][0]["run_ids"]) == 60
    listed = actors.api().get("/v1/api/monitors").json()
    assert [m["state"] for m in listed["results"]] == ["firing"]


def test_an_outsider_gets_404_for_a_monitor_and_its_alerts(actors):
    monitor_id = actors.api().post("/v1/api/monitors", BODY, format="json").json()["id"]
    outsider = actors.outsider_api()
    assert outsider.get(f"/v1/api/monitors/{monitor_id}").status_code == 404
    assert outsider.get(f"/v1/api/monitors/{monitor_id}/alerts").status_code == 404
    assert outsider.patch(f"/v1/api/monitors/{monitor_id}", {"paused": True}, format="json").status_code == 404
    assert outsider.get("/v1/api/monitors").json()["results"] == []


def test_the_lists_take_the_same_queries_for_three_or_ten_rows(actors):
    def queries(path):
        with CaptureQueriesContext(connection) as captured:
            assert actors.api().get(path).status_code == 200
        return len(captured)

    runs_create(actors.acme, prefix="bad", count=200, failing=60)
    for i in range(3):
        monitor_id = actors.api().post("/v1/api/monitors", {**BODY, "name": f"m{i}"}, format="json").json()["id"]
    monitor_evaluate(monitor_id=monitor_id)
    few = queries("/v1/api/monitors"), queries(f"/v1/api/monitors/{monitor_id}/alerts")
    for i in range(3, 10):
        actors.api().post("/v1/api/monitors", {**BODY, "name": f"m{i}"}, format="json")
    actors.api().patch(f"/v1/api/monitors/{monitor_id}", {"target": 0.5}, format="json")
    assert monitor_evaluate(monitor_id=monitor_id).kind == "resolved"  # a second alert
    assert (queries("/v1/api/monitors"), queries(f"/v1/api/monitors/{monitor_id}/alerts")) == few
