"""Fuzz every documented operation from the OpenAPI schema with every schemathesis check.

Schemathesis generates valid and invalid requests (positive and negative data) for each
operation of ``/v1/api/schema/`` and calls the app in-process (WSGI) with a real
project key. Every check runs: no 5xx, every status, content type, header and body is
one the schema documents, invalid data is refused, valid data is accepted. New
endpoints are covered as soon as they are documented.

The budget is bounded (``EVALSITE_FUZZ_EXAMPLES`` per operation and seed, 15 by
default). Each operation runs twice: with a fixed seed, so CI sees the same cases on
every run, and with a fresh seed, so each run also tries cases no run tried before. The
fresh seed is in the test's name (``test_fresh_seed_<seed>``); replay a failure with
``EVALSITE_FUZZ_SEED=<seed>``.
"""

import os
import secrets

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, seed, settings
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import negative_data_rejection

from evalsite.wsgi import application
from tests.base import actors_create

FIXED_SEED = 20261201
FRESH_SEED = int(os.environ.get("EVALSITE_FUZZ_SEED") or secrets.randbits(32))
EXAMPLES = int(os.environ.get("EVALSITE_FUZZ_EXAMPLES") or 15)

schema = schemathesis.openapi.from_wsgi("/v1/api/schema/", application)
# The key is the caller's (``_call``), so the Authorization header is not generated: a
# negative case whose only broken part was a missing header would reach the API whole
# and be reported as invalid data accepted (the shrinker can drop its other breaks).
# Each operation's refusal of a missing or wrong key is checked by ``ignored_auth``.
schema.config.generation.update(modes=list(GenerationMode), with_security_parameters=False)
# Valid by the schema yet refused with a 400: names that must exist (a scorer, a dataset,
# an experiment), a cursor this list gave, rules across fields. The schema cannot say
# these; the 400 names the field, and the other checks still hold that answer to the
# documented problem body.
schema.config.checks.positive_data_acceptance.expected_statuses = [
    *schema.config.checks.positive_data_acceptance.expected_statuses,
    "400",
]
BUDGET = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=False,  # the seed decides (the CI profile derandomizes, which would ignore it)
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)


@pytest.fixture
def api_key(db):
    # Called in-process, the WSGI handler would close the test's database connection
    # at the end of each request; Django's test client disconnects this signal too.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield actors_create().acme_key
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def _call(case, api_key):
    # Given as the caller's headers (not the case's), so the auth checks know the key is real.
    # OTLP/JSON (traces and logs) follows the protobuf JSON mapping, which reads null as a field's default and
    # keeps unknown enum numbers: the schema states what exporters send, the endpoint takes
    # more (docs/otel.md), so only negative data is not held against it.
    lenient = [negative_data_rejection] if case.operation.path in ("/v1/traces", "/v1/logs") else []
    case.call_and_validate(headers={"Authorization": f"Bearer {api_key}"}, excluded_checks=lenient)


@schema.parametrize()
@BUDGET
@seed(FIXED_SEED)
def test_fixed_seed(case, api_key):
    _call(case, api_key)


def _fresh(case, api_key):
    _call(case, api_key)


# The seed in the name: a failure's report says how to replay it.
_fresh.__name__ = f"test_fresh_seed_{FRESH_SEED}"
globals()[_fresh.__name__] = schema.parametrize()(BUDGET(seed(FRESH_SEED)(_fresh)))
