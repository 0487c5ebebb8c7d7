"""Page: compare two experiments: per-scorer figures with a plot of the differences, the
paired cases from each one's newest gate run (McNemar, Wilson intervals), and, per case,
both sides' trials and outcome, with the two runs' answers and tool calls side by side
where the outcome changed and what differs between them field by field (``checks.field_diff``).
``sort=drop`` orders the scorers and the cases by their drop, largest first, keeping the other
parameters. The pair's pairwise review figures (``scoring.review.pairwise``) come last.
"""

from django.core.paginator import Paginator
from django.urls import reverse

from datasets.experiments import experiment_get, experiment_names
from datasets.run_selectors import runs_answers
from gating.comparison import experiments_compare
from gating.selectors import PAIRED_CASE_FILTERS, PAIRED_CASE_ORDERS, gate_case_results, paired_case_rows
from scoring.review.pairwise import pairwise_summary
from web.pages.access import page_links, page_render, project_page
from web.pages.diffs import answers_field_diff
from web.pages.evidence import pretty, trials_view
from web.pages.plots import difference_plot

CASES_PER_PAGE = 50


def _side(result):
    if result is None:
        return None
    return {
        "passed": result.get("passed"),
        "measured": result.get("measured"),
        "trace_id": result.get("trace_id"),
        "trial": trials_view(result),
    }


def answer_view(answers, trace_id):
    """A run's answer and tool calls (``runs_answers``) pretty-printed for a page; None without the run."""
    answer = answers.get(trace_id)
    if answer is None:
        return None
    calls = [
        {**call, "input": pretty(call["input"]), "output": pretty(call["output"])} for call in answer["tool_calls"]
    ]
    return {"output": pretty(answer["output"]) if answer["output"] is not None else None, "tool_calls": calls}


def paired_cases(request, project, cases, show, order="report"):
    """One page of the paired case rows, each with both sides and, when changed, both answers and
    what differs between them field by field."""
    rows = paired_case_rows(
        base_gate_run_id=cases["base_gate_run_id"],
        candidate_gate_run_id=cases["candidate_gate_run_id"],
        show=show,
        order=order,
    )
    page = Paginator(rows, CASES_PER_PAGE).get_page(request.GET.get("page"))
    base_results = gate_case_results([row.base_row_id for row in page.object_list])
    items = []
    for row in page.object_list:
        base = _side(base_results.get(row.base_row_id))
        items.append(
            {
                "name": row.result.get("name"),
                "case_id": row.result.get("case_id"),
                "quarantined": row.quarantined,
                "base": base,
                "candidate": _side(row.result),
                "changed": base is None or base["passed"] != row.passed,
            }
        )
    changed = [i for i in items if i["changed"] and i["base"]]
    answers = runs_answers(
        project=project, trace_ids=[t for i in changed for t in (i["base"]["trace_id"], i["candidate"]["trace_id"])]
    )
    for item in changed:
        item["base_answer"] = answer_view(answers, item["base"]["trace_id"])
        item["candidate_answer"] = answer_view(answers, item["candidate"]["trace_id"])
        item["diff"] = answers_field_diff(
            answers.get(item["base"]["trace_id"]), answers.get(item["candidate"]["trace_id"])
        )
    return page, items


def scorers_by_drop(rows):
    """Per-scorer rows, the largest drop (most negative difference) first; rows without a difference last."""
    return sorted(rows, key=lambda row: (row["diff"] is None, row["diff"] or 0))


def query_with(request, **changes):
    """The page's query with ``changes`` applied (a None value drops the parameter), from page 1."""
    query = request.GET.copy()
    query.pop("page", None)
    for name, value in changes.items():
        if value is None:
            query.pop(name, None)
        else:
            query[name] = value
    return f"?{query.urlencode()}"


@project_page
def compare_page(request, project):
    names = experiment_names(project=project)
    base_name, candidate_name = request.GET.get("base"), request.GET.get("candidate")
    show = request.GET.get("show") if request.GET.get("show") in PAIRED_CASE_FILTERS else "changed"
    order = request.GET.get("sort") if request.GET.get("sort") in PAIRED_CASE_ORDERS else "report"
    context = {"names": names, "base": base_name, "candidate": candidate_name, "comparison": None, "show": show}
    context.update(sort=order, sort_links={o: query_with(request, sort=o) for o in PAIRED_CASE_ORDERS})
    context["filter_links"] = [(name, query_with(request, show=name) + "#cases") for name in PAIRED_CASE_FILTERS]
    if base_name and candidate_name:
        base = experiment_get(project=project, name=base_name)
        candidate = experiment_get(project=project, name=candidate_name)
        comparison = experiments_compare(base=base, candidate=candidate)
        if order == "drop":
            comparison["scorers"] = scorers_by_drop(comparison["scorers"])
        context.update(comparison=comparison, plot=difference_plot(comparison["scorers"]))
        if base.pk != candidate.pk:
            context["pairwise"] = pairwise_summary(first=candidate, second=base)
            context["review_link"] = reverse("pairwise", args=[project.slug]) + query_with(
                request, sort=None, show=None
            )
        if comparison["cases"]:
            page, items = paired_cases(request, project, comparison["cases"], show, order)
            newer, older = page_links(request, page)
            context.update(page=page, paired=items, newer=newer, older=older, filters=PAIRED_CASE_FILTERS)
    return page_render(request, "experiments/compare.html", context)
