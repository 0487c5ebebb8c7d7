"""Agreement between a queue's reviewers, their disagreements, and the adjudication that settles them.

Reviewers' labels are the ``label:<name>`` scores written by people (``by`` user or key).
Per label config, ``reviewer_agreement`` compares them item by item with
``checks.agreement``: Cohen's kappa when exactly two reviewers labelled the items compared,
Krippendorff's alpha otherwise (nominal for boolean and categorical labels, interval for
numeric ones), with the number of items compared.

A disagreement is an item of a queue where the reviewers who labelled it there gave
different labels of one config, and no reference label settles it yet. An admin (or a
key with ``curate``) decides with ``adjudicate``: the decision is the item's **reference
label**, a ``label:<name>`` score with ``by`` ``reference`` (one per run and config,
its ``detail`` naming who decided, when, and the reviewers' labels it settled). The
judge's calibration takes a reference label as the reviewers' verdict on that run
(``scoring.judge.calibration``), ahead of their majority; it is never a reviewer's label
in the agreement figures.
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from checks.agreement import INTERVAL, NOMINAL, agreement_figure
from checks.scorers.values import canonical_json
from evalsite.errors import Invalid
from evalsite.quota import quota_reserve
from scoring.labels import REFERENCE, REFERENCE_HASH, label_config_list, label_scorer_id, label_value_read
from scoring.models import LabelKind, Score, ScoreSource
from scoring.review.assignment import reviewers_of
from scoring.score_configs import score_configs_store

REFERENCE_KEY = {"author": REFERENCE, "by": REFERENCE}
HISTORY_KEPT = 20


def _reviewer_labels(project, config, runs=None):
    """``{run pk: {author: label}}`` of people's labels of ``config`` (reference labels left out)."""
    rows = Score.objects.filter(project=project, scorer=config.scorer_id, source=ScoreSource.HUMAN)
    rows = rows.exclude(config_hash=REFERENCE_HASH)
    rows = rows.filter(trace_id__in=list(runs)) if runs is not None else rows
    found = {}
    for trace_pk, detail in rows.values_list("trace_id", "detail"):
        found.setdefault(trace_pk, {})[detail.get("author")] = detail.get("label")
    return found


@dataclass(frozen=True)
class ReviewerAgreement:
    config: str
    kind: str
    method: str
    value: float | None
    items: int
    reviewers: int

    def as_dict(self):
        return {k: getattr(self, k) for k in ("config", "kind", "method", "value", "items", "reviewers")}


def reviewer_agreement(*, project, config, queue=None):
    """How much people's labels of ``config`` agree, over the project's runs (or ``queue``'s items)."""
    if queue is not None:
        reviewed = reviewers_of(queue)
        labels = {
            item: {a: v for a, v in by.items() if a in reviewed.get(item, [])}
            for item, by in _reviewer_labels(project, config, runs=reviewed).items()
        }
    else:
        labels = _reviewer_labels(project, config)
    figure = agreement_figure(labels, metric=INTERVAL if config.kind == LabelKind.NUMERIC else NOMINAL)
    return ReviewerAgreement(config.name, config.kind, figure.method, figure.value, figure.items, figure.reviewers)


def reviewer_agreements(*, project, queue=None):
    """``ReviewerAgreement`` of every label config in use (not archived)."""
    configs = label_config_list(project=project, include_archived=False)
    return [reviewer_agreement(project=project, config=c, queue=queue) for c in configs]


def queue_disagreements(*, queue):
    """The queue's open disagreements, oldest item first: ``[{"item", "trace", "config", "labels"}]``.

    ``labels``: ``[{"author", "label", "comment"}]`` of the reviewers who labelled the item in
    this queue. An item with a reference label of that config is settled and not listed.
    """
    reviewed = reviewers_of(queue)
    if not reviewed:
        return []
    configs = {c.scorer_id: c for c in label_config_list(project=queue.project, include_archived=False)}
    rows = Score.objects.filter(trace_id__in=list(reviewed), scorer__in=list(configs), source=ScoreSource.HUMAN)
    labels, settled = {}, set()
    for score in rows.select_related("trace").order_by("trace_id", "scorer", "id"):
        key = (score.trace_id, score.scorer)
        if score.config_hash == REFERENCE_HASH:
            settled.add(key)
        elif score.detail.get("by") == "user" and score.detail.get("author") in reviewed[score.trace_id]:
            labels.setdefault(key, (score.trace, []))[1].append(
                {"author": score.detail.get("author"), "label": score.detail.get("label"), "comment": score.reason}
            )
    found = []
    for (item, scorer), (trace, given) in labels.items():
        if (item, scorer) not in settled and len({canonical_json(g["label"]) for g in given}) > 1:
            found.append({"item": item, "trace": trace, "config": configs[scorer], "labels": given})
    return found


def reference_label(trace, config):
    """The run's reference label of ``config`` (an adjudication), or None."""
    return Score.objects.filter(trace=trace, scorer=label_scorer_id(config.name), config_hash=REFERENCE_HASH).first()


def adjudicate(*, queue, trace, config, value, comment="", decided_by):
    """Settle ``trace``'s labels of ``config`` in ``queue`` with ``value``: its reference label. Returns the score.

    ``decided_by``: ``{"name", "by": "user"|"key"}``. ``Invalid`` naming ``item`` when the run
    was not labelled in this queue, ``value`` when it does not fit the config. A second
    decision replaces the first, kept in ``detail.history``.
    """
    reviewed = reviewers_of(queue, items=[trace.pk]).get(trace.pk)
    if not reviewed:
        raise Invalid("This run was not reviewed in this queue.", errors=[{"field": "item", "message": "not reviewed"}])
    scaled, passed = label_value_read(config, value)
    labels = [
        {"author": a, "label": v}
        for a, v in _reviewer_labels(queue.project, config, runs=[trace.pk]).get(trace.pk, {}).items()
        if a in reviewed
    ]
    now = timezone.now().isoformat()
    detail = {"label": value, "author": decided_by["name"], "by": REFERENCE, "decided_by": decided_by["name"],
              "decided_by_kind": decided_by["by"], "at": now, "reviewers": labels, "queue": queue.pk}  # fmt: skip
    with transaction.atomic():
        type(trace).objects.select_for_update().filter(pk=trace.pk).first()
        score = reference_label(trace, config)
        if score is not None:
            previous = {k: score.detail.get(k) for k in ("label", "decided_by", "at")}
            detail["history"] = [previous, *score.detail.get("history", [])][:HISTORY_KEPT]
            score.value, score.passed, score.reason, score.detail = scaled, passed, comment, detail
            score.run_revision = trace.revision
            score.save(update_fields=["value", "passed", "reason", "detail", "run_revision"])
            return score
        quota_reserve(project=queue.project, count=1)
        score_configs_store(project_id=queue.project.pk, configs={REFERENCE_HASH: canonical_json(REFERENCE_KEY)})
        return Score.objects.create(
            project=queue.project, trace=trace, scorer=config.scorer_id, scorer_version="1",
            config_hash=REFERENCE_HASH, value=scaled, passed=passed, reason=comment, source=ScoreSource.HUMAN,
            experiment_id=trace.experiment_id, case_id=trace.case_id, run_revision=trace.revision,
            detail={**detail, "history": []},
        )  # fmt: skip
