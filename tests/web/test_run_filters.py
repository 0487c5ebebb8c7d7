"""The runs list's filters are declared once (scoring.run_filters): the API and the page cannot drift."""

import pytest

from scoring.run_filters import RUN_FILTERS
from web.api.traces import TraceFilters
from web.pages.forms import RunFilterForm

pytestmark = pytest.mark.django_db


def test_the_api_and_the_page_have_the_same_filters_with_the_same_limits():
    api, page = TraceFilters().fields, RunFilterForm().fields
    assert set(api) == {f.api for f in RUN_FILTERS}
    assert set(page) == {f.page for f in RUN_FILTERS if f.page is not None}
    for f in RUN_FILTERS:
        if f.page is not None:
            assert getattr(api[f.api], "max_length", None) == getattr(page[f.page], "max_length", None), f.kwarg
    assert api["label"].max_length == page["label"].max_length == 300


@pytest.mark.parametrize("length, accepted", [(300, True), (301, False)])
def test_a_label_filter_is_held_to_one_limit_in_the_api_and_on_the_page(length, accepted):
    value = "helpful:" + "x" * (length - len("helpful:"))
    assert TraceFilters(data={"label": value}).is_valid() is accepted
    form = RunFilterForm({"label": value})
    assert form.is_valid() is accepted
    assert form.filters() == (
        {**dict.fromkeys(f.kwarg for f in RUN_FILTERS if f.page), "label": value} if accepted else {}
    )


def test_the_api_refuses_an_over_long_label_naming_the_field(actors):
    response = actors.api().get("/v1/api/traces", {"label": "a:" + "b" * 300})
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["label"]
    assert actors.api().get("/v1/api/traces", {"label": "a:" + "b" * 298}).status_code == 200
