"""The database goes away under a live server, then comes back.

A private PostgreSQL cluster (started by the test on a port of its own) backs a real
gunicorn server. While it is stopped: the API answers 503 problem+json with
``Retry-After``, OTLP answers 503 with ``Retry-After`` and a ``google.rpc.Status``
(exporters retry it instead of dropping spans), pages a readable 503, the health
check 503. When it returns, everything answers again without a restart.
"""

import http.cookiejar
import json
import urllib.error
import urllib.parse
import urllib.request

import pytest
from django.db import connection

from tests.factories import run_payload
from tests.live import web_server
from tests.outage import manage, postgres_binaries, private_postgres, until

pytestmark = [
    pytest.mark.skipif(postgres_binaries() is None, reason="PostgreSQL server binaries (initdb, pg_ctl) not found"),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the outage test runs on PostgreSQL (DATABASE_URL)"),
]

PASSWORD = "a long outage password 42"
OTLP_BODY = {
    "resourceSpans": [
        {
            "scopeSpans": [
                {
                    "spans": [
                        {
                            "traceId": "5b8efff798038103d269b633813fc60c",
                            "spanId": "eee19b7ec3c1b174",
                            "name": "agent",
                            "startTimeUnixNano": "1764496800000000000",
                            "endTimeUnixNano": "1764496801000000000",
                        }
                    ]
                }
            ]
        }
    ]
}


class Browser:
    """Requests with a cookie jar (a logged-in session), answering ``(status, headers, body)``."""

    def __init__(self, url):
        self.url = url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def send(self, path, *, data=None, headers=None):
        request = urllib.request.Request(self.url + path, data=data, headers=headers or {})
        try:
            with self.opener.open(request, timeout=30) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def log_in(self, username):
        self.send("/login/")
        token = next(c.value for c in self.jar if c.name == "csrftoken")
        form = urllib.parse.urlencode({"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token})
        status, _, _ = self.send("/login/", data=form.encode(), headers={"Referer": self.url + "/login/"})
        assert status == 200 and any(c.name == "sessionid" for c in self.jar)


def _api(browser, key):
    return browser.send("/v1/api/traces", headers={"Authorization": f"Bearer {key}"})


def _otlp(browser, key):
    return browser.send(
        "/v1/traces",
        data=json.dumps(OTLP_BODY).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )


def _ingest(browser, key, trace_id):
    return browser.send(
        "/v1/api/traces",
        data=json.dumps(run_payload(trace_id)).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )


def test_a_database_outage_answers_503_with_retry_after_everywhere_and_recovers_on_its_own():
    with private_postgres() as pg:
        key = manage("create_project", "acme", database_url=pg.url).strip().splitlines()[-1]
        manage(
            "createsuperuser", "--noinput", "--username", "alice", "--email", "alice@example.com",
            database_url=pg.url, env={"DJANGO_SUPERUSER_PASSWORD": PASSWORD},
        )  # fmt: skip
        with web_server(workers=1, threads=2, env={"DATABASE_URL": pg.url}) as url:
            browser = Browser(url)
            browser.log_in("alice")
            assert _ingest(browser, key, "before")[0] == 201
            pg.stop()

            status, headers, body = _api(browser, key)
            assert status == 503
            assert headers["Content-Type"] == "application/problem+json"
            assert int(headers["Retry-After"]) >= 1
            problem = json.loads(body)
            assert problem["status"] == 503 and "database" in problem["detail"].lower()

            assert _ingest(browser, key, "during")[0] == 503

            status, headers, body = _otlp(browser, key)
            assert status == 503
            assert int(headers["Retry-After"]) >= 1
            assert headers["Content-Type"] == "application/json"
            assert json.loads(body)["code"] == 14  # google.rpc.Code.UNAVAILABLE

            status, headers, body = browser.send("/")
            assert status == 503
            assert headers["Content-Type"].startswith("text/html")
            assert int(headers["Retry-After"]) >= 1
            assert b"temporarily unavailable" in body

            assert browser.send("/healthz")[0] == 503

            pg.start()
            took = until(lambda: _api(browser, key)[0] == 200, timeout=30)
            print(f"recovered {took:.1f}s after the database returned")
            assert _ingest(browser, key, "after")[0] == 201
            assert _otlp(browser, key)[0] == 200
            assert browser.send("/")[0] == 200
            assert browser.send("/healthz")[0] == 200
            runs = json.loads(_api(browser, key)[2])["results"]
            assert {r["trace_id"] for r in runs} >= {"before", "after"}
