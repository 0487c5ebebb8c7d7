"""What a scoring request asks for, checked against the project, and which runs it selects.

A request (``POST /v1/api/score`` and ``POST /v1/api/passes`` alike) names scorers,
their config, and a selection of runs (ARCHITECTURE §7):

- ``trace_ids``: exactly those runs, in the order given (repeats ignored). An id that is
  not a run of the project (missing, or another project's) is a 400 naming it. It
  cannot be combined with ``from``, ``limit`` or ``experiment``.
- otherwise the ``limit`` most recent runs of the project (newest ``started_at``
  first), narrowed by ``from`` (started at or after it) and ``experiment`` (a name of
  the project: an unknown one is a 400). ``limit`` defaults to ``DEFAULT_LIMIT``; a
  pass takes at most ``PASS_MAX_RUNS`` runs, a synchronous request at most
  ``SYNC_MAX_RUNS`` (more is a 400 naming the cap and pointing to ``/passes``; with
  ``limit`` omitted it takes as many as the cap allows). Judge criteria lower both
  caps (``runs_cap``, ``scoring.selection.catalog``): a synchronous request judges at
  most ``R // (T x J)`` runs, checked before any model is called.
- runs ingested after the request are not part of it (``until``): a pass that takes
  minutes scores the runs that existed when it was asked for.

Config rules (ARCHITECTURE §5): an unknown scorer id is a 400 listing the known ones
(``scoring.selection.catalog``); config for a scorer that was not named, or config that fails
``config_validate``, is a 400 naming scorer and field; a scorer that needs config and
got none is a 400 naming it, unless some selected run is linked to a golden case, in
which case each run whose case does not configure it gets a ``not_configured``
abstention.
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.utils.dateparse import parse_datetime

from checks.judge.limits import judge_run_cap
from checks.scorers import SCORERS, canonical_json, config_validate
from datasets.models import Experiment, Trace
from evalsite.errors import Invalid
from scoring.pipeline.engine import ScoringPlan
from scoring.selection.catalog import catalog_for

DEFAULT_LIMIT = 1000
PASS_MAX_RUNS = 1_000_000
SYNC_MAX_RUNS = 1000
# Most trace ids looked up in one query (SQLite's bound-parameter limit is 32766).
ID_BATCH = 5000
# Most unknown trace ids named one by one in a 400 (the count says how many in all).
NAMED_UNKNOWN = 50


def entry_scorer(entry):
    """The scorer id of an entry of ``scorers``: an id, or ``{"scorer": id, "config": {...}}``."""
    return entry if isinstance(entry, str) else entry["scorer"]


def entry_config(entry, config):
    """The request config of an entry: ``config[id]`` for an id, its own ``config`` for an object (None: none)."""
    return config.get(entry) if isinstance(entry, str) else entry.get("config")


def plan_of(available, scorers, config):
    """The ``ScoringPlan`` of ``scorers`` (entries as a request names them) and ``config``."""
    return ScoringPlan([(available[entry_scorer(e)], entry_config(e, config)) for e in scorers], config)


@dataclass(frozen=True)
class ScoreRequest:
    # As named, without repeats: scorer ids (configured by ``config``), or
    # ``{"scorer": id, "config": {...}}`` for a scorer named with a config of its own
    # (one scorer may be named so several times, once per config).
    scorers: tuple
    config: dict = field(default_factory=dict)
    trace_ids: tuple | None = None
    started_from: datetime | None = None
    limit: int | None = None
    experiment: str | None = None
    experiment_id: int | None = None
    dry_run: bool = False

    @property
    def scorer_ids(self):
        """The ids of the scorers named, each once, in order."""
        return tuple(dict.fromkeys(entry_scorer(entry) for entry in self.scorers))

    def plan(self, available):
        """The ``ScoringPlan`` of this request; ``available`` maps ids to scorers (the project's catalog)."""
        return plan_of(available, self.scorers, self.config)

    def selection(self, *, until=None):
        """The selection as stored on a pass (JSON)."""
        if self.trace_ids is not None:
            return {"trace_ids": list(self.trace_ids)}
        out = {"limit": self.limit}
        if self.started_from is not None:
            out["from"] = self.started_from.isoformat()
        if self.experiment is not None:
            out["experiment"] = self.experiment
            out["experiment_id"] = self.experiment_id
        if until is not None:
            out["until"] = until.isoformat()
        return out


def score_request_read(*, project, data, background):
    """Check a request body (already shaped by the API's serializer) against the project.

    ``data`` has ``scorers`` and optionally ``config``, ``trace_ids``, ``from``,
    ``limit``, ``experiment``, ``dry_run``. Returns a ``ScoreRequest`` with ``limit``
    filled in; raises ``Invalid`` listing every problem found. Reads only.
    """
    catalog = catalog_for(project)
    scorers, config, errors = _scorers_read(catalog, data)
    judged = catalog.judged(dict.fromkeys(entry_scorer(entry) for entry in scorers))
    cap = runs_cap(judged, background=background)
    trace_ids, limit = _selection_read(data, cap, background, judged, errors)
    if errors:
        raise Invalid("The scoring request is invalid; see errors.", errors=errors)
    if judged and not background:
        cap = min(cap, _judge_cap_check(catalog, judged, trace_ids, limit))

    experiment, experiment_id = data.get("experiment"), None
    if trace_ids is not None:
        errors.extend(_unknown_trace_ids(project, trace_ids))
    else:
        limit = limit if limit is not None else min(DEFAULT_LIMIT, cap)
        if experiment is not None:
            experiment_id = _experiment_id(project, experiment, errors)
    if errors:
        raise Invalid("The scoring request names runs that do not exist; see errors.", errors=errors)

    request = ScoreRequest(
        scorers=tuple(scorers),
        config=config,
        trace_ids=trace_ids,
        started_from=data.get("from"),
        limit=limit,
        experiment=experiment,
        experiment_id=experiment_id,
        dry_run=bool(data.get("dry_run", False)),
    )
    _config_given_check(project, catalog, request)
    return request


def _scorers_read(catalog, data):
    """``(entries without repeats, config, errors)``: unknown ids, config for scorers not named, bad config.

    An entry is a scorer id, configured by ``config[id]``, or ``{"scorer": id, "config":
    {...}}`` with a config of its own; one scorer may be named with several configs.
    """
    available = catalog.scorers
    errors = []
    entries = {}
    for index, entry in enumerate(data["scorers"]):
        scorer_id = entry_scorer(entry)
        if scorer_id not in available:
            errors.append({"field": f"scorers[{index}]", "message": unknown_scorer_message(catalog, [scorer_id])})
        elif not isinstance(entry, str) and "config" in entry:
            errors.extend(_config_problems(available[scorer_id], entry["config"], f"scorers[{index}].config"))
        entries.setdefault(entry if isinstance(entry, str) else _entry_key(entry), entry)
    config = dict(data.get("config") or {})
    for scorer_id, scorer_config in config.items():
        if scorer_id not in entries:
            errors.append({"field": f"config.{scorer_id}", "message": _not_named_message(scorer_id, entries)})
        elif scorer_id in available:
            errors.extend(_config_problems(available[scorer_id], scorer_config))
    return list(entries.values()), config, errors


def _entry_key(entry):
    try:
        return canonical_json(entry)
    except (TypeError, ValueError):  # refused with a 400 anyway
        return repr(entry)


def _not_named_message(scorer_id, entries):
    if any(entry_scorer(entry) == scorer_id for entry in entries.values()):
        return f"{scorer_id!r} is named only with configs of its own in scorers; give this config there too"
    return f"{scorer_id!r} is not one of the scorers named"


def _selection_read(data, cap, background, judged, errors):
    """``(trace_ids without repeats or None, limit)``; adds to ``errors`` what breaks the selection rules."""
    trace_ids, limit = data.get("trace_ids"), data.get("limit")
    if trace_ids is not None:
        for name in ("from", "limit", "experiment"):
            if data.get(name) is not None:
                errors.append({"field": name, "message": "cannot be combined with trace_ids (they select exact runs)"})
        trace_ids = tuple(dict.fromkeys(trace_ids))
        if len(trace_ids) > cap:
            errors.append({"field": "trace_ids", "message": _cap_message(cap, len(trace_ids), background, judged)})
    elif limit is not None and limit > cap:
        errors.append({"field": "limit", "message": _cap_message(cap, limit, background, judged)})
    return trace_ids, limit


def _judge_cap_check(catalog, judged, trace_ids, limit):
    """The runs a synchronous request may judge, ``R // (T x J)``, checked before any model is called.

    A request that asks for more (``trace_ids`` or ``limit``) is a 400 naming the cap
    and how it is computed; with ``limit`` omitted, it takes as many as fit.
    """
    request_timeout = settings.EVALSITE_REQUEST_TIMEOUT_SECONDS
    cap = judge_run_cap(request_timeout, catalog.judge.timeout_seconds, len(judged))
    requested = len(trace_ids) if trace_ids is not None else limit
    if (requested if requested is not None else max(cap, 1)) > cap:
        field = "trace_ids" if trace_ids is not None else "limit"
        noun = "criterion" if len(judged) == 1 else "criteria"
        message = (
            f"{field} asks for {requested if requested is not None else 1} judged runs, but a synchronous request "
            f"can judge at most {cap}: request timeout {request_timeout} s // (judge "
            f"timeout {catalog.judge.timeout_seconds} s × {len(judged)} judge {noun}). Ask for fewer runs, omit "
            "limit to judge as many recent runs as fit, or use POST /v1/api/passes."
        )
        raise Invalid(message, errors=[{"field": field, "message": message}], extra={"judge_run_cap": cap})
    return cap


def _experiment_id(project, name, errors):
    experiment_id = Experiment.objects.filter(project=project, name=name).values_list("pk", flat=True).first()
    if experiment_id is None:
        errors.append({"field": "experiment", "message": f"no experiment named {name!r} in this project"})
    return experiment_id


def _config_given_check(project, catalog, request):
    """A scorer that needs config must get it from the request, or from cases of the selected runs."""
    unconfigured = list(
        dict.fromkeys(
            entry_scorer(e)
            for e in request.scorers
            if entry_scorer(e) in catalog.request_config_ids and entry_config(e, request.config) is None
        )
    )
    if unconfigured and not _selection_has_cases(project, request):
        raise Invalid(
            f"{', '.join(unconfigured)} need{'s' if len(unconfigured) == 1 else ''} config: give "
            "config.<scorer>, or select runs linked to golden cases whose expectations configure it.",
            errors=[
                {"field": f"config.{s}", "message": f"{s} needs config and none of the selected runs has a case"}
                for s in unconfigured
            ],
        )


def unknown_scorer_message(catalog, unknown_ids):
    """'Unknown scorer(s): x. Built-in scorers: …. Configured judge criteria: ….'

    The one place the configured criteria are named back: ``GET /v1/api/scorers`` lists
    only the built-ins, as ARCHITECTURE §5 says.
    """
    unknown = ", ".join(str(i) for i in unknown_ids)
    criteria = ", ".join(catalog.criteria_ids) or "none (the project's judge is not configured or has no criteria)"
    noun = "scorer" if len(unknown_ids) == 1 else "scorers"
    return f"Unknown {noun}: {unknown}. Built-in scorers: {', '.join(SCORERS)}. Configured judge criteria: {criteria}."


def score_request_from_pass(scoring_pass):
    """The ``ScoreRequest`` a stored pass was started with."""
    selection = scoring_pass.selection
    started_from = selection.get("from")
    return ScoreRequest(
        scorers=tuple(scoring_pass.scorers),
        config=dict(scoring_pass.config),
        trace_ids=tuple(selection["trace_ids"]) if "trace_ids" in selection else None,
        started_from=parse_datetime(started_from) if started_from else None,
        limit=selection.get("limit"),
        experiment=selection.get("experiment"),
        experiment_id=selection.get("experiment_id"),
        dry_run=scoring_pass.dry_run,
    )


def runs_cap(judged, *, background):
    """Most runs one request may score: ``judged`` are the judge criteria it names.

    Deterministic scorers take microseconds per run, so the synchronous cap only keeps
    the answer a readable size (the judge's deadline arithmetic lowers it further, see
    ``scoring.selection.catalog``); a pass naming judge criteria judges at most
    ``EVALSITE_JUDGE_PASS_MAX_RUNS`` runs.
    """
    if not background:
        return SYNC_MAX_RUNS
    return min(PASS_MAX_RUNS, settings.EVALSITE_JUDGE_PASS_MAX_RUNS) if judged else PASS_MAX_RUNS


def selection_pks(*, project, request, until=None):
    """The primary keys of the selected runs, in pass order, streamed (never all loaded at once)."""
    if request.trace_ids is not None:
        for start in range(0, len(request.trace_ids), ID_BATCH):
            batch = request.trace_ids[start : start + ID_BATCH]
            pks = dict(Trace.objects.filter(project=project, trace_id__in=batch).values_list("trace_id", "pk"))
            yield from (pks[t] for t in batch if t in pks)
        return
    yield from (
        _recent(project, request, until).values_list("pk", flat=True)[: request.limit].iterator(chunk_size=ID_BATCH)
    )


def _recent(project, request, until):
    runs = Trace.objects.filter(project=project).order_by("-started_at", "-id")
    if request.started_from is not None:
        runs = runs.filter(started_at__gte=request.started_from)
    if request.experiment_id is not None:
        runs = runs.filter(experiment_id=request.experiment_id)
    if until is not None:
        runs = runs.filter(ingested_at__lte=until)
    return runs


def _selection_has_cases(project, request):
    if request.trace_ids is not None:
        return any(
            Trace.objects.filter(
                project=project, trace_id__in=request.trace_ids[i : i + ID_BATCH], case__isnull=False
            ).exists()
            for i in range(0, len(request.trace_ids), ID_BATCH)
        )
    selected = _recent(project, request, None).values("pk")[: request.limit]
    return Trace.objects.filter(pk__in=selected, case__isnull=False).exists()


def _unknown_trace_ids(project, trace_ids):
    position = {trace_id: index for index, trace_id in enumerate(trace_ids)}
    unknown = []
    for start in range(0, len(trace_ids), ID_BATCH):
        batch = trace_ids[start : start + ID_BATCH]
        found = set(Trace.objects.filter(project=project, trace_id__in=batch).values_list("trace_id", flat=True))
        unknown.extend(t for t in batch if t not in found)
    errors = [
        {"field": f"trace_ids[{position[t]}]", "message": f"no run with trace_id {t!r} in this project"}
        for t in unknown[:NAMED_UNKNOWN]
    ]
    if len(unknown) > NAMED_UNKNOWN:
        errors.append(
            {"field": "trace_ids", "message": f"{len(unknown)} trace_ids in all are not runs of this project"}
        )
    return errors


def _config_problems(scorer, scorer_config, at=None):
    errors = []
    for problem in config_validate(scorer, scorer_config):
        # "latency_budget.ms: -1 is less than the minimum of 0" -> field config.latency_budget.ms
        # (scorers[2].config.ms for an entry with its own config)
        where, _, message = problem.partition(": ")
        field = f"config.{where}" if at is None else at + where[len(scorer.id) :]
        errors.append({"field": field, "message": message or problem})
    return errors


def _cap_message(cap, asked, background, judged):
    if background and judged:
        return (
            f"a pass that names judge criteria judges at most {cap} runs (EVALSITE_JUDGE_PASS_MAX_RUNS); "
            f"{asked} were asked for"
        )
    if background:
        return f"a pass scores at most {cap} runs; {asked} were asked for"
    return (
        f"a synchronous request scores at most {cap} runs; {asked} were asked for. "
        "Use POST /v1/api/passes to score more in the background."
    )


def selection_count(*, project, request):
    """How many runs a pass of ``request`` would score now (its limit applied): one counting query."""
    if request.trace_ids is not None:
        return Trace.objects.filter(project=project, trace_id__in=request.trace_ids).count()
    return _recent(project, request, None)[: request.limit].count()


def selection_matching_count(*, project, request):
    """How many runs ``request``'s selection matches before its limit: what a page shows beside ``selection_count``."""
    if request.trace_ids is not None:
        return selection_count(project=project, request=request)
    return _recent(project, request, None).count()
