"""A JSON body that is not UTF-8 is a 400 saying so, and nothing is written.

Surrogates encoded as bytes (CESU-8 writes U+D800 as ``ED A0 80``) are not UTF-8, but
Python's JSON parser reads them into a lone surrogate that no later rule expected, and
the request failed with a 500 when the text was written or answered.
"""

import pytest
from django.test import Client

from datasets.models import Experiment, Trace

CESU8_SURROGATE = b"\xed\xa0\x80"


def _post(actors, path, body):
    return Client().post(
        path, data=body, content_type="application/json", headers={"Authorization": f"Bearer {actors.acme_key}"}
    )


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/api/traces", b'{"trace_id": "t1", "input": "a' + CESU8_SURROGATE + b'"}'),
        ("/v1/api/experiments", b'{"name": "v1", "metadata": {"k' + CESU8_SURROGATE + b'": "v"}}'),
        ("/v1/api/traces", b'{"trace_id": "t1", "input": "caf\xe9"}'),  # Latin-1, not UTF-8
    ],
)
def test_a_body_that_is_not_utf8_is_a_400_naming_the_problem(actors, path, body):
    response = _post(actors, path, body)
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    [error] = response.json()["errors"]
    assert error["field"] == "body" and error["message"].startswith("is not valid UTF-8")
    assert not Trace.objects.exists() and not Experiment.objects.exists()


def test_an_escaped_lone_surrogate_is_still_named_by_its_path(actors):
    response = _post(actors, "/v1/api/traces", b'{"trace_id": "t1", "input": "a\\ud800"}')
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "input", "message": "holds a lone surrogate (\\ud800-\\udfff), which is not Unicode"}
    ]


def test_a_surrogate_pair_written_as_utf8_is_taken(actors):
    response = _post(actors, "/v1/api/traces", '{"trace_id": "t1", "input": "🦉"}'.encode())
    assert response.status_code == 201, response.content
    assert Trace.objects.get().input == "🦉"
