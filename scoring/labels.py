"""Labels: human scores on runs, against the project's label configs.

A label config (``LabelConfig``) is written by a project admin: ``name``,
``description``, ``kind`` (``boolean``, ``categorical`` with ``options`` and the
``passing`` ones, ``numeric`` with ``minimum``, ``maximum`` and ``pass_threshold``),
archived rather than deleted. A label is a ``Score`` with source ``human`` and scorer
``label:<name>``: ``value`` is the label on 0..1 (true = 1; a category by its place in
``options``; a number scaled between minimum and maximum), ``passed`` says whether it
is a passing label, ``reason`` is the comment, and ``detail`` keeps the label as given,
its author and the previous values. One current label per (run, config, author): the
author (a user's name, or an API key's) is the score's config, so a second label by the
same author replaces the first and keeps it in ``detail.history``.

Every judge criterion gets a boolean label config of the same name when it is
configured (``label_configs_for_criteria``), so reviewers can calibrate it.
"""

import hashlib

from django.db import transaction
from django.utils import timezone

from checks.scorers.values import canonical_json, json_equal
from evalsite.errors import Invalid, NotFound
from evalsite.quota import quota_reserve
from scoring.models import LabelConfig, LabelKind, Score, ScoreSource
from scoring.score_configs import score_configs_store

LABEL_PREFIX = "label:"
NAME_MAX = 100
COMMENT_MAX = 2000
HISTORY_KEPT = 20
_CONFIG_FIELDS = (
    "name",
    "description",
    "kind",
    "options",
    "passing",
    "minimum",
    "maximum",
    "pass_threshold",
    "archived",
)


# An adjudicated decision, the run's reference label of a config (``scoring.review.adjudication``):
# one per run and config, whoever decided; the judge's calibration reads it ahead of the majority.
REFERENCE = "reference"
REFERENCE_HASH = hashlib.sha256(canonical_json({"author": REFERENCE, "by": REFERENCE}).encode()).hexdigest()


def label_scorer_id(name):
    return f"{LABEL_PREFIX}{name}"


def label_config_name(scorer_id):
    """The config name of a ``label:<name>`` scorer id, or None for another scorer."""
    return scorer_id[len(LABEL_PREFIX) :] if scorer_id.startswith(LABEL_PREFIX) else None


# --- label configs ------------------------------------------------------------------


def label_config_list(*, project, include_archived=True, criteria_only=False):
    """The project's label configs; without the archived ones, or only the judge's criteria, when asked."""
    configs = LabelConfig.objects.filter(project=project)
    configs = configs.filter(criterion=True) if criteria_only else configs
    return configs if include_archived else configs.filter(archived=False)


def label_config_get(*, project, name, field="config"):
    config = LabelConfig.objects.filter(project=project, name=name).first() if "\x00" not in name else None
    if config is None:
        raise NotFound(
            f"No label config named {name!r} in this project.", errors=[{"field": field, "message": "unknown label"}]
        )
    return config


def label_config_create(*, project, data):
    """A new label config from ``data``; ``Invalid`` naming each bad field, ``Conflict``-free name check."""
    fields = _config_fields_clean(data, creating=True)
    with transaction.atomic():
        if LabelConfig.objects.filter(project=project, name=fields["name"]).exists():
            raise Invalid(
                "A label config with this name exists.",
                errors=[{"field": "name", "message": "is already the name of a label config in this project"}],
            )
        return LabelConfig.objects.create(project=project, **fields)


def label_config_update(*, config, data):
    """Change a label config (not its name or kind: labels given keep their meaning); archive with ``archived``."""
    fields = _config_fields_clean({**_config_values(config), **data}, creating=False, current=config)
    for name, value in fields.items():
        setattr(config, name, value)
    config.save()
    return config


def label_configs_for_criteria(*, project, criteria):
    """A boolean label config for every judge criterion that has none (an existing one is kept as it is)."""
    existing = set(LabelConfig.objects.filter(project=project, name__in=list(criteria)).values_list("name", flat=True))
    LabelConfig.objects.bulk_create(
        [
            LabelConfig(project=project, name=name, description=question, kind=LabelKind.BOOLEAN, criterion=True)
            for name, question in criteria.items()
            if name not in existing
        ],
        ignore_conflicts=True,
    )


def _config_values(config):
    return {name: getattr(config, name) for name in _CONFIG_FIELDS}


def _config_fields_clean(data, *, creating, current=None):
    if not isinstance(data, dict):
        raise Invalid("The body must be a JSON object.", errors=[{"field": None, "message": "must be a JSON object"}])
    errors = [{"field": str(k), "message": "is not a known field"} for k in data if k not in _CONFIG_FIELDS]
    name, kind = data.get("name"), data.get("kind", LabelKind.BOOLEAN)
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > NAME_MAX or ":" in name:
        errors.append({"field": "name", "message": f"must be 1 to {NAME_MAX} characters, without ':'"})
    if kind not in LabelKind.values:
        errors.append({"field": "kind", "message": "must be one of " + ", ".join(LabelKind.values)})
    if current is not None:
        for field in ("name", "kind"):
            if data.get(field) != getattr(current, field):
                errors.append({"field": field, "message": "cannot change: labels already given keep their meaning"})
    if not isinstance(data.get("description", ""), str):
        errors.append({"field": "description", "message": "must be a string"})
    if not isinstance(data.get("archived", False), bool):
        errors.append({"field": "archived", "message": "must be true or false"})
    errors.extend(_kind_problems(kind, data))
    if errors:
        raise Invalid("The label config is invalid. Nothing was written.", errors=errors)
    # null is "not given": the columns keep their defaults (an empty list, no threshold).
    fields = {k: data[k] for k in _CONFIG_FIELDS if data.get(k) is not None}
    fields["name"] = name.strip()
    if kind == LabelKind.NUMERIC and fields.get("pass_threshold") is None:
        fields["pass_threshold"] = (fields["minimum"] + fields["maximum"]) / 2
    return fields


# The fields each kind takes; the others must be left out (null, or an empty list).
_KIND_FIELDS = {
    LabelKind.BOOLEAN: (),
    LabelKind.CATEGORICAL: ("options", "passing"),
    LabelKind.NUMERIC: ("minimum", "maximum", "pass_threshold"),
}


def _kind_problems(kind, data):
    foreign = [
        f
        for f in ("options", "passing", "minimum", "maximum", "pass_threshold")
        if isinstance(kind, str)
        and kind in _KIND_FIELDS
        and f not in _KIND_FIELDS[kind]
        and data.get(f) not in (None, [])
    ]
    if foreign:
        return [{"field": f, "message": f"does not apply to a {kind} label; leave it out"} for f in foreign]
    wrong = [f for f in ("minimum", "maximum", "pass_threshold") if data.get(f) is not None and not _is_number(data[f])]
    wrong_lists = [f for f in ("options", "passing") if data.get(f) is not None and not _is_string_list(data[f])]
    if wrong or wrong_lists:
        return [{"field": field, "message": "must be a number or null"} for field in wrong] + [
            {"field": field, "message": "must be a list of strings"} for field in wrong_lists
        ]
    if kind == LabelKind.CATEGORICAL:
        options, passing = data.get("options"), data.get("passing", [])
        if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) and o for o in options):
            return [{"field": "options", "message": "must list at least two categories (strings)"}]
        if len(set(options)) != len(options):
            return [{"field": "options", "message": "must not repeat a category"}]
        if not isinstance(passing, list) or any(p not in options for p in passing):
            return [{"field": "passing", "message": "must list categories among options"}]
    if kind == LabelKind.NUMERIC:
        low, high, threshold = data.get("minimum"), data.get("maximum"), data.get("pass_threshold")
        if not all(_is_number(v) for v in (low, high)) or low >= high:
            return [{"field": "maximum", "message": "numeric labels need a minimum below the maximum"}]
        if threshold is not None and (not _is_number(threshold) or not low <= threshold <= high):
            return [{"field": "pass_threshold", "message": f"must be between {low} and {high}"}]
    return []


def _is_string_list(value):
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


# --- labels ---------------------------------------------------------------------------


def label_value_read(config, value):
    """``(value on 0..1, passed)`` for a label of ``config``; ``Invalid`` naming ``value`` when it does not fit."""
    if config.kind == LabelKind.BOOLEAN:
        if not isinstance(value, bool):
            raise _bad_value("must be true or false")
        return (1.0 if value else 0.0), value
    if config.kind == LabelKind.CATEGORICAL:
        if value not in config.options:
            raise _bad_value("must be one of " + ", ".join(config.options))
        return config.options.index(value) / (len(config.options) - 1), value in config.passing
    if not _is_number(value) or not config.minimum <= value <= config.maximum:
        raise _bad_value(f"must be a number from {config.minimum:g} to {config.maximum:g}")
    scaled = (value - config.minimum) / (config.maximum - config.minimum)
    return scaled, value >= config.pass_threshold


def _bad_value(message):
    return Invalid(f"The label's value {message}.", errors=[{"field": "value", "message": message}])


def label_write(*, project, trace, config, value, comment="", author):
    """Label ``trace`` for ``author`` (``{"name", "by": "user"|"key"}``); returns ``(score, created)``.

    A second label by the same author replaces the first, which is kept in
    ``detail.history``; the same label again changes nothing. Counts one record against
    the project's quota when new. The run is locked, like every writer of scores.
    """
    if config.archived:
        raise Invalid("This label config is archived.", errors=[{"field": "config", "message": "is archived"}])
    scaled, passed = label_value_read(config, value)
    if not isinstance(comment, str) or len(comment) > COMMENT_MAX or "\x00" in comment:
        raise Invalid(
            "The comment is invalid.",
            errors=[{"field": "comment", "message": f"must be text of at most {COMMENT_MAX} characters"}],
        )
    key = {"author": author["name"], "by": author["by"]}
    digest = hashlib.sha256(canonical_json(key).encode()).hexdigest()
    with transaction.atomic():
        type(trace).objects.select_for_update().filter(pk=trace.pk).first()
        score = Score.objects.filter(trace=trace, scorer=config.scorer_id, config_hash=digest).first()
        now = timezone.now().isoformat()
        if score is not None:
            if json_equal(score.detail.get("label"), value) and score.reason == comment:
                return score, False
            previous = {"label": score.detail.get("label"), "comment": score.reason, "at": score.detail.get("at")}
            history = [previous, *score.detail.get("history", [])][:HISTORY_KEPT]
            score.value, score.passed, score.reason = scaled, passed, comment
            score.detail = {**score.detail, "label": value, "at": now, "history": history}
            score.run_revision = trace.revision
            score.save(update_fields=["value", "passed", "reason", "detail", "run_revision"])
            return score, False
        quota_reserve(project=project, count=1)
        score_configs_store(project_id=project.pk, configs={digest: canonical_json(key)})
        score = Score.objects.create(
            project=project, trace=trace, scorer=config.scorer_id, scorer_version="1", config_hash=digest,
            value=scaled, passed=passed, reason=comment, source=ScoreSource.HUMAN, experiment_id=trace.experiment_id,
            case_id=trace.case_id, run_revision=trace.revision,
            detail={"label": value, "author": author["name"], "by": author["by"], "at": now, "history": []},
        )  # fmt: skip
        return score, True


def run_labels(trace):
    """The run's current labels, by config then author."""
    return trace.scores.filter(source=ScoreSource.HUMAN).order_by("scorer", "id")


def labels_write(*, project, trace, values, comment="", author):
    """Several labels of one run by one author at once (``values``: ``[(config, value)]``), all or none.

    Returns the scores written or kept; the first bad value's ``Invalid`` leaves nothing written.
    """
    with transaction.atomic():
        return [
            label_write(project=project, trace=trace, config=config, value=value, comment=comment, author=author)[0]
            for config, value in values
        ]


def labels_of_project(*, project, config=None, author=None):
    """The project's current labels, newest first, with their run (paginate the result)."""
    labels = Score.objects.filter(project=project, source=ScoreSource.HUMAN).select_related("trace")
    if config:
        labels = labels.filter(scorer=label_scorer_id(config))
    if author:
        labels = labels.filter(detail__author=author)
    return labels


def label_authors(*, project):
    """The names of everyone who labelled a run of the project, for filter menus."""
    rows = Score.objects.filter(project=project, source=ScoreSource.HUMAN).values_list("detail__author", flat=True)
    return sorted({a for a in rows.distinct() if a})
