"""Pages: one gate run (its figures and its cases, filtered and paged, every mismatch shown).

The cases come from the gate run's stored rows (``gating.selectors``); each is shown
with its trials (passed of run, flaky, quarantined) and the evidence of its checks
(``web.pages.evidence``). ``sort=drop`` orders the per-scorer comparison with the baseline
by its drop, largest first (``web.pages.compare.scorers_by_drop``), keeping the filter and page.
"""

from django.core.paginator import Paginator

from gating.selectors import GATE_CASE_FILTERS, gate_case_counts, gate_cases_shown, gate_run_get
from web.pages.access import page_links, page_render, project_page
from web.pages.compare import query_with, scorers_by_drop
from web.pages.evidence import case_evidence, trials_view

CASES_PER_PAGE = 50
FILTER_LABELS = {
    "failing": "Failing",
    "flaky": "Flaky",
    "quarantined": "Quarantined",
    "passed": "Passed",
    "all": "All",
}


def case_view(row):
    """A case row as the page shows it; a passed case keeps only what a judge said of it.

    A reason that only restates a check shown below it (``scorer: reason``) is left out
    of the reasons, so each failure reads once.
    """
    result = row.result
    evidence = case_evidence(result)
    if result.get("passed"):
        evidence = [e for e in evidence if e["judge"]]
    restated = {f"{e['scorer']}: {e['reason']}" for e in evidence}
    reasons = [r for r in result.get("reasons") or [] if r not in restated]
    return {
        **result, "reasons": reasons, "evidence": evidence, "trial": trials_view(result),
        "row_quarantined": row.quarantined,
    }  # fmt: skip


def _default_filter(counts):
    return "failing" if counts["failing"] else "all"


@project_page
def gate_run_page(request, project, gate_run_id):
    gate_run = gate_run_get(project=project, gate_run_id=gate_run_id)
    counts = gate_case_counts(gate_run=gate_run)
    show = request.GET.get("show")
    if show not in GATE_CASE_FILTERS:
        show = _default_filter(counts)
    page = Paginator(gate_cases_shown(gate_run=gate_run, show=show), CASES_PER_PAGE).get_page(request.GET.get("page"))
    newer, older = page_links(request, page)
    answer, sort = gate_run.result, "drop" if request.GET.get("sort") == "drop" else "report"
    if sort == "drop" and answer.get("comparison"):
        answer = {**answer, "comparison": scorers_by_drop(answer["comparison"])}
    return page_render(
        request,
        "experiments/gate_run.html",
        {
            "gate_run": gate_run,
            "answer": answer,
            "sort": sort,
            "sort_links": [(o, query_with(request, sort=o) + "#baseline") for o in ("report", "drop")],
            "cases": [case_view(row) for row in page.object_list],
            "page": page,
            "newer": newer,
            "older": older,
            "show": show,
            "filters": [(name, FILTER_LABELS[name], counts[name]) for name in GATE_CASE_FILTERS],
        },
    )
