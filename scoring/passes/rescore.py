"""Acting on abstentions and skips from the review queue and the admin: re-score, mark reviewed."""

from django.utils import timezone

from evalsite.errors import Invalid
from evalsite.models import Project
from scoring.models import ScoringPass
from scoring.passes.services import pass_start
from scoring.selection.requests import entry_scorer


def abstentions_rescore(*, abstentions, requested_by=None):
    """Start one pass per (project, original pass) over the runs and scorers of ``abstentions``.

    Each pass reuses the original pass's config for those scorers and writes only what
    is missing. Returns ``(passes, problems)``: the passes started, and for each group
    that could not be started, the reason (``Invalid`` detail).
    """
    groups = {}
    rows = abstentions.order_by("id").values_list("project_id", "scoring_pass_id", "trace__trace_id", "scorer")
    for project_id, pass_id, trace_id, scorer in rows:
        group = groups.setdefault((project_id, pass_id), {"trace_ids": {}, "scorers": {}})
        group["trace_ids"][trace_id] = None
        group["scorers"][scorer] = None
    originals = {
        pk: (scorers, config)
        for pk, scorers, config in ScoringPass.objects.filter(pk__in={p for _, p in groups if p}).values_list(
            "pk", "scorers", "config"
        )
    }
    projects = Project.objects.in_bulk({project_id for project_id, _ in groups})
    started, problems = [], []
    for (project_id, pass_id), group in groups.items():
        named, config = originals.get(pass_id) or ([], {})
        # A scorer the pass named with configs of its own is named again with them.
        entries = [e for e in named if entry_scorer(e) in group["scorers"]]
        entries += [s for s in group["scorers"] if not any(entry_scorer(e) == s for e in entries)]
        data = {
            "scorers": entries,
            "config": {s: config[s] for s in entries if isinstance(s, str) and s in config},
            "trace_ids": list(group["trace_ids"]),
        }
        try:
            started.append(pass_start(project=projects[project_id], data=data, requested_by=requested_by))
        except Invalid as exc:
            problems.append(f"{projects[project_id].slug}: {exc.detail}")
    return started, problems


def abstentions_mark_reviewed(*, abstentions, user):
    """Mark ``abstentions`` reviewed by ``user`` now (those already reviewed keep their mark)."""
    return abstentions.filter(reviewed_at__isnull=True).update(reviewed_by=user, reviewed_at=timezone.now())
