"""Compare two experiments scorer by scorer, with the sample size of each side.

Per scorer (and scorer version: two judges' scores are not comparable): each side's
``{mean, n}`` over its non-stale scores, ``diff`` (candidate − base), ``decidable``
(both n ≥ 20; a mean that moved on four runs is noise), ``regressed`` (decidable and
diff < −tolerance), a 95% confidence interval of the difference (normal approximation
of the difference of two means, Welch's standard error), and abstentions counted beside
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

import math
from collections import Counter

from django.db import connection
from django.db.models import Avg, Count, F, IntegerField, Max, Min, Q
from django.db.models.functions import Cast

from checks.stats import mcnemar_p, wilson_interval
from datasets.models import GoldenCase, Trace
from experiments.models import GateCase, GateRun
from scoring.freshness import scores_fresh
from scoring.labels import LABEL_PREFIX
from scoring.models import Abstention, Score
from scoring.score_configs import score_configs_of

MIN_DECIDABLE_N = 20
Z_95 = 1.959963984540054
FLIPS_SHOWN = 200


def experiments_compare(*, base, candidate, scorers=None, tolerance=0.0):
    """The comparison of ``candidate`` against ``base`` (two Experiments of one project)."""
    stats = _score_stats(candidate.project_id, [base.pk, candidate.pk], scorers)
    abstained = _abstention_counts([base.pk, candidate.pk], scorers)
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
    flips = _flips(base, candidate, scorers)
    return {
        "base": base.name,
        "candidate": candidate.name,
        "tolerance": tolerance,
        "min_decidable_n": MIN_DECIDABLE_N,
        "scorers": rows,
        "flipped": flips,
        "cases": cases_paired(base, candidate),
    }


def _has_scorer(stats, scorer):
    return any(key[0] == scorer for key in stats)


def _score_stats(project_id, experiment_ids, scorers):
    """``{(scorer, version, config hash or None, experiment): stats}``; the hash only where a run has several."""
    scores = scores_fresh(Score.objects.filter(experiment_id__in=experiment_ids))
    if scorers:
        scores = scores.filter(scorer__in=scorers)
    per_scorer = scores.values("scorer", "scorer_version", "experiment_id").annotate(
        n=Count("id"),
        mean=Avg("value"),
        mean_sq=Avg(F("value") * F("value")),
        low_config=Min("config_hash"),
        high_config=Max("config_hash"),
    )
    stats = {(r["scorer"], r["scorer_version"], None, r["experiment_id"]): r for r in per_scorer}
    several = _several_configs_per_run(scores, stats.values())
    if several:
        stats = {k: v for k, v in stats.items() if k[:2] not in several}
        per_config = (
            scores.filter(scorer__in={s for s, _ in several})
            .values("scorer", "scorer_version", "config_hash", "experiment_id")
            .annotate(n=Count("id"), mean=Avg("value"), mean_sq=Avg(F("value") * F("value")))
        )
        per_config = [r for r in per_config if (r["scorer"], r["scorer_version"]) in several]
        configs = score_configs_of(project_id=project_id, hashes=[r["config_hash"] for r in per_config])
        for r in per_config:
            r["config"] = configs.get(r["config_hash"])
            stats[(r["scorer"], r["scorer_version"], r["config_hash"][:12], r["experiment_id"])] = r
    return stats


def _several_configs_per_run(scores, per_scorer):
    """The (scorer, version) pairs with a run scored under several configs.

    A run has one score per config (a unique constraint), so only scorers whose config
    hashes differ can have one; counting distinct runs (a sort) is kept for those.
    Labels by several reviewers on one run pool into one row and are never split.
    """
    differ = {
        r["scorer"]
        for r in per_scorer
        if r["low_config"] != r["high_config"] and not r["scorer"].startswith(LABEL_PREFIX)
    }
    if not differ:
        return set()
    counted = (
        scores.filter(scorer__in=differ)
        .values("scorer", "scorer_version", "experiment_id")
        .annotate(n=Count("id"), runs=Count("trace_id", distinct=True))
    )
    return {(r["scorer"], r["scorer_version"]) for r in counted if r["n"] > r["runs"]}


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
    row.update(diff=diff, decidable=decidable, regressed=decidable and diff < -tolerance)
    vb, vc = _variance(base), _variance(candidate)
    if vb is not None and vc is not None:
        half = Z_95 * math.sqrt(vb / base["n"] + vc / candidate["n"])
        row["ci95"] = [diff - half, diff + half]
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
    collate = ' COLLATE "C"' if connection.vendor == "postgresql" else ""
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
        return cursor.fetchall()


def _flips(base, candidate, scorers):
    rows = _flipped_rows(base, candidate, scorers)
    names = dict(GoldenCase.objects.filter(pk__in={r[1] for r in rows}).values_list("pk", "name"))
    trace_ids = dict(Trace.objects.filter(pk__in={t for r in rows for t in r[3:5]}).values_list("pk", "trace_id"))
    result = {"pass_to_fail": [], "fail_to_pass": [], "pass_to_fail_count": 0, "fail_to_pass_count": 0}
    for was_ok, case_id, scorer, base_trace, candidate_trace, total in rows:
        direction = "pass_to_fail" if was_ok else "fail_to_pass"
        result[direction].append(
            {
                "case_id": case_id,
                "case": names.get(case_id),
                "scorer": scorer,
                "base_trace_id": trace_ids.get(base_trace),
                "candidate_trace_id": trace_ids.get(candidate_trace),
            }
        )
        result[f"{direction}_count"] = total
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
