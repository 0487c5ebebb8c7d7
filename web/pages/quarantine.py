"""Quarantine a case, or release it, from the case page or from its dataset's case list.

A quarantine needs a reason (``datasets.cases``), and so does a release (kept on the
case's revision, shown in its history): an empty box is answered in the page's words,
naming the case and the box, and nothing is written. Releasing counts the case again
(it cannot turn a FAIL into a PASS) and clears the quarantine's reason. The form says
where it came from (``back``): the reader returns to the dataset's case list or to the case.
"""

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse

from datasets.case_selectors import ALL_STATUSES
from datasets.cases import case_update
from datasets.models import CaseStatus
from web.pages.refusals import refusal

REASON_LABEL = "Why quarantine it"
RELEASE_LABEL = "Why release it"


def quarantine_post(request, case, quarantined):
    """Apply the posted quarantine (or release) of ``case``; the redirect back to where the form was."""
    name = case.name
    verb, box, field = ("quarantined", REASON_LABEL, "quarantine_reason") if quarantined else (
        "released", RELEASE_LABEL, "release_reason")  # fmt: skip
    reason = (request.POST.get(field) or "").strip()
    if not reason:
        messages.error(request, f"Case {name} was not {verb}: write why in the '{box}' box, then try again.")
        return _back(request, case)
    data = {"quarantined": True, "quarantine_reason": reason} if quarantined else {"quarantined": False}
    with refusal(request=request, prefix=f"Case {name} was not {verb}: ") as refused:
        case, changed = case_update(case=case, data=data, by=request.user, reason="" if quarantined else reason)
    if not refused and changed:
        messages.success(
            request,
            f"Case {name} is quarantined: the gate runs and reports it, and does not count it."
            if quarantined
            else f"Case {name} is released from quarantine: the gate counts it again.",
        )
    elif not refused:
        messages.info(request, f"Case {name} was already {'quarantined' if quarantined else 'counted'}.")
    return _back(request, case)


def _back(request, case):
    project = case.dataset.project.slug
    if request.POST.get("back") == "dataset":
        url = reverse("dataset", kwargs={"slug": project, "name": case.dataset.name})
        status = request.POST.get("status")
        status = status if status in (*CaseStatus.values, ALL_STATUSES) else None
        return redirect(f"{url}?status={status}#case-{case.pk}" if status else f"{url}#case-{case.pk}")
    return redirect("case", slug=project, case_id=case.pk)
