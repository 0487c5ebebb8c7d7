"""The runs list's filters, declared once: ``GET traces`` and the runs page are built from them.

Each ``RunFilter`` names the ``scoring.selectors.runs_list`` keyword it feeds, its query
parameter in the API and on the page (the page's names are in shared URLs, so they
stay), its kind, its length limit and its words. ``web.api.traces`` builds the API's
query serializer from ``RUN_FILTERS`` and ``web.pages.forms`` the page's filter form,
so a limit cannot differ between the two.

Kinds: ``text`` (free text up to ``max_length``), ``scorer`` (a scorer id or ``any``;
a choice list on the page), ``status`` (one of the run statuses), ``time`` (a moment)
and ``id`` (a golden case's id; API only).
"""

from dataclasses import dataclass

from datasets.models import RunStatus

ID_MAX = 2**63 - 1


@dataclass(frozen=True)
class RunFilter:
    kwarg: str
    api: str
    # The name on the runs page; None: not a filter of the page.
    page: str | None
    kind: str
    max_length: int | None = None
    help: str = ""
    label: str = ""
    choices: tuple = ()
    # The page's hint under the field, in the reviewer's words (the API has ``help``).
    hint: str = ""


RUN_FILTERS = (
    RunFilter("text", "text", "text", "text", 200, "Searched in trace_id, name, input, output.", "Text"),
    RunFilter("experiment", "experiment", "experiment", "text", 200, "Experiment name.", "Experiment"),
    RunFilter("case", "case", None, "id", help="Golden case id."),
    RunFilter("status", "status", "status", "status", choices=tuple(RunStatus.choices), label="Status"),
    RunFilter("started_from", "from", "since", "time", help="Runs started at or after this time.", label="Started from"),
    RunFilter("started_to", "to", "until", "time", help="Runs started before this time.", label="Started before"),
    RunFilter(
        "scorer_failed", "scorer_failed", "failed", "scorer", 100,
        "Runs with a failed score of this scorer id, or of any with 'any'.", "Failed scorer",
    ),
    RunFilter(
        "scorer_abstained", "scorer_abstained", "abstained", "scorer", 100,
        "Runs where this scorer id (or 'any') abstained.", "Abstained scorer",
    ),
    RunFilter(
        "label", "label", "label", "text", 300,
        "Runs with a label `name:value` (`helpful:false`, `tone:rude`, `quality:4`, `helpful:any`).", "Label",
        hint="name:value, e.g. helpful:false or tone:any.",
    ),
    RunFilter(
        "feedback", "feedback", "feedback", "text", 300,
        "Runs with an end user's feedback `name:value` (`thumbs:false`, `reason:too_slow`, `thumbs:any`).",
        "Feedback", hint="name:value, e.g. thumbs:false or reason:any.",
    ),
    RunFilter("session", "session", "session", "text", 200, "Runs of this session_id.", "Session"),
    RunFilter("user", "user", "user", "text", 200, "Runs of this user_id.", "User"),
    RunFilter("conversation", "conversation", "conversation", "text", 200, "Runs of this conversation_id.", "Conversation"),
)  # fmt: skip


def run_filters_from(values, *, names="api"):
    """The ``runs_list`` keywords from ``values`` keyed by each filter's ``api`` (or ``page``) name."""
    return {f.kwarg: values.get(getattr(f, names)) for f in RUN_FILTERS if getattr(f, names) is not None}
