"""What moved the bar since the baseline: the verdict's ``bar_moved`` list.

The bar a verdict is measured against is the policy, the floor, the golden set and the
judge. Since the baseline was recorded (the revision that set it; without a baseline,
since the dataset's previous gate run), each of these is listed, newest first, with
who, when and why:

- a policy revision that loosens the gate (``gating.revisions``);
- a move of the floor, either way;
- a case archived, quarantined, or whose expectations lost a check (an expectation
  removed, or the expected answer cleared);
- a change of the project's judge (endpoint, model or criteria).

Tightening the policy is not listed: it cannot turn a FAIL into a PASS.
"""

from datasets.models import CaseRevision
from evalsite.models import AuditEntry
from gating.models import FloorChange, GateRun, PolicyRevision
from scoring.judge.services import JUDGE_CHANGE

BAR_MOVES_SHOWN = 50


def bar_since(policy, dataset, gate_run):
    """The time the bar was last set: when the baseline was recorded, else the previous gate run."""
    if policy.pk and policy.baseline_id:
        for revision in PolicyRevision.objects.filter(policy=policy).only("changes", "created_at")[:200]:
            if any(c["field"] == "baseline" and c["new"] == policy.baseline.name for c in revision.changes):
                return revision.created_at
    previous = GateRun.objects.filter(dataset=dataset).exclude(pk=gate_run.pk).order_by("-created_at", "-id").first()
    return previous.created_at if previous else None


def bar_moves(policy, dataset, since):
    """``(moves, more)``: the newest ``BAR_MOVES_SHOWN`` moves since ``since`` (None: ever), and how many more."""
    moves = [*_policy_moves(policy, since), *_floor_moves(policy, since), *_case_moves(dataset, since)]
    moves += _judge_moves(dataset.project_id, since)
    moves.sort(key=lambda m: m["at"], reverse=True)
    shown = moves[:BAR_MOVES_SHOWN]
    for move in shown:
        move["at"] = move["at"].isoformat(timespec="seconds")
    return shown, len(moves) - len(shown)


def _after(queryset, field, since):
    return queryset if since is None else queryset.filter(**{f"{field}__gt": since})


def _value(value):
    return "none" if value is None else value


def _policy_moves(policy, since):
    if not policy.pk:
        return []
    revisions = _after(PolicyRevision.objects.filter(policy=policy, loosens=True), "created_at", since)
    return [
        {
            "kind": "policy",
            "what": ", ".join(
                f"{c['field']} {_value(c['old'])} → {_value(c['new'])}" for c in r.changes if c["loosens"]
            ),
            "by": r.author,
            "at": r.created_at,
            "reason": r.reason,
            "revision": r.number,
        }
        for r in revisions[: BAR_MOVES_SHOWN + 1]
    ]


def _floor_moves(policy, since):
    if not policy.pk:
        return []
    changes = _after(FloorChange.objects.filter(policy=policy), "created_at", since).select_related(
        "changed_by", "changed_by_key"
    )
    return [
        {
            "kind": "floor",
            "what": f"floor {c.old_floor:.3f} → {c.new_floor:.3f} ({c.source})",
            "by": _who(c.changed_by, c.changed_by_key, c.source),
            "at": c.created_at,
            "reason": c.reason,
        }
        for c in changes[: BAR_MOVES_SHOWN + 1]
    ]


def _who(user, key, fallback=""):
    if user is not None:
        return user.get_username()
    if key is not None:
        return f"key {key.name or key.prefix}"
    return fallback


def _case_moves(dataset, since):
    revisions = _after(
        CaseRevision.objects.filter(case__dataset=dataset).exclude(action=CaseRevision.Action.CREATED),
        "changed_at",
        since,
    ).select_related("case", "changed_by", "changed_by_key")
    moves = []
    for r in revisions.order_by("-changed_at")[: 4 * BAR_MOVES_SHOWN]:
        what = _case_loosened(r)
        if what:
            moves.append(
                {"kind": "case", "what": f"case {r.case.name!r} {what}", "by": _who(r.changed_by, r.changed_by_key),
                 "at": r.changed_at, "reason": (r.new or {}).get("quarantine_reason", "") or ""}
            )  # fmt: skip
    return moves


def _case_loosened(revision):
    """What a case revision did to the bar, in words, or ``None`` if it did not lower it."""
    if revision.action == CaseRevision.Action.ARCHIVED:
        return "archived"
    old, new = revision.old or {}, revision.new or {}
    if new.get("quarantined") and not old.get("quarantined"):
        return "quarantined"
    lost = sorted(set(old.get("expectations") or {}) - set(new.get("expectations") or {}))
    if old.get("expected_output") and not new.get("expected_output"):
        lost.append("expected_output")
    return f"lost checks: {', '.join(lost)}" if lost else None


def _judge_moves(project_id, since):
    entries = _after(AuditEntry.objects.filter(project_id=project_id, action=JUDGE_CHANGE), "at", since)
    return [
        {"kind": "judge", "what": e.summary, "by": e.actor_name or "command line", "at": e.at, "reason": ""}
        for e in entries[: BAR_MOVES_SHOWN + 1]
    ]
