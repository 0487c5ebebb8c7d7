"""Pages: experiments (with their pass rate over time) and the list of gate runs."""

from gating.selectors import experiments_overview, gate_run_list
from web.pages.access import cursor_page, page_render, project_page
from web.pages.plots import pass_rate_plot


@project_page
def experiments_page(request, project):
    experiments = experiments_overview(project=project)
    gate_plot = pass_rate_plot(
        [(e.name, e.created_at, e.latest_gate.pass_rate if e.latest_gate else None) for e in experiments],
        title="Gate pass rate by experiment, oldest first",
    )
    scorers = sorted({scorer for e in experiments for scorer in e.scorer_rates})
    for experiment in experiments:
        experiment.scorer_cells = [experiment.scorer_rates.get(scorer) for scorer in scorers]
    return page_render(
        request,
        "experiments/list.html",
        {"experiments": experiments[::-1], "gate_plot": gate_plot, "scorers": scorers},
    )


@project_page
def gate_runs_page(request, project):
    verdict = request.GET.get("verdict") if request.GET.get("verdict") in ("PASS", "FAIL") else None
    runs = gate_run_list(project=project, dataset=request.GET.get("dataset") or None, verdict=verdict)
    items, newer, older = cursor_page(request, runs, ordering=("-created_at", "-id"))
    return page_render(
        request, "experiments/gate_runs.html", {"gate_runs": items, "newer": newer, "older": older, "verdict": verdict}
    )
