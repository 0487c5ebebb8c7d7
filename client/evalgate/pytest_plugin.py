"""pytest plugin: a dataset's golden cases as pytest items, the ``evalgate`` fixture, ``assert_case``.

Loaded by pytest from the ``pytest11`` entry point wherever the package is installed;
it does nothing until asked.

- ``pytest --evalgate-dataset D --evalgate-experiment E`` adds one item per active
  golden case of D (``evalgate/D::<case name>``) and a ``gate verdict`` item. The first
  of them to run asks the server's gate about E once (a 202 is polled); each case item
  passes or fails as the gate judged that case, with the case's reasons as the failure
  message, and ``gate verdict`` fails when the verdict is FAIL (``blocked_by`` as its
  message). A quarantined case (it does not gate) is skipped, with its quarantine reason
  and how the gate judged it. The items are collected as any test is (``collected N
  items`` counts them, ``-k`` selects among them). So ``pytest --junitxml`` and any CI's
  test report show the gate without anything of evalsite's. The runs must already be uploaded (``evalgate upload``, a
  ``Tracer``, or tests using the fixture earlier in the session).
- The ``evalgate`` fixture (session scope) holds the connection and the options:
  ``evalgate.cases()``, ``evalgate.run_case(case, agent, replacement=None)``,
  ``evalgate.gate()``, ``evalgate.client``.
- ``assert_case(result)`` fails a test of your own with the case's evidence and reasons.

The server is ``--evalgate-url`` or ``EVALSITE_URL``, the key ``--evalgate-key`` or
``EVALSITE_API_KEY`` (prefer the variable).
"""

from __future__ import annotations

import pytest

from .calls import fetch_cases, request_gate
from .errors import EvalgateError
from .harness import GateReport, assert_case, run_case
from .http import Client, client_for

__all__ = ["EvalgateSession", "assert_case"]

VERDICT_ITEM = "gate verdict"


def pytest_addoption(parser):
    group = parser.getgroup("evalgate", "evalsite's regression gate (evalgate)")
    group.addoption("--evalgate-dataset", metavar="NAME", help="add one test per active golden case of this dataset")
    group.addoption("--evalgate-experiment", metavar="NAME", help="the experiment whose runs the gate judges")
    group.addoption("--evalgate-baseline", metavar="NAME", help="compare with this experiment (default: the policy's)")
    group.addoption("--evalgate-set-baseline", action="store_true", help="record a PASS as the dataset's new baseline")
    group.addoption("--evalgate-url", metavar="URL", help="evalsite server (default: $EVALSITE_URL)")
    group.addoption("--evalgate-key", metavar="KEY", help="project API key (default: $EVALSITE_API_KEY)")


class EvalgateSession:
    """What the ``evalgate`` fixture gives a test: the connection, the options and the gate's answer."""

    def __init__(self, config):
        option = config.option
        self.dataset = option.evalgate_dataset
        self.experiment = option.evalgate_experiment
        self.baseline = option.evalgate_baseline
        self.set_baseline = bool(option.evalgate_set_baseline)
        self._url, self._key = option.evalgate_url, option.evalgate_key
        self._client: Client | None = None
        self._report: GateReport | None = None

    @property
    def client(self) -> Client:
        if self._client is None:
            self._client = client_for(self._url, self._key)
        return self._client

    def _named(self, value, what):
        if not value:
            raise EvalgateError(f"no {what} given: pass --evalgate-{what}")
        return value

    def cases(self, dataset: str | None = None) -> list:
        """The active cases of ``dataset`` (default ``--evalgate-dataset``), as dicts."""
        return fetch_cases(self.client, self._named(dataset or self.dataset, "dataset"))

    def run_case(self, case: dict, agent, replacement=None):
        """``evalgate.run_case`` with this session's dataset, experiment and connection."""
        return run_case(
            case,
            agent,
            replacement,
            dataset=self._named(self.dataset, "dataset"),
            experiment=self._named(self.experiment, "experiment"),
            client=self.client,
        )

    def gate(self) -> GateReport:
        """The gate's verdict on the experiment, asked once per session."""
        if self._report is None:
            answer = request_gate(
                self.client,
                dataset=self._named(self.dataset, "dataset"),
                experiment=self._named(self.experiment, "experiment"),
                baseline=self.baseline,
                set_baseline=self.set_baseline,
            )
            self._report = GateReport.from_gate(answer)
        return self._report


def _session(config) -> EvalgateSession:
    session = getattr(config, "_evalgate_session", None)
    if session is None:
        session = config._evalgate_session = EvalgateSession(config)
    return session


@pytest.fixture(scope="session")
def evalgate(pytestconfig) -> EvalgateSession:
    """The connection to evalsite and the ``--evalgate-*`` options (see the module's docstring)."""
    return _session(pytestconfig)


class CaseFailed(Exception):
    """A golden case the gate failed; its text is the case's reasons, one a line."""


class GateDataset(pytest.Collector):
    """The golden cases of one dataset: one item per case, then the verdict."""

    def __init__(self, *, cases: list, **kwargs):
        super().__init__(**kwargs)
        self.cases = cases

    def collect(self):
        items = [
            GateItem.from_parent(self, name=str(case.get("name")), case_name=str(case.get("name")), case=case)
            for case in self.cases
        ]
        return [*items, GateItem.from_parent(self, name=VERDICT_ITEM)]


class GateItem(pytest.Item):
    """A golden case (or the verdict), judged by the server's gate."""

    def __init__(self, *, case_name: str | None = None, case: dict | None = None, **kwargs):
        super().__init__(**kwargs)
        self.case_name = case_name
        self.case = case or {}

    def runtest(self):
        report = _session(self.config).gate()
        if self.case_name is None:
            if not report.passed:
                raise CaseFailed("\n".join(report.blocked_by) or f"the gate said {report.verdict}")
            return
        quarantined = _quarantined(report.answer, self.case_name)
        if quarantined is not None:
            pytest.skip(self._quarantine_reason(quarantined))
        try:
            case = report.case(self.case_name)
        except KeyError:
            raise CaseFailed(f"the gate did not evaluate case {self.case_name!r} (archived since?)") from None
        if not case.passed:
            raise CaseFailed("\n".join(case.reasons) or "the server gave no reason")

    def _quarantine_reason(self, result: dict) -> str:
        reason = self.case.get("quarantine_reason") or "no reason given"
        judged = "PASS" if result.get("passed") is True else "FAIL"
        return f"quarantined: {reason} (the gate judged it {judged}, not counted)"

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (CaseFailed, EvalgateError)):
            return str(excinfo.value) if isinstance(excinfo.value, CaseFailed) else _undecided(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        session = _session(self.config)
        return self.path, None, f"evalgate {session.dataset} [{session.experiment}]: {self.name}"


def _quarantined(answer: dict | None, name: str) -> dict | None:
    """The gate's result for ``name`` if the gate ran it quarantined (it did not count)."""
    for result in (answer or {}).get("quarantined") or []:
        if isinstance(result, dict) and result.get("name") == name:
            return result
    return None


def _undecided(error: EvalgateError) -> str:
    return "could not decide: " + "; ".join([error.message, *error.details])


# First, so that -k, -m and --deselect apply to the cases as to any other test.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    plugin = _session(config)
    if not plugin.dataset and not plugin.experiment:
        return
    if not (plugin.dataset and plugin.experiment):
        raise pytest.UsageError("--evalgate-dataset and --evalgate-experiment go together")
    try:
        cases = plugin.cases()
    except EvalgateError as exc:
        raise pytest.UsageError(
            f"evalgate: cannot read the cases of dataset {plugin.dataset}: {_undecided(exc)}"
        ) from None
    parent = GateDataset.from_parent(
        session, name=f"evalgate/{plugin.dataset}", nodeid=f"evalgate/{plugin.dataset}", cases=cases
    )
    # genitems collects the way pytest collects a file: each collect report reaches the
    # terminal's "collected N items" count, and the collect hooks of other plugins.
    items.extend(session.genitems(parent))
