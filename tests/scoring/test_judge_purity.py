"""The judge's client side stays free of the web framework, like the scorers.

The prompt, the client, the reply rules, the scorer, the pool and the arithmetic must
run in a worker thread or a script without Django: they get plain values (``Judge``,
``RunView``) and return plain values (``Result``, ``Abstain``).
"""

import grimp
import pytest

PURE = [
    "scoring.judge",
    "scoring.judge.spec",
    "scoring.judge.prompt",
    "scoring.judge.client",
    "scoring.judge.replies",
    "scoring.judge.redaction",
    "scoring.judge.scorer",
    "scoring.judge.runner",
    "scoring.judge.limits",
    "scoring.judge.validation",
]
FRAMEWORKS = ("django", "rest_framework", "celery", "kombu", "drf_spectacular")


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("scoring", "evalsite", include_external_packages=True)


def test_the_judges_pure_modules_import_nothing_of_the_web_framework(graph):
    offenders = [
        f"{module} -> {framework}: {graph.find_shortest_chain(module, framework)}"
        for module in PURE
        for framework in FRAMEWORKS
        if framework in graph.modules and graph.chain_exists(importer=module, imported=framework)
    ]
    assert offenders == []
