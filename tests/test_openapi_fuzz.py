"""Fuzz every documented endpoint from the OpenAPI schema: no input may cause a 5xx, and
every answer is one the schema documents (status, content type and body).

Schemathesis generates valid and invalid requests for each operation of
``/v1/api/schema/`` and calls the app in-process (WSGI) with a real project key.
New endpoints are covered as soon as they are documented.
"""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from evalsite.wsgi import application
from tests.base import actors_create

schema = schemathesis.openapi.from_wsgi("/v1/api/schema/", application)


@pytest.fixture
def api_key(db):
    # Called in-process, the WSGI handler would close the test's database connection
    # at the end of each request; Django's test client disconnects this signal too.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield actors_create().acme_key
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_documented_endpoint_answers_a_server_error(case, api_key):
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {api_key}"}
    case.call_and_validate(
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ]
    )
