"""Gate policies: read with defaults, change through the API, lower the floor as an admin.

Every change is a ``PolicyRevision`` (``gating.revisions``: loosening takes an admin
and a reason). The floor (``min_pass_rate``) only goes up through the API and the
ratchet, whatever the path: ``init_floor`` sets it once, while it has no history.
Lowering it takes a project admin in the Django admin and a written reason; every move
of the floor is kept in ``FloorChange``.
"""

from django.db import transaction

from evalsite.errors import Conflict, Invalid
from gating.models import FloorChange, GatePolicy, PolicyRevision
from gating.policy_fields import POLICY_FIELDS
from gating.revisions import policy_changes, revision_authorise, revision_record
from scoring.labels import label_config_list
from scoring.selection.catalog import catalog_for


def policy_for(dataset):
    """The dataset's policy; an unsaved default policy when none was set."""
    return GatePolicy.objects.select_related("baseline").filter(dataset=dataset).first() or GatePolicy(dataset=dataset)


def _scorers_check(project, scorer_ids):
    available = {**catalog_for(project).scorers, **{c.scorer_id: c for c in label_config_list(project=project)}}
    unknown = [s for s in scorer_ids if s not in available]
    if unknown:
        raise Invalid(
            "Unknown scorers.",
            errors=[
                {"field": "scorers", "message": f"unknown scorer {s!r}; known: {', '.join(sorted(available))}"}
                for s in unknown
            ],
        )


def policy_update(*, dataset, changes, reason="", key=None, user=None, source=PolicyRevision.Source.API):
    """Apply ``changes`` (validated values of POLICY_FIELDS; ``baseline`` an Experiment or None).

    Every change is a revision (``gating.revisions``); a loosening needs an admin and
    a ``reason``. Raising the floor is recorded in the floor history; lowering it is a
    ``Conflict`` (409): the floor only moves down by an admin, with a reason, in the
    admin. Changing nothing writes nothing. Locks the policy row.
    """
    if "scorers" in changes:
        _scorers_check(dataset.project, changes["scorers"])
    with transaction.atomic():
        policy = _locked_policy(dataset)
        new_floor = changes.get("min_pass_rate", policy.min_pass_rate)
        if new_floor < policy.min_pass_rate:
            raise Conflict(
                f"The floor cannot be lowered through the API ({policy.min_pass_rate:.3f} → {new_floor:.3f}). "
                "Thresholds only ratchet up with evidence; a project admin can lower it in the admin with a written "
                "reason, which is kept in the floor history.",
                errors=[
                    {"field": "min_pass_rate", "message": f"must be at least the current floor {policy.min_pass_rate}"}
                ],
            )
        baseline = changes.get("baseline", policy.baseline)
        if baseline is not None and baseline.project_id != dataset.project_id:
            raise Invalid(
                "The baseline must be an experiment of this project.",
                errors=[{"field": "baseline", "message": "unknown experiment"}],
            )
        changed = policy_changes(policy, {name: changes[name] for name in POLICY_FIELDS if name in changes})
        if not changed:
            return policy
        revision_authorise(policy, changed, reason=reason, key=key, user=user)
        old_floor = policy.min_pass_rate
        for name in POLICY_FIELDS:
            if name in changes:
                setattr(policy, name, changes[name])
        revision_record(policy, changed, source=source, reason=reason, key=key, user=user)
        policy.save()
        if new_floor != old_floor:
            FloorChange.objects.create(
                policy=policy, old_floor=old_floor, new_floor=new_floor, source=FloorChange.Source.API,
                changed_by_key=key, changed_by=user,
            )  # fmt: skip
    return policy


def floor_lower(*, policy, new_floor, reason, user):
    """An admin lowers (or sets) the floor with a written reason; kept in the floor history and as a revision."""
    if not reason or not reason.strip():
        raise Invalid("Give the reason for changing the floor.", errors=[{"field": "reason", "message": "is required"}])
    if not 0 <= new_floor <= 1:
        raise Invalid(
            "The floor is a pass rate between 0 and 1.",
            errors=[{"field": "min_pass_rate", "message": "must be between 0 and 1"}],
        )
    with transaction.atomic():
        policy = _locked_policy(policy.dataset)
        old_floor = policy.min_pass_rate
        if new_floor == old_floor:
            return policy
        changed = policy_changes(policy, {"min_pass_rate": new_floor})
        policy.min_pass_rate = new_floor
        revision_record(policy, changed, source=PolicyRevision.Source.ADMIN, reason=reason, user=user)
        policy.save(update_fields=["min_pass_rate", "revision", "updated_at"])
        FloorChange.objects.create(
            policy=policy, old_floor=old_floor, new_floor=new_floor, source=FloorChange.Source.ADMIN,
            reason=reason.strip(), changed_by=user,
        )  # fmt: skip
    return policy


def policy_and_floor_update(*, dataset, changes, floor, reason, user, source):
    """A person's edit of the policy and its floor together (page, admin): both kept, or neither.

    ``floor`` is the floor the person asks for (``None``: left as it is).
    """
    with transaction.atomic():
        policy = policy_for(dataset)
        if changes:
            policy = policy_update(dataset=dataset, changes=changes, reason=reason, user=user, source=source)
        if floor is not None and floor != policy.min_pass_rate:
            policy = floor_lower(policy=policy, new_floor=floor, reason=reason, user=user)
    return policy


def floor_initialisable(policy):
    """Whether ``init_floor`` may still set the floor: only while no baseline was ever recorded and the floor has
    no history. Clearing the baseline does not reopen it, so the floor never goes down through the API."""
    if policy.pk is None:
        return True
    if policy.baseline_id is not None or policy.floor_changes.exists():
        return False
    return not any(c["field"] == "baseline" for r in policy.revisions.only("changes") for c in r.changes)


def baseline_record(*, dataset, experiment, gate_run, floor_to, initial=False):
    """Record ``experiment`` as the dataset's baseline and move the floor to ``floor_to`` (in the caller's
    transaction), as a revision by the gate run. A ratchet only raises the floor; ``initial`` (the first
    baseline, ``init_floor``, allowed while the floor has no history) sets it where the project stands."""
    policy = _locked_policy(dataset)
    old_floor = policy.min_pass_rate
    # The first baseline always writes the floor's first history row, even at the same
    # value: that row is what closes init_floor for good (floor_initialisable).
    moved_floor = floor_to > old_floor or initial
    changed = policy_changes(policy, {"baseline": experiment, **({"min_pass_rate": floor_to} if moved_floor else {})})
    policy.baseline = experiment
    if moved_floor:
        policy.min_pass_rate = floor_to
        if initial:
            source, reason = (
                FloorChange.Source.INIT,
                f"the floor starts where the first baseline {experiment.name} stands",
            )
        else:
            source, reason = (
                FloorChange.Source.RATCHET,
                f"{experiment.name} passed at {floor_to:.3f} and was recorded as the baseline",
            )
        FloorChange.objects.create(
            policy=policy, old_floor=old_floor, new_floor=floor_to, source=source,
            reason=f"{reason} ({floor_to:.3f})" if initial else reason, gate_run=gate_run,
        )  # fmt: skip
    if changed:
        revision_record(
            policy, changed, source=PolicyRevision.Source.GATE, key=gate_run.requested_by_key,
            user=gate_run.requested_by, gate_run=gate_run,
            reason=f"{experiment.name} recorded as the baseline by gate run {gate_run.pk}",
        )  # fmt: skip
    policy.save()
    return policy


def _locked_policy(dataset):
    GatePolicy.objects.get_or_create(dataset=dataset)
    return GatePolicy.objects.select_for_update().select_related("dataset").get(dataset=dataset)
