"""The local demo: Reservo's golden set, a passing baseline and a regressed version.

What ``make run`` loads on first start, through the same services the API uses: the
dataset ``reservo`` from ``examples/reservo/golden_cases.jsonl``; experiment ``v1``
(every case's own script) gated and recorded as the baseline; experiment ``v2`` where
``quote_focus_pro_3h`` books instead of quoting (the seed's regression) gated against
it. The dashboard, the gate run pages and the compare page then show real evidence.
``demo_create`` makes the whole demo at once: the admin user, the project, its key and
the data, or nothing.
"""

from django.db import transaction

from datasets.case_selectors import case_list
from datasets.cases import dataset_create
from datasets.ingestion import traces_ingest
from datasets.jsonl import cases_import
from evalgate import Tracer
from evalsite.models import Role
from evalsite.projects import api_key_create, membership_set, project_create, superuser_set
from evalsite.scopes import ADMIN
from examples.reservo import GOLDEN_CASES_PATH, load_script
from examples.reservo.tracing import case_trace
from gating.evaluation import gate_request

DATASET = "reservo"
EXPERIMENTS = (
    # name, {case: override script}, record as baseline
    ("v1", {}, True),
    ("v2", {"quote_focus_pro_3h": "quote_books_instead"}, False),
)


def demo_data_load(*, project, user=None):
    """Load the demo into ``project``; returns the gate runs (v1 PASS, v2 FAIL)."""
    dataset = dataset_create(
        project=project,
        data={"name": DATASET, "description": "Reservo, the booking agent of the seed's regression gate."},
    )
    cases_import(dataset=dataset, body=GOLDEN_CASES_PATH.read_bytes(), by=user)
    cases = [{"name": c.name, "input": c.input, "metadata": c.metadata} for c in case_list(dataset=dataset)]
    gate_runs = []
    for experiment, overrides, baseline in EXPERIMENTS:
        tracer = Tracer(experiment=experiment, dataset=DATASET)
        for case in cases:
            script = load_script(overrides[case["name"]]) if case["name"] in overrides else None
            case_trace(tracer, case, script=script, trace_id=f"{experiment}-{case['name']}")
        traces_ingest(project=project, payload={"traces": tracer.runs})
        gate_runs.append(
            gate_request(
                project=project, dataset_name=DATASET, experiment_name=experiment, set_baseline=baseline, user=user
            )
        )
    return gate_runs


@transaction.atomic
def demo_create(*, slug, name, username, password, project=None):
    """The demo in ``project`` (made as ``slug`` if ``None``): ``username`` an admin with ``password``, a full key.

    Returns ``(project, full_key)``; on any error nothing is kept.
    """
    user = superuser_set(username=username, email=f"{username}@localhost", password=password)
    project = project or project_create(slug=slug, name=name)
    membership_set(user=user, project=project, role=Role.ADMIN)
    _, full_key = api_key_create(project=project, name="demo", created_by=user, scopes=[ADMIN])
    demo_data_load(project=project, user=user)
    return project, full_key
