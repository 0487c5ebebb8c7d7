"""Compare two experiments scorer by scorer, with the sample size of each side.

Per scorer (and scorer version: two judges' scores are not comparable): each side's
``{mean, n}`` over its non-stale scores, ``diff`` (candidate − base), ``decidable``
(both n ≥ 20; a mean that moved on four runs is noise), a 95% confidence interval of the
difference (normal approximation of the difference of two means, Welch's standard
error), ``regressed`` (decidable and the whole interval below −tolerance: a drop the
interval does not rule out as noise, or one within the tolerance, is not a regression),
and abstentions counted beside
the means (never inside them). A scorer that scored the same runs under several configs
(``json_valid`` with and without a schema) gives one row per config, never one mean
over both; per-case configs (each case its expectations, one score per run) stay one
row. Then the cases whose scorer verdict flipped between the two: pass→fail and
fail→pass. Every figure is aggregated in SQL.

``cases`` pairs the two experiments case by case, from each one's newest finished gate
run on the candidate's dataset (where a case's verdict already counts its trials):
how many cases both ran, both passed, both failed, and flipped each way, the exact
two-sided McNemar p-value on the flips, and each side's case pass rate with its 95%
Wilson interval. It is evidence beside the per-scorer rows: ``decidable`` keeps the
n ≥ 20 rule.
"""

import logging
import math
from collections import Counter
from contextlib import contextmanager, nullcontext

from django.db import connection, transaction
from django.db.models import Count, F, IntegerField, Max, Min, Q
from django.db.models.functions import Cast

from checks.stats import mcnemar_p, wilson_interval
from datasets.models import GoldenCase, Trace
from evalsite.broker import BROKER_ERRORS
from evalsite.sql import rows_named
from evalsite.vendor import byte_order_collation, is_postgresql
from gating.models import GateCase, GateRun
from scoring.freshness import scores_fresh
from scoring.models import Abstention, Score
from scoring.passes.summaries import (
    config_stats,
    experiment_stats,
    summaries_kept,
    summaries_stats,
    summary_flipped_rows,
)
from scoring.score_configs import score_configs_of
from scoring.tasks import summaries_build_task

MIN_DECIDABLE_N = 20
Z_95 = 1.959963984540054
FLIPS_SHOWN = 200

logger = logging.getLogger(__name__)


def experiments_compare(*, base, candidate, scorers=None, tolerance=0.0):
    """The comparison of ``candidate`` against ``base`` (two Experiments of one project).

    Read from the experiments' score summaries where they are current, else from the
    scores (and a worker is asked to build the missing summaries); both give the same
    figures.
    """
    ids = [base.pk, candidate.pk]
    with _one_snapshot():
        per_experiment = {pk: _only(stats, scorers) for pk, stats in summaries_stats(ids).items()}
        missing = [pk for pk in ids if pk not in per_experiment]
        for pk in missing:
            per_experiment[pk] = experiment_stats(pk, scorers)
        stats = _score_stats(candidate.project_id, per_experiment)
        abstained = _abstention_counts(ids, scorers)
        flips = _flips(base, candidate, scorers, summarized=not missing)
        cases = cases_paired(base, candidate)
    if missing and summaries_kept():
        _summaries_build_send(missing)
    keys = sorted(
        {key[:3] for key in stats} | {(s, None, None) for s, _ in abstained if not _has_scorer(stats, s)},
        key=lambda k: (k[0], k[1] or "", k[2] or ""),
    )
    rows = []
    for scorer, version, config in keys:
        b = stats.get((scorer, version, config, base.pk))
        c = stats.get((scorer, version, config, candidate.pk))
        row = _row(
            scorer, version, b, c, abstained.get((scorer, base.pk), 0), abstained.get((scorer, candidate.pk), 0),
            tolerance,
        )  # fmt: skip
        if config is not None:
            row["config"] = (b or c)["config"]
        rows.append(row)
    return {
        "base": base.name,
        "candidate": candidate.name,
        "tolerance": tolerance,
        "min_decidable_n": MIN_DECIDABLE_N,
        "scorers": rows,
        "flipped": flips,
        "cases": cases,
    }


def _summaries_build_send(experiment_ids):
    try:
        summaries_build_task.delay(experiment_ids)
    except BROKER_ERRORS as exc:
        logger.warning("broker unavailable, score summaries not built; compare reads the scores: %s", exc)


def _one_snapshot():
    """Read everything on one snapshot (a summary dropped mid-way must not be half read)."""
    if not is_postgresql() or connection.in_atomic_block:
        return nullcontext()
    return _repeatable_read()


@contextmanager
def _repeatable_read():
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def _only(stats, scorers):
    """One experiment's ``stats`` reduced to ``scorers`` (all when empty)."""
    if not scorers:
        return stats
    wanted = set(scorers)
    return {
        "pairs": [r for r in stats["pairs"] if r["scorer"] in wanted],
        "several": [pair for pair in stats["several"] if pair[0] in wanted],
        "configs": [r for r in stats["configs"] if r["scorer"] in wanted],
    }


def _has_scorer(stats, scorer):
    return any(key[0] == scorer for key in stats)


def _score_stats(project_id, per_experiment):
    """``{(scorer, version, config hash or None, experiment): stats}``; the hash only where a run has several.

    ``per_experiment``: each experiment's ``experiment_stats``. A pair is split by
    config on both sides when either side scored a run under several configs.
    """
    several = {tuple(pair) for stats in per_experiment.values() for pair in stats["several"]}
    result, per_config = {}, []
    for experiment_id, stats in per_experiment.items():
        for r in stats["pairs"]:
            pair = (r["scorer"], r["scorer_version"])
            if pair not in several:
                result[(*pair, None, experiment_id)] = r
        split = {tuple(pair) for pair in stats["several"]}
        missing = several - split
        per_config += [(experiment_id, r) for r in stats["configs"]]
        per_config += [(experiment_id, r) for r in _configs_of(experiment_id, stats["pairs"], missing)]
    configs = score_configs_of(project_id=project_id, hashes=[r["config_hash"] for _, r in per_config])
    for experiment_id, r in per_config:
        r["config"] = configs.get(r["config_hash"])
        result[(r["scorer"], r["scorer_version"], r["config_hash"][:12], experiment_id)] = r
    return result


def _configs_of(experiment_id, pairs, wanted):
    """Per-config rows of the ``wanted`` pairs of one experiment that did not split them itself.

    A pair with one config on this side is its own row; a pair with per-case configs
    here (and several a run on the other side) is read from the scores.
    """
    rows, to_read = [], []
    for r in pairs:
        pair = (r["scorer"], r["scorer_version"])
        if pair not in wanted:
            continue
        if r["low_config"] == r["high_config"]:
            rows.append({**r, "config_hash": r["low_config"]})
        else:
            to_read.append(pair)
    return rows + config_stats(experiment_id, to_read)


def _abstention_counts(experiment_ids, scorers):
    abstentions = Abstention.objects.filter(experiment_id__in=experiment_ids)
    if scorers:
        abstentions = abstentions.filter(scorer__in=scorers)
    counted = abstentions.values("scorer", "experiment_id").annotate(runs=Count("trace_id", distinct=True))
    return {(r["scorer"], r["experiment_id"]): r["runs"] for r in counted}


def _side(stat):
    if stat is None:
        return {"mean": None, "n": 0}
    return {"mean": stat["mean"], "n": stat["n"]}


def _variance(stat):
    n = stat["n"]
    if n < 2:
        return None
    return max(0.0, stat["mean_sq"] - stat["mean"] ** 2) * n / (n - 1)


def _row(scorer, version, base, candidate, base_abstained, candidate_abstained, tolerance):
    row = {
        "scorer": scorer,
        "scorer_version": version,
        "base": {**_side(base), "abstained": base_abstained},
        "candidate": {**_side(candidate), "abstained": candidate_abstained},
        "diff": None,
        "decidable": False,
        "regressed": False,
        "ci95": None,
    }
    if base is None or candidate is None:
        return row
    diff = candidate["mean"] - base["mean"]
    decidable = base["n"] >= MIN_DECIDABLE_N and candidate["n"] >= MIN_DECIDABLE_N
    row.update(diff=diff, decidable=decidable)
    vb, vc = _variance(base), _variance(candidate)
    if vb is not None and vc is not None:
        half = Z_95 * math.sqrt(vb / base["n"] + vc / candidate["n"])
        row["ci95"] = [diff - half, diff + half]
    row["regressed"] = decidable and row["ci95"] is not None and row["ci95"][1] < -tolerance
    return row


def _case_verdicts(base, candidate, scorers):
    """The grouped query of both sides' per-case verdicts, one scan over their scores.

    Rows ``(case_id, scorer, b_ok, b_trace, c_ok, c_trace)`` for the (case, scorer)
    pairs both sides scored and whose verdicts differ: ``ok`` is 1 when every fresh
    score of that case and scorer passed, ``trace`` the newest run's pk.
    """
    scores = scores_fresh(Score.objects.filter(experiment__in=[base, candidate], case__isnull=False))
    if scorers:
        scores = scores.filter(scorer__in=scorers)
    passed = Cast("passed", IntegerField())
    on_base, on_candidate = Q(experiment=base), Q(experiment=candidate)
    grouped = (
        scores.values("case_id", "scorer")
        .annotate(
            b_ok=Min(passed, filter=on_base),
            b_trace=Max("trace_id", filter=on_base),
            c_ok=Min(passed, filter=on_candidate),
            c_trace=Max("trace_id", filter=on_candidate),
        )
        .filter(b_ok__isnull=False, c_ok__isnull=False)
        .exclude(b_ok=F("c_ok"))
        .values_list("case_id", "scorer", "b_ok", "b_trace", "c_trace")
    )
    return grouped.query.sql_with_params()


def _flipped_rows(base, candidate, scorers):
    """The flipped (case, scorer) pairs, the first ``FLIPS_SHOWN`` of each way, with each way's count.

    One query: both sides grouped in one scan, numbered per direction in (case id,
    scorer) order. Rows: ``(was_ok, case_id, scorer, base trace pk, candidate trace
    pk, count of that direction)``.
    """
    sql, params = _case_verdicts(base, candidate, scorers)
    collate = byte_order_collation()
    sql = f"""
        WITH v AS ({sql}),
        f AS (
            SELECT v.*, ROW_NUMBER() OVER (PARTITION BY v.b_ok ORDER BY v.case_id, v.scorer{collate}) AS n,
                   COUNT(*) OVER (PARTITION BY v.b_ok) AS total
            FROM v
        )
        SELECT b_ok, case_id, scorer, b_trace, c_trace, total FROM f WHERE n <= %s ORDER BY b_ok DESC, n
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, FLIPS_SHOWN])
        return rows_named(cursor)


def _flips(base, candidate, scorers, summarized):
    if summarized:
        rows = summary_flipped_rows(base.pk, candidate.pk, scorers, FLIPS_SHOWN)
    else:
        rows = _flipped_rows(base, candidate, scorers)
    names = dict(GoldenCase.objects.filter(pk__in={r.case_id for r in rows}).values_list("pk", "name"))
    traces = {t for r in rows for t in (r.b_trace, r.c_trace)}
    trace_ids = dict(Trace.objects.filter(pk__in=traces).values_list("pk", "trace_id"))
    result = {"pass_to_fail": [], "fail_to_pass": [], "pass_to_fail_count": 0, "fail_to_pass_count": 0}
    for row in rows:
        direction = "pass_to_fail" if row.b_ok else "fail_to_pass"
        result[direction].append(
            {
                "case_id": row.case_id,
                "case": names.get(row.case_id),
                "scorer": row.scorer,
                "base_trace_id": trace_ids.get(row.b_trace),
                "candidate_trace_id": trace_ids.get(row.c_trace),
            }
        )
        result[f"{direction}_count"] = row.total
    return {key: result[key] for key in ("pass_to_fail", "pass_to_fail_count", "fail_to_pass", "fail_to_pass_count")}


def cases_paired(base, candidate):
    """The paired case comparison (see the module docstring), or None when either side has no gate run."""
    dataset_id = candidate.dataset_id or base.dataset_id
    runs = [_newest_gate_run(e, dataset_id) for e in (base, candidate)]
    if dataset_id is None or None in runs:
        return None
    outcome = {}
    for gate_run_id in runs:
        rows = GateCase.objects.filter(gate_run_id=gate_run_id, measured=True, quarantined=False, case__isnull=False)
        outcome[gate_run_id] = dict(rows.values_list("case_id", "passed"))
    before, after = outcome[runs[0]], outcome[runs[1]]
    both = before.keys() & after.keys()
    counts = Counter((before[case], after[case]) for case in both)
    b, c = counts[(True, False)], counts[(False, True)]
    return {
        "base_gate_run_id": runs[0],
        "candidate_gate_run_id": runs[1],
        "paired": len(both),
        "both_pass": counts[(True, True)],
        "both_fail": counts[(False, False)],
        "pass_to_fail": b,
        "fail_to_pass": c,
        "p_value": mcnemar_p(b, c),
        "base": _case_rate(before),
        "candidate": _case_rate(after),
    }


def _newest_gate_run(experiment, dataset_id):
    return (
        GateRun.objects.filter(experiment=experiment, dataset_id=dataset_id, status=GateRun.Status.DONE)
        .order_by("-created_at", "-id")
        .values_list("pk", flat=True)
        .first()
    )


def _case_rate(outcomes):
    n, passed = len(outcomes), sum(outcomes.values())
    low, high = wilson_interval(passed, n)
    return {"cases": n, "passed": passed, "pass_rate": passed / n if n else None, "ci95": [low, high] if n else None}
