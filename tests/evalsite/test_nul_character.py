"""A NUL character anywhere in a request is a 400 naming where it is, and nothing is written.

PostgreSQL cannot store NUL in text; without these checks such a request fails in the
database with a 500 (and on SQLite it would be stored, so both databases now agree).
"""

import pytest

from datasets.models import Experiment, Trace


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/api/traces", {"traces": [{"trace_id": "ok", "input": "a"}, {"trace_id": "t1", "input": "a\u0000"}]},
         "traces[1].input"),
        ("/v1/api/traces", {"trace_id": "t\u0000", "input": "a"}, "trace_id"),
        ("/v1/api/experiments", {"name": "v1", "metadata": {"commit": "abc\u0000"}}, "metadata.commit"),
        ("/v1/api/experiments", {"name": "v1", "metadata": {"k\u0000": "v"}}, "metadata.k\\u0000"),
    ],
)  # fmt: skip
def test_a_nul_in_a_json_body_is_a_400_naming_its_path(actors, path, body, field):
    response = actors.api().post(path, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == [{"field": field, "message": "must not contain the NUL character (\\u0000)"}]
    assert not Trace.objects.exists() and not Experiment.objects.exists()


def test_the_text_u0000_spelled_out_is_not_a_nul(actors):
    response = actors.api().post(
        "/v1/api/traces", {"trace_id": "t1", "input": "\\u0000 is how JSON spells it"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert Trace.objects.get().input == "\\u0000 is how JSON spells it"


@pytest.mark.parametrize("query", ["experiment=a%00", "dataset=x&status=%00", "a%00b=1"])
def test_a_nul_in_a_query_parameter_is_a_400_naming_it(actors, query):
    response = actors.api().get(f"/v1/api/gate-runs?{query}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["errors"][0]["message"] == "must not contain the NUL character (\\u0000)"
