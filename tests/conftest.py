import os
from types import SimpleNamespace

import pytest
from django.utils import timezone
from hypothesis import settings

from evalsite import quota, rate_limits
from scoring.passes.batch_writer import writer_stop
from tests.base import actors_create

# In CI the property-based tests and the API fuzzer draw the same examples every run, so
# a verdict on main never depends on luck; locally (CI unset) each run explores new ones.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture
def actors(db):
    return actors_create()


@pytest.fixture(autouse=True)
def _one_quota_minute(monkeypatch):
    """Quotas and rate limits count calendar minutes, so a test that filled one and crossed
    into the next would see its count start again halfway. In a test, both read the time
    the test started at; a caller passing ``now`` still gets the minute it names. Servers
    started in other processes keep the real clock."""
    started = timezone.now()
    clock = SimpleNamespace(now=lambda: started)
    monkeypatch.setattr(quota, "timezone", clock)
    monkeypatch.setattr(rate_limits, "timezone", clock)


@pytest.fixture(autouse=True)
def _no_writer_thread_left():
    """A pass run in the test's process leaves its writer thread, with a database
    connection of its own, for the next pass (as a worker does): each test ends it, so
    no test inherits it and the test database can be dropped at the end."""
    yield
    writer_stop()
