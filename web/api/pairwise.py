"""HTTP API of pairwise review: judgements of two experiments' answers to one case, and a pair's figures.

``pairwise`` (GET ``?experiment=B&against=A``: wins, losses, ties, the win rate without
ties and its Wilson 95% interval) and ``pairwise/judgements`` (POST one judgement; the
author is the API key's name). The rules are ``scoring.review.pairwise``; docs/labels.md
(Pairwise review) is the reference.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from datasets.experiments import experiment_get
from evalsite.auth import request_project
from evalsite.scopes import LABEL
from scoring.models import PairwiseVerdict
from scoring.review.pairwise import judgement_seen_from, pairwise_judge, pairwise_summary
from web.api.openapi import problem_responses
from web.api.rest import Text, validated


class PairQuery(serializers.Serializer):
    experiment = Text(max_length=200, help_text="The experiment judged (the candidate).")
    against = Text(max_length=200, help_text="The experiment it is judged against (the base).")


class JudgementIn(PairQuery):
    case_id = serializers.IntegerField(min_value=1, help_text="An active golden case both experiments answered.")
    verdict = serializers.ChoiceField(
        choices=PairwiseVerdict.choices, help_text="`experiment`'s answer against `against`'s: better, worse or tie."
    )


class JudgementOut(serializers.Serializer):
    case_id = serializers.IntegerField()
    experiment = serializers.CharField()
    against = serializers.CharField()
    verdict = serializers.ChoiceField(choices=PairwiseVerdict.choices)
    author = serializers.CharField()
    trace_id = serializers.CharField(allow_null=True, help_text="The run of `experiment` that was judged.")
    against_trace_id = serializers.CharField(allow_null=True, help_text="The run of `against` it was judged against.")
    updated_at = serializers.DateTimeField()


class PairwiseSummaryOut(serializers.Serializer):
    experiment = serializers.CharField()
    against = serializers.CharField()
    wins = serializers.IntegerField(help_text="Judgements where `experiment`'s answer was better.")
    losses = serializers.IntegerField()
    ties = serializers.IntegerField()
    n = serializers.IntegerField(help_text="Every judgement, ties included.")
    decisive = serializers.IntegerField(help_text="wins + losses: what the win rate is over.")
    win_rate = serializers.FloatField(allow_null=True, help_text="wins / (wins + losses); ties left out.")
    ci95 = serializers.ListField(child=serializers.FloatField(), allow_null=True, help_text="Wilson 95% interval.")
    reviewers = serializers.IntegerField()
    cases = serializers.IntegerField()


def _pair(request, data):
    project = request_project(request)
    first = experiment_get(project=project, name=data["experiment"], field="experiment")
    return project, first, experiment_get(project=project, name=data["against"], field="against")


def _judgement_view(judgement, first, second):
    verdict, ours, theirs = judgement_seen_from(judgement, first)
    return {
        "case_id": judgement.case_id, "experiment": first.name, "against": second.name, "verdict": verdict,
        "author": judgement.author, "trace_id": ours and ours.trace_id, "against_trace_id": theirs and theirs.trace_id,
        "updated_at": judgement.updated_at,
    }  # fmt: skip


class PairwiseFigures(APIView):
    @extend_schema(
        operation_id="pairwise_summary",
        summary="A pair of experiments' pairwise review: wins, losses, ties and the win rate (ties left out)",
        parameters=[PairQuery],
        responses={200: PairwiseSummaryOut, **problem_responses(400, 401, 404)},
    )
    def get(self, request):
        _, first, second = _pair(request, validated(PairQuery, request.query_params))
        return Response(PairwiseSummaryOut(pairwise_summary(first=first, second=second)).data)


class PairwiseJudgements(APIView):
    required_scopes = {"POST": LABEL}

    @extend_schema(
        operation_id="pairwise_judgements_create",
        summary="Judge one case: is `experiment`'s answer better than, worse than or as good as `against`'s",
        description="Each side's newest run of the case is judged. One judgement per author (the API key's name), "
        "case and pair, whichever way round the pair is named: judging again replaces it. A case the two did not "
        "both answer is a 400 naming `case_id`.",
        request=JudgementIn,
        responses={
            201: OpenApiResponse(JudgementOut, description="A new judgement."),
            200: OpenApiResponse(JudgementOut, description="The author's judgement, replaced."),
            **problem_responses(400, 401, 404),
        },
    )
    def post(self, request):
        data = validated(JudgementIn, request.data)
        project, first, second = _pair(request, data)
        key = request.auth
        judgement, created = pairwise_judge(
            project=project, first=first, second=second, case_id=data["case_id"], verdict=data["verdict"],
            author=f"key:{key.name or key.prefix}",
        )  # fmt: skip
        return Response(
            JudgementOut(_judgement_view(judgement, first, second)).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )
