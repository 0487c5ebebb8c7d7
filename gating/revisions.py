"""Policy revisions: which changes loosen the gate, who may make them, and their record.

A change *loosens* the gate when it can turn a FAIL into a PASS: a lower floor,
``trials`` or ``trial_pass_ratio``; a higher ``max_flaky``, ``max_abstained`` or
``tolerance`` (``max_flaky`` null is no limit, the loosest); a gating scorer removed;
``input_match`` made less strict (``require`` → ``warn`` → ``off``);
``ratchet`` or ``fail_on_regression`` turned off; a lower ``judge_min_kappa`` (null: an
uncalibrated judge gates, the loosest) or ``judge_min_labels``; a baseline cleared or
moved to an experiment whose latest pass rate on the dataset is lower (or unknown).

Loosening takes an admin (a key with the ``admin`` scope, or a project admin in the
pages) and a written reason; any other change takes ``curate``. Every change, either
way, is a ``PolicyRevision`` written with the policy in one transaction. Which direction
loosens each field is declared with the field, in ``gating.policy_fields``.
"""

from evalsite.errors import Invalid, ScopeMissing
from evalsite.models import Membership, Role
from evalsite.scopes import ADMIN, key_has_scope
from gating.models import GateRun, PolicyRevision
from gating.policy_fields import change_loosens


def policy_changes(policy, changes):
    """``[{field, old, new, loosens}]`` for each field of ``changes`` whose value differs."""
    listed = []
    for field, new in changes.items():
        old = getattr(policy, field)
        if field == "baseline":
            if (old and old.pk) == (new and new.pk):
                continue
            loosens = old is not None and (new is None or _baseline_worse(policy.dataset, old, new))
            listed.append({"field": field, "old": old and old.name, "new": new and new.name, "loosens": bool(loosens)})
        elif old != new:
            listed.append({"field": field, "old": old, "new": new, "loosens": change_loosens(field, old, new)})
    return listed


def _latest_pass_rate(dataset, experiment):
    run = (
        GateRun.objects.filter(dataset=dataset, experiment=experiment, status=GateRun.Status.DONE)
        .exclude(pass_rate=None)
        .order_by("-created_at", "-id")
        .first()
    )
    return run.pass_rate if run else None


def _baseline_worse(dataset, old, new):
    old_rate, new_rate = _latest_pass_rate(dataset, old), _latest_pass_rate(dataset, new)
    return new_rate is None or (old_rate is not None and new_rate < old_rate)


def _is_admin(policy, key, user):
    if key is not None:
        return key_has_scope(key, ADMIN)
    if user is None:  # the command line, or the Django admin's own checks
        return True
    return Membership.objects.filter(project_id=policy.dataset.project_id, user=user, role=Role.ADMIN).exists()


def revision_authorise(policy, changed, *, reason, key, user):
    """Refuse a loosening without an admin (403 naming ``admin``) or without a reason (400 naming ``reason``)."""
    loosening = [c["field"] for c in changed if c["loosens"]]
    if not loosening:
        return
    if not _is_admin(policy, key, user):
        raise ScopeMissing(
            ADMIN,
            detail=f"This change loosens the gate ({', '.join(loosening)}): only an admin may make it, with a reason. "
            "Ask a project admin, or tighten instead.",
        )
    if not (reason or "").strip():
        raise Invalid(
            f"This change loosens the gate ({', '.join(loosening)}): say why in `reason`.",
            errors=[{"field": "reason", "message": "is required to loosen the gate"}],
        )


def author_name(*, key=None, user=None, gate_run=None):
    """Who, in words: ``key ci-main``, ``alice``, ``gate run 12 (key ci-main)``."""
    who = f"key {key.name or key.prefix}" if key is not None else (user.get_username() if user else "command line")
    return f"gate run {gate_run.pk} ({who})" if gate_run is not None else who


def revision_record(policy, changed, *, source, reason="", key=None, user=None, gate_run=None):
    """Write the next revision of ``policy`` (locked by the caller) and bump its number; the caller saves it."""
    policy.revision += 1
    return PolicyRevision.objects.create(
        policy=policy,
        number=policy.revision,
        source=source,
        changed_by=user,
        changed_by_key=key,
        author=author_name(key=key, user=user, gate_run=gate_run),
        reason=(reason or "").strip(),
        changes=changed,
        loosens=any(c["loosens"] for c in changed),
        gate_run=gate_run,
    )


def policy_revisions(dataset):
    """The revisions of ``dataset``'s policy, newest first (a queryset, for paging)."""
    return PolicyRevision.objects.filter(policy__dataset=dataset).order_by("-number")


def revision_as_dict(revision):
    return {
        "revision": revision.number,
        "at": revision.created_at,
        "author": revision.author,
        "source": revision.source,
        "reason": revision.reason,
        "loosens": revision.loosens,
        "changes": revision.changes,
        "gate_run_id": revision.gate_run_id,
    }
