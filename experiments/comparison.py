"""Compare two experiments scorer by scorer, with the sample size of each side.

Per scorer (and scorer version: two judges' scores are not comparable): each side's
``{mean, n}`` over its non-stale scores, ``diff`` (candidate − base), ``decidable``
(both n ≥ 20; a mean that moved on four runs is noise), ``regressed`` (decidable and
diff < −tolerance), a 95% confidence interval of the difference (normal approximation
of the difference of two means, Welch's standard error), and abstentions counted beside
the means (never inside them). Then the cases whose scorer verdict flipped between the
two: pass→fail and fail→pass. Every figure is aggregated in SQL.
"""

import math

from django.db.models import Avg, Count, F, IntegerField, Max, Min
from django.db.models.functions import Cast

from datasets.models import GoldenCase, Trace
from scoring.freshness import scores_fresh
from scoring.models import Abstention, Score

MIN_DECIDABLE_N = 20
Z_95 = 1.959963984540054
FLIPS_SHOWN = 200


def experiments_compare(*, base, candidate, scorers=None, tolerance=0.0):
    """The comparison of ``candidate`` against ``base`` (two Experiments of one project)."""
    stats = _score_stats([base.pk, candidate.pk], scorers)
    abstained = _abstention_counts([base.pk, candidate.pk], scorers)
    keys = sorted({(s, v) for s, v, _ in stats} | {(s, None) for s, _ in abstained if not _has_scorer(stats, s)})
    rows = []
    for scorer, version in keys:
        b = stats.get((scorer, version, base.pk))
        c = stats.get((scorer, version, candidate.pk))
        rows.append(
            _row(
                scorer,
                version,
                b,
                c,
                abstained.get((scorer, base.pk), 0),
                abstained.get((scorer, candidate.pk), 0),
                tolerance,
            )
        )
    flips = _flips(base, candidate, scorers)
    return {
        "base": base.name,
        "candidate": candidate.name,
        "tolerance": tolerance,
        "min_decidable_n": MIN_DECIDABLE_N,
        "scorers": rows,
        "flipped": flips,
    }


def _has_scorer(stats, scorer):
    return any(s == scorer for s, _, _ in stats)


def _score_stats(experiment_ids, scorers):
    scores = scores_fresh(Score.objects.filter(experiment_id__in=experiment_ids))
    if scorers:
        scores = scores.filter(scorer__in=scorers)
    aggregated = scores.values("scorer", "scorer_version", "experiment_id").annotate(
        n=Count("id"), mean=Avg("value"), mean_sq=Avg(F("value") * F("value"))
    )
    return {(r["scorer"], r["scorer_version"], r["experiment_id"]): r for r in aggregated}


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


def _case_verdicts(experiment, scorers):
    """``{(case_id, scorer): (all_passed, trace pk)}`` for an experiment's runs linked to cases."""
    scores = scores_fresh(Score.objects.filter(experiment=experiment, case__isnull=False))
    if scorers:
        scores = scores.filter(scorer__in=scorers)
    grouped = scores.values("case_id", "scorer").annotate(ok=Min(Cast("passed", IntegerField())), trace=Max("trace_id"))
    return {(r["case_id"], r["scorer"]): (bool(r["ok"]), r["trace"]) for r in grouped}


def _flips(base, candidate, scorers):
    before = _case_verdicts(base, scorers)
    after = _case_verdicts(candidate, scorers)
    flips = {"pass_to_fail": [], "fail_to_pass": []}
    for key in sorted(before.keys() & after.keys()):
        (was, base_trace), (now, candidate_trace) = before[key], after[key]
        if was != now:
            flips["pass_to_fail" if was else "fail_to_pass"].append((key, base_trace, candidate_trace))
    case_ids = {key[0] for items in flips.values() for key, _, _ in items[:FLIPS_SHOWN]}
    trace_pks = {t for items in flips.values() for _, b, c in items[:FLIPS_SHOWN] for t in (b, c)}
    names = dict(GoldenCase.objects.filter(pk__in=case_ids).values_list("pk", "name"))
    trace_ids = dict(Trace.objects.filter(pk__in=trace_pks).values_list("pk", "trace_id"))
    result = {}
    for direction, items in flips.items():
        result[direction] = [
            {
                "case_id": case_id,
                "case": names.get(case_id),
                "scorer": scorer,
                "base_trace_id": trace_ids.get(base_trace),
                "candidate_trace_id": trace_ids.get(candidate_trace),
            }
            for (case_id, scorer), base_trace, candidate_trace in items[:FLIPS_SHOWN]
        ]
        result[f"{direction}_count"] = len(items)
    return result
