"""HTTP API of scoring: the scorer catalog, synchronous scoring and background passes.

``GET scorers``, ``POST score``, ``POST passes``, ``GET passes/{id}`` (ARCHITECTURE §9).
Requests are shaped by ``ScoreRequestIn``; every rule about scorers, config and the
selection of runs is checked by the services (``scoring.selection.requests``) and comes back
as a 400 naming the field. docs/passes.md is the reference.
"""

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from checks.scorers import scorers_describe
from evalsite.auth import request_project
from evalsite.scopes import GATE
from scoring.passes.immediate import score_now
from scoring.passes.services import pass_start
from scoring.selection.requests import DEFAULT_LIMIT, PASS_MAX_RUNS, SYNC_MAX_RUNS
from scoring.selectors import PASS_SKIPS_PAGE, pass_dry_run_scores, pass_get, pass_skip_counts, pass_skips
from web.api.openapi import problem_responses
from web.api.rest import Text, validated
from web.api.shapes import PassSelection

SCORER_LIMIT = 200
_SCORER_ID = {"type": "string", "minLength": 1, "maxLength": 100}
_SCORER_ENTRY = {
    "oneOf": [
        {**_SCORER_ID, "description": "A scorer id, configured by config.<id>."},
        {
            "type": "object",
            "properties": {
                "scorer": _SCORER_ID,
                "config": {"type": "object", "additionalProperties": {}, "description": "This entry's config."},
            },
            "required": ["scorer"],
            "additionalProperties": False,
            "description": "A scorer with a config of its own: one scorer may be named so several times, each "
            'config scored and reported apart (e.g. json_valid without and with {"schema": ...}).',
        },
    ]
}


@extend_schema_field(_SCORER_ENTRY)
class ScorerEntryField(serializers.Field):
    """A scorer id, or ``{"scorer": id, "config": {...}}``."""

    default_error_messages = {"invalid": 'Expected a scorer id, or an object with "scorer" (an id) and "config".'}

    def to_internal_value(self, data):
        if isinstance(data, str):
            return Text(max_length=100).run_validation(data)
        if not isinstance(data, dict):
            self.fail("invalid")
        errors = {name: ["unknown field"] for name in sorted(set(data) - {"scorer", "config"})}
        entry = {}
        for name, field in (("scorer", Text(max_length=100)), ("config", serializers.DictField())):
            if name not in data and name == "config":
                continue
            try:
                entry[name] = field.run_validation(data.get(name, serializers.empty))
            except serializers.ValidationError as exc:
                errors[name] = exc.detail
        if errors:
            raise serializers.ValidationError(errors)
        return entry

    def to_representation(self, value):
        return value


class ScoreRequestIn(serializers.Serializer):
    scorers = serializers.ListField(
        child=ScorerEntryField(),
        min_length=1,
        max_length=SCORER_LIMIT,
        help_text="Scorer ids (GET /v1/api/scorers lists the built-in ones), or objects {scorer, config} to name "
        "a scorer with a config of its own (once per config).",
    )
    config = serializers.DictField(
        child=serializers.DictField(),
        required=False,
        help_text='Config per scorer id named as an id, e.g. {"latency_budget": {"ms": 2000}}. A linked case\'s '
        "expectations win.",
    )
    trace_ids = serializers.ListField(
        child=Text(max_length=200),
        required=False,
        max_length=PASS_MAX_RUNS,
        help_text="Score exactly these runs (cannot be combined with from, limit or experiment).",
    )
    limit = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text=f"The most recent runs to score (default {DEFAULT_LIMIT}; at most {SYNC_MAX_RUNS} for POST score, "
        f"{PASS_MAX_RUNS} for a pass).",
    )
    experiment = serializers.CharField(required=False, max_length=200, help_text="Only this experiment's runs.")
    dry_run = serializers.BooleanField(required=False, default=False, help_text="Compute and answer; write nothing.")

    def get_fields(self):
        # "from" is a Python keyword, so it cannot be declared above; the contract names it so.
        fields = super().get_fields()
        fields["from"] = serializers.DateTimeField(required=False, help_text="Only runs started at or after this time.")
        return fields

    def validate(self, attrs):
        unknown = sorted(set(self.initial_data) - set(self.fields)) if isinstance(self.initial_data, dict) else []
        if unknown:
            raise serializers.ValidationError({name: ["unknown field"] for name in unknown})
        return attrs


class ScoreOut(serializers.Serializer):
    trace_id = serializers.CharField()
    scorer = serializers.CharField()
    scorer_version = serializers.CharField()
    value = serializers.FloatField(help_text="0..1")
    passed = serializers.BooleanField()
    reason = serializers.CharField()
    detail = serializers.DictField()
    config_hash = serializers.CharField(help_text="SHA-256 of the canonical JSON of the config the scorer ran with.")
    source = serializers.CharField()
    experiment = serializers.CharField(allow_null=True)
    case = serializers.IntegerField(allow_null=True, help_text="The golden case the run answers.")


class SkipOut(serializers.Serializer):
    trace_id = serializers.CharField()
    scorer = serializers.CharField()
    config_hash = serializers.CharField(
        required=False, help_text="The config the scorer was asked to run with (a scorer named with two configs)."
    )
    kind = serializers.CharField(
        help_text="abstained (the scorer could not measure the run) or skipped (not written: quota, deadline, "
        "run_changed)."
    )
    reason = serializers.CharField(help_text="A code: no_expected_output, not_configured, quota, deadline, …")
    detail = serializers.DictField(help_text="The evidence; always has a message for a skip.")


# The answer of POST score (a score_now result). The answer serializers below write the
# answers and document them; comments, not docstrings, which would become the schema's descriptions.
class ScoreResult(serializers.Serializer):
    scores = ScoreOut(many=True, help_text="The scores written (in a dry run: that would be written).")
    skipped = SkipOut(many=True, help_text="Every abstention and skip, with its reason.")
    dry_run = serializers.BooleanField()
    runs = serializers.IntegerField(help_text="Runs selected.")
    existing = serializers.IntegerField(help_text="Scores already stored, left as they were.")
    pass_id = serializers.IntegerField(
        source="scoring_pass.pk", allow_null=True, help_text="The pass that recorded this request."
    )


class _PassUrl(serializers.CharField):
    """The pass's address in the API, from its id."""

    def to_representation(self, pk):
        return reverse("api-pass", args=[pk])


@extend_schema_field(PassSelection)
class _Selection(serializers.DictField):
    """The pass's selection as answered: a count for ``trace_ids``, no internal experiment id."""

    def to_representation(self, selection):
        selection = dict(selection)
        if "trace_ids" in selection:
            selection = {"trace_ids": len(selection["trace_ids"])}
        selection.pop("experiment_id", None)
        return super().to_representation(selection)


class _Progress(serializers.FloatField):
    def to_representation(self, value):
        return round(float(value), 4)


# A scoring pass as the API answers it (POST passes).
class PassOut(serializers.Serializer):
    id = serializers.IntegerField()
    url = _PassUrl(source="pk")
    status = serializers.CharField(help_text="queued, running, done or failed.")
    dry_run = serializers.BooleanField()
    scorers = serializers.ListField(child=ScorerEntryField(), help_text="As the request named them.")
    config = serializers.DictField()
    selection = _Selection(
        help_text="trace_ids (their count), or limit/from/experiment and until (runs ingested later are not part of it)."
    )
    total = serializers.IntegerField(help_text="Runs selected.")
    done = serializers.IntegerField(help_text="Runs finished.")
    progress = _Progress(help_text="done / total, 0..1.")
    written = serializers.IntegerField(help_text="Scores written.")
    skipped = serializers.IntegerField(help_text="Abstentions and skips recorded.")
    existing = serializers.IntegerField(help_text="Scores already stored, left as they were.")
    error = serializers.CharField(help_text="Why the pass failed.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


# A scoring pass with a page of its skips (GET passes/{id}); context["skips_after"] pages them.
class PassDetailOut(PassOut):
    skips_by_reason = serializers.DictField(child=serializers.IntegerField())
    skips = SkipOut(many=True, help_text=f"Up to {PASS_SKIPS_PAGE} skips, oldest first.")
    skips_next = serializers.CharField(allow_null=True, help_text="The next page of skips.")
    scores = ScoreOut(many=True, required=False, help_text="Dry run only: a sample of what would be written.")

    def to_representation(self, scoring_pass):
        skips, more = pass_skips(scoring_pass=scoring_pass, after=self.context.get("skips_after"))
        url = self.fields["url"].to_representation(scoring_pass.pk)
        page = {
            "skips_by_reason": pass_skip_counts(scoring_pass=scoring_pass),
            "skips": [{k: v for k, v in skip.items() if k != "id"} for skip in skips],
            "skips_next": f"{url}?skips_after={skips[-1]['id']}" if more else None,
        }
        if scoring_pass.dry_run:
            page["scores"] = pass_dry_run_scores(scoring_pass=scoring_pass)
        body = PassOut(scoring_pass).to_representation(scoring_pass)
        for name, value in page.items():
            body[name] = None if value is None else self.fields[name].to_representation(value)
        return body


class ScorerList(APIView):
    @extend_schema(
        operation_id="scorers_list",
        summary="The built-in scorers and agent checks",
        description="Every built-in scorer and agent check with its description, `needs_config`, the JSON Schema of "
        "its config and the case expectations that configure it. Configured judge criteria are not listed.",
        responses={
            200: inline_serializer(
                "ScorerList",
                {
                    "next": serializers.CharField(allow_null=True),
                    "previous": serializers.CharField(allow_null=True),
                    "results": inline_serializer(
                        "Scorer",
                        {
                            "id": serializers.CharField(),
                            "description": serializers.CharField(),
                            "kind": serializers.CharField(help_text="builtin or agent_check."),
                            "needs_config": serializers.BooleanField(),
                            "config_schema": serializers.DictField(),
                            "expectation_keys": serializers.ListField(child=serializers.CharField()),
                            "version": serializers.CharField(),
                        },
                        many=True,
                    ),
                },
            ),
            **problem_responses(401),
        },
    )
    def get(self, request):
        # The whole catalog fits one page; the envelope is the one every list has.
        return Response({"next": None, "previous": None, "results": scorers_describe()})


class ScoreNow(APIView):
    required_scopes = {"POST": GATE}

    @extend_schema(
        operation_id="score_create",
        summary="Score stored runs now",
        description=f"Runs the scorers over the selected runs in this request and answers with the scores written and, "
        f"separately, every abstention and skip. At most {SYNC_MAX_RUNS} runs (a 400 names the cap; use POST "
        "/v1/api/passes for more). A score already stored is not written again; a stale one is replaced. A score "
        "over the project's quota is not written and is skipped with reason `quota`. `dry_run` writes nothing.",
        request=ScoreRequestIn,
        responses={200: ScoreResult, **problem_responses(400, 401)},
    )
    def post(self, request):
        result = score_now(
            project=request_project(request),
            data=validated(ScoreRequestIn, request.data),
            requested_by_key=request.auth,
        )
        return Response(score_answer(result))


class PassCollection(APIView):
    required_scopes = {"POST": GATE}

    @extend_schema(
        operation_id="passes_create",
        summary="Start a scoring pass run by workers",
        description="The same request as POST /v1/api/score, run in the background over up to "
        f"{PASS_MAX_RUNS} runs, split in chunks that any worker can take. Answers 202 with the pass; follow its "
        "`url` (GET /v1/api/passes/{id}) for the status and progress.",
        request=ScoreRequestIn,
        responses={202: PassOut, **problem_responses(400, 401)},
    )
    def post(self, request):
        scoring_pass = pass_start(
            project=request_project(request),
            data=validated(ScoreRequestIn, request.data),
            requested_by_key=request.auth,
        )
        body = pass_as_dict(scoring_pass)
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class PassDetail(APIView):
    @extend_schema(
        operation_id="passes_retrieve",
        summary="A scoring pass: status, progress and skips",
        parameters=[
            OpenApiParameter("skips_after", int, description="The next page of skips: the id of the last one seen."),
        ],
        responses={200: PassDetailOut, **problem_responses(400, 401, 404)},
    )
    def get(self, request, pass_id):
        scoring_pass = pass_get(project=request_project(request), pass_id=pass_id)
        after = serializers.IntegerField(min_value=0, max_value=2**63 - 1, required=False)
        raw = request.query_params.get("skips_after")
        after = after.run_validation(raw) if raw not in (None, "") else None
        return Response(pass_detail_as_dict(scoring_pass, after=after))


def score_answer(result):
    """The answer of ``POST score`` about ``result`` (``scoring.passes.immediate.score_now``)."""
    return ScoreResult(result).data


def pass_as_dict(scoring_pass):
    """The answer about ``scoring_pass`` (``POST passes``)."""
    return PassOut(scoring_pass).data


def pass_detail_as_dict(scoring_pass, *, after=None):
    """The answer of ``GET passes/{id}``: the pass, its skips (after skip id ``after``) and, in a dry run, scores."""
    return PassDetailOut(scoring_pass, context={"skips_after": after}).data
