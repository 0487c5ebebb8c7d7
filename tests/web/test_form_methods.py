"""Every form that changes something is a POST carrying the CSRF token; a GET form (a filter,
a count, the project switcher) carries no token, so the token never lands in an address,
and submitting it changes nothing.

Two checks: every form of every template, read as written; and the forms of the main
pages as they render for an admin (who sees every form), each GET form submitted as it
stands with the database's row counts compared before and after.
"""

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlencode, urljoin

import pytest
from django.apps import apps
from django.test import Client

from lifecycle.demo import demo_data_load

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
FORM = re.compile(r"<form\b([^>]*)>(.*?)</form>", re.S)
METHOD = re.compile(r'\bmethod="([^"]*)"')


def _template_forms():
    for path in sorted(TEMPLATES.rglob("*.html")):
        for match in FORM.finditer(path.read_text()):
            yield path.relative_to(TEMPLATES), match.group(1), match.group(2)


def test_the_templates_have_forms_to_check():
    assert len(list(_template_forms())) > 30


@pytest.mark.parametrize(("template", "attrs", "body"), list(_template_forms()), ids=lambda v: str(v)[:40])
def test_every_template_form_says_its_method_and_only_a_post_carries_the_token(template, attrs, body):
    method = METHOD.search(attrs)
    assert method is not None, f"{template}: a form without method= is a GET by default; say which it is"
    # A method chosen at render time ({% if %}) is checked on the rendered pages below.
    if "{%" in method.group(1):
        return
    assert method.group(1) in ("get", "post"), f"{template}: method={method.group(1)!r}"
    assert "formmethod" not in body, f"{template}: a button switching the method mixes a GET form with a POST one"
    if method.group(1) == "get":
        assert "csrf_token" not in body, f"{template}: a GET form carrying the CSRF token puts it in the address"
    else:
        assert "{% csrf_token %}" in body, f"{template}: a POST form without the CSRF token"


class _Forms(HTMLParser):
    """The rendered forms: ``[{"method", "action", "fields": [(name, value)], "token"}]``."""

    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append(
                {"method": (attrs.get("method") or "get").lower(), "action": attrs.get("action") or "",
                 "fields": [], "token": False}
            )  # fmt: skip
        elif self.forms and tag in ("input", "select", "textarea") and attrs.get("name"):
            form = self.forms[-1]
            if attrs["name"] == "csrfmiddlewaretoken":
                form["token"] = True
            elif attrs.get("type") not in ("checkbox", "radio", "submit") or "checked" in attrs:
                form["fields"].append((attrs["name"], attrs.get("value") or ""))


def _rows():
    return {m._meta.label: m._default_manager.count() for m in apps.get_models()}


@pytest.fixture
def site(actors):
    demo = demo_data_load(project=actors.acme, user=actors.alice)
    case = demo[1].cases.first()
    return actors, [
        "/", "/p/acme/runs/", "/p/acme/runs/v2-quote_focus_pro_3h/", "/p/acme/datasets/", "/p/acme/datasets/reservo/",
        f"/p/acme/cases/{case.case_id}/", "/p/acme/review/", "/p/acme/passes/", "/p/acme/passes/new/",
        "/p/acme/passes/new/?scorers=answered", "/p/acme/review/scores/", "/p/acme/queue/", "/p/acme/labels/",
        "/p/acme/agreement/", "/p/acme/experiments/", "/p/acme/experiments/compare/?base=v1&candidate=v2",
        "/p/acme/gate-runs/", f"/p/acme/gate-runs/{demo[1].pk}/", "/p/acme/settings/", "/p/acme/settings/judge/",
        "/p/acme/online-rules/", "/p/acme/harvest/", "/p/acme/monitors/",
    ]  # fmt: skip


@pytest.mark.parametrize("username", ["alice", "victor"])
def test_no_rendered_get_form_carries_the_token_and_submitting_one_changes_nothing(site, username):
    actors, pages = site
    client = Client()
    client.force_login(getattr(actors, username))
    seen = {"get": 0, "post": 0}
    for path in pages:
        response = client.get(path)
        if response.status_code == 403 and username == "victor":
            continue  # the settings pages are the admins'
        assert response.status_code == 200, path
        parser = _Forms()
        parser.feed(response.content.decode())
        for form in parser.forms:
            seen[form["method"]] += 1
            if form["method"] == "post":
                assert form["token"], f"{path}: a POST form to {form['action']!r} without the CSRF token"
                continue
            assert not form["token"], f"{path}: a GET form to {form['action']!r} carries the CSRF token"
            before = _rows()
            target = urljoin(path, form["action"] or path).split("?")[0]
            answer = client.get(f"{target}?{urlencode(form['fields'])}")
            assert answer.status_code < 500, f"{path}: its GET form answered {answer.status_code}"
            assert _rows() == before, f"{path}: submitting its GET form to {target} changed the data"
    assert seen["get"] >= 5
    if username == "alice":
        assert seen["post"] >= 10
