"""Outcomes of chosen scorers on chosen runs, computing only what is missing.

``outcomes_ensure`` is how the gate gets its evidence: for each run of a case and each
scorer the case is gated on, the stored score that matches the scorer's current config
(the case's expectations), computed and written now when there is none (or when the
stored one is stale). It loads, scores and writes through the same steps as a scoring
pass (``scoring.pipeline.loading``, ``scoring.pipeline.engine``, ``scoring.pipeline.writer``), so the same rules
hold: a stale score is replaced, never duplicated; the quota is exact under
concurrency; a score over the quota is not written and is reported abstained with
reason ``quota``; every abstention is recorded.
"""

import orjson
from django.db import connection, transaction

from checks.scorers import Result
from evalsite.bulk import rows_select_by_ids
from evalsite.vendor import text_cast
from scoring.freshness import fresh_sql, scores_fresh
from scoring.judge.criteria import outcomes_judge
from scoring.labels import label_config_name
from scoring.models import Score, ScoreSource
from scoring.pipeline.engine import ScoringPlan, outcomes_compute
from scoring.pipeline.loading import runs_load, tool_names
from scoring.pipeline.writer import outcomes_write
from scoring.selection.catalog import catalog_for


def outcomes_ensure(*, project, scorers_by_run, tools=True):
    """``({(trace_pk, scorer): outcome}, {trace_pk: [tool names]})`` for the runs asked about.

    ``scorers_by_run`` maps a run's primary key to the scorer ids to have for it (the
    gate: each run of a case gets its case's gating checks). An outcome is
    ``{"status": passed|failed|abstained, "reason", "detail"}``. With ``tools=False``
    the tool names are not read (``{}``): a caller that needs them for a few runs
    only reads those with ``scoring.pipeline.loading.tool_names``.
    """
    # Runs without their spans, input and output: enough to find the stored scores. Only
    # the runs with a score missing are loaded whole, to be scored.
    runs = {run.pk: run for run in runs_load(sorted(scorers_by_run), spans=False, content=False)}
    available = catalog_for(project).scorers
    outcomes, groups = _label_outcomes(scorers_by_run), {}
    for trace_pk, scorer_ids in scorers_by_run.items():
        run = runs.get(trace_pk)
        if run is None:
            continue
        wanted = tuple(s for s in dict.fromkeys(scorer_ids) if label_config_name(s) is None)
        for scorer_id in wanted:
            if scorer_id not in available:
                outcomes[(trace_pk, scorer_id)] = _abstained("unknown_scorer", {"message": f"no scorer {scorer_id!r}"})
        groups.setdefault(tuple(s for s in wanted if s in available), []).append(run)

    computed = []

    def judged(outcome):  # a judge's answer is written as soon as it arrives
        computed.append(outcome)
        _write(project, [outcome], outcomes)

    loaded = {}
    for scorer_ids, group in groups.items():
        plan = ScoringPlan([available[s] for s in scorer_ids], {})
        keys = plan.keys(group)
        stored = _stored(keys)
        for (trace_pk, scorer_id, _, _), outcome in stored.items():
            outcomes[(trace_pk, scorer_id)] = outcome
        group = _whole(group, {key[0] for key in keys if key not in stored}, loaded)
        fresh, _ = outcomes_compute(plan, group, decided=dict.fromkeys(stored, True))
        _write(project, fresh, outcomes)
        computed.extend(fresh)
        outcomes_judge(plan, group, decided=dict.fromkeys(stored, True), on_outcome=judged)
    # Written meanwhile by a pass: read what it stored.
    missing = [o.key for o in computed if (o.run.pk, o.scorer_id) not in outcomes]
    for (trace_pk, scorer_id, _, _), outcome in _stored(missing).items():
        outcomes[(trace_pk, scorer_id)] = outcome
    if not tools:
        return outcomes, {}
    names = tool_names(pk for pk in runs if pk not in loaded)
    names.update((pk, run.view.tool_names()) for pk, run in loaded.items())
    return outcomes, {pk: names.get(pk, []) for pk in runs}


def _whole(group, unscored, loaded):
    """The runs of ``group`` in ``unscored`` (pks) loaded with their spans, kept in ``loaded`` too."""
    whole = runs_load([run.pk for run in group if run.pk in unscored])
    loaded.update((run.pk, run) for run in whole)
    return whole


def _label_outcomes(scorers_by_run):
    """Reviewers' labels named as checks (``label:<name>``): failed when any current label
    fails, passed when all pass, abstained ``no_label`` when the run has none."""
    wanted = {(pk, s) for pk, ids in scorers_by_run.items() for s in ids if label_config_name(s) is not None}
    if not wanted:
        return {}
    labels = {}
    rows = scores_fresh(
        Score.objects.filter(
            source=ScoreSource.HUMAN, trace_id__in={pk for pk, _ in wanted}, scorer__in={s for _, s in wanted}
        )
    ).values_list("trace_id", "scorer", "passed", "reason", "detail")
    for trace_pk, scorer_id, passed, comment, detail in rows:
        labels.setdefault((trace_pk, scorer_id), []).append((passed, comment, detail))
    outcomes = {}
    for key in wanted:
        given = labels.get(key)
        if not given:
            outcomes[key] = _abstained("no_label", {"message": f"no reviewer labelled this run with {key[1]}"})
            continue
        failing = [f"{d.get('author')}: {d.get('label')!r}" + (f" ({c})" if c else "") for p, c, d in given if not p]
        authors = [d.get("author") for _, _, d in given]
        if failing:
            outcomes[key] = {
                "status": "failed",
                "reason": "labelled " + "; ".join(failing),
                "detail": {"authors": authors},
            }
        else:
            outcomes[key] = {
                "status": "passed",
                "reason": f"labelled passing by {', '.join(authors)}",
                "detail": {"authors": authors},
            }
    return outcomes


def _write(project, computed, outcomes):
    if not computed:
        return
    with transaction.atomic():
        runs = list({o.run.pk: o.run for o in computed}.values())
        report = outcomes_write(project=project, pass_id=None, runs=runs, outcomes=computed)
    for outcome in report.written:
        outcomes[(outcome.run.pk, outcome.scorer_id)] = _measured(outcome.result)
    for outcome in report.recorded:
        outcomes[(outcome.run.pk, outcome.scorer_id)] = _abstained(outcome.result.reason, outcome.result.detail)


def _stored(keys):
    """``{key: outcome}`` of the stored, non-stale scores among ``keys``.

    Read run by run through the unique index (``rows_select_by_ids``): the cost follows
    the runs asked about, not the size of the score table.
    """
    keys = set(keys)
    if not keys:
        return {}
    scorers = sorted({k[1] for k in keys})
    rows = rows_select_by_ids(
        "SELECT s.trace_id, s.scorer, s.scorer_version, s.config_hash, s.value, s.passed, s.reason, "
        f"{_as_text('s.detail')} AS detail FROM {connection.ops.quote_name(Score._meta.db_table)} s "
        f"WHERE s.trace_id {{ids}} AND s.scorer IN ({', '.join(['%s'] * len(scorers))}) AND {fresh_sql('s')}",
        sorted({k[0] for k in keys}),
        scorers,
    )
    found = {}
    for row in rows:
        key = (row.trace_id, row.scorer, row.scorer_version, row.config_hash)
        if key in keys:
            # The detail as text, decoded with orjson: several times faster than the JSON field's json.loads.
            found[key] = _measured(Result(row.value, bool(row.passed), row.reason, orjson.loads(row.detail)))
    return found


def _as_text(column):
    return text_cast(column)


def _measured(result):
    return {"status": "passed" if result.passed else "failed", "reason": result.reason, "detail": result.detail}


def _abstained(reason, detail):
    return {"status": "abstained", "reason": reason, "detail": detail}
