"""Page: pairwise review of two experiments, one case at a time.

``experiments/pairwise/?base=A&candidate=B`` opens the first case both answered that the
reviewer has not judged yet (``&case=<id>`` opens a given one): the question, both
answers and tool calls side by side (stacked on a phone), what differs field by field,
and three buttons (keys ``1`` base better, ``2`` tie, ``3`` candidate better). A POST
records the judgement (``scoring.review.pairwise``) and opens the next case; viewers
read but do not judge. The figures of the pair are on the compare page.
"""

from urllib.parse import urlencode

from django.shortcuts import redirect
from django.urls import reverse

from datasets.experiments import experiment_get
from datasets.run_selectors import runs_answers
from evalsite.models import Role
from scoring.models import PairwiseVerdict
from scoring.review.pairwise import author_verdicts, pairwise_cases, pairwise_judge, pairwise_summary
from web.pages.access import page_render, project_page
from web.pages.compare import answer_view
from web.pages.diffs import answers_field_diff
from web.pages.refusals import refusal

VERDICT_LABELS = {
    PairwiseVerdict.WORSE: "Base better",
    PairwiseVerdict.TIE: "Tie",
    PairwiseVerdict.BETTER: "Candidate better",
}


def _address(request, project, base, candidate, case_id=None):
    query = {"base": base.name, "candidate": candidate.name, **({"case": case_id} if case_id else {})}
    return f"{reverse('pairwise', args=[project.slug])}?{urlencode(query)}"


def _chosen(rows, verdicts, wanted):
    """The index of the case to show: the one asked for, else the first not judged (None when all are)."""
    if wanted is not None:
        return next((i for i, row in enumerate(rows) if str(row["case"].pk) == wanted), None)
    return next((i for i, row in enumerate(rows) if row["case"].pk not in verdicts), None)


def _case_context(request, project, base, candidate, rows, index, verdicts):
    row = rows[index]
    answers = runs_answers(project=project, trace_ids=[row["second"].trace_id, row["first"].trace_id])
    base_answer, candidate_answer = (answer_view(answers, row[side].trace_id) for side in ("second", "first"))
    return {
        "case": row["case"],
        "base_run": row["second"].trace_id,
        "candidate_run": row["first"].trace_id,
        "base_answer": base_answer,
        "candidate_answer": candidate_answer,
        "diff": answers_field_diff(answers.get(row["second"].trace_id), answers.get(row["first"].trace_id)),
        "current": verdicts.get(row["case"].pk),
        "previous": _address(request, project, base, candidate, rows[index - 1]["case"].pk) if index else None,
        "next": _address(request, project, base, candidate, rows[index + 1]["case"].pk)
        if index + 1 < len(rows)
        else None,
        "position": index + 1,
    }


@project_page
def pairwise_page(request, project):
    if not (request.GET.get("base") and request.GET.get("candidate")):
        return redirect("compare", project.slug)
    base = experiment_get(project=project, name=request.GET["base"], field="base")
    candidate = experiment_get(project=project, name=request.GET["candidate"], field="candidate")
    refused = None
    if request.method == "POST":
        with refusal(request=request) as refused:
            pairwise_judge(
                project=project, first=candidate, second=base, case_id=_case_id(request.POST.get("case_id")),
                verdict=request.POST.get("verdict", ""), author=request.user.get_username(), reviewer=request.user,
            )  # fmt: skip
        if not refused:
            return redirect(_address(request, project, base, candidate))
    rows = pairwise_cases(project=project, first=candidate, second=base) if base.pk != candidate.pk else []
    verdicts = author_verdicts(first=candidate, second=base, author=request.user.get_username())
    index = _chosen(rows, verdicts, request.GET.get("case"))
    context = {
        "base": base,
        "candidate": candidate,
        "total": len(rows),
        "judged": sum(1 for row in rows if row["case"].pk in verdicts),
        "can_judge": request.membership.allows(Role.REVIEWER),
        "verdicts": [(value, VERDICT_LABELS[value], key) for key, value in enumerate(VERDICT_LABELS, 1)],
        "summary": pairwise_summary(first=candidate, second=base) if base.pk != candidate.pk else None,
        "compare": f"{reverse('compare', args=[project.slug])}?{urlencode({'base': base.name, 'candidate': candidate.name})}",
    }
    if index is not None:
        context.update(_case_context(request, project, base, candidate, rows, index, verdicts))
    return page_render(request, "experiments/pairwise.html", context, status=400 if refused else 200)


def _case_id(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1  # no such case: the service names the field
