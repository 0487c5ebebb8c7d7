"""Pages: experiments (with their pass rate over time), the comparison, gate runs."""

from datasets.experiments import experiment_get, experiment_list
from experiments.comparison import experiments_compare
from experiments.selectors import experiments_overview, gate_run_list
from web.pages.access import cursor_page, page_render, project_page
from web.pages.plots import pass_rate_plot


@project_page
def experiments_page(request, project):
    experiments = experiments_overview(project=project)
    plot = pass_rate_plot([(e.name, e.created_at, e.pass_rate) for e in experiments])
    return page_render(request, "experiments/list.html", {"experiments": experiments[::-1], "plot": plot})


@project_page
def compare_page(request, project):
    names = list(experiment_list(project=project).order_by("-created_at").values_list("name", flat=True))
    base_name, candidate_name = request.GET.get("base"), request.GET.get("candidate")
    comparison = None
    if base_name and candidate_name:
        base = experiment_get(project=project, name=base_name)
        candidate = experiment_get(project=project, name=candidate_name)
        comparison = experiments_compare(base=base, candidate=candidate)
    return page_render(
        request,
        "experiments/compare.html",
        {"names": names, "base": base_name, "candidate": candidate_name, "comparison": comparison},
    )


@project_page
def gate_runs_page(request, project):
    verdict = request.GET.get("verdict") if request.GET.get("verdict") in ("PASS", "FAIL") else None
    runs = gate_run_list(project=project, dataset=request.GET.get("dataset") or None, verdict=verdict)
    items, newer, older = cursor_page(request, runs, ordering=("-created_at", "-id"))
    return page_render(
        request, "experiments/gate_runs.html", {"gate_runs": items, "newer": newer, "older": older, "verdict": verdict}
    )
