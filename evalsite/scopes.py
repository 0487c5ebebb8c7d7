"""What an API key may do: its scopes (ARCHITECTURE section 14).

``ingest`` sends runs (the API, OTLP traces and logs) and creates experiments; ``gate``
runs gates and scoring passes and reads verdicts; ``curate`` changes datasets, cases,
imports, quarantine, label configs, prices and tightens gate policies; ``label`` writes
human labels (ground truth for judge calibration); ``feedback`` sends end users'
feedback on runs and nothing else; ``admin`` does all of these and may loosen a policy
(with a reason). A CI job holds ``ingest,gate``: it can send what it built and ask for a
verdict, never move its own bar.

Every key reads the project (runs, datasets, verdicts): reading moves no bar. The one
exception is a key whose only scope is ``feedback``: it is made to sit in a web page,
where anyone can copy it, so it may send feedback and not even read (a read answers
403 with ``required_scope`` ``any``: any other scope). Keys made before scopes existed
keep full access and are marked older keys.
"""

INGEST = "ingest"
GATE = "gate"
CURATE = "curate"
LABEL = "label"
FEEDBACK = "feedback"
ADMIN = "admin"
# What a read needs, as the 403 and the OpenAPI description name it: a key of any scope
# but a feedback-only one.
ANY = "any"

SCOPES = (INGEST, GATE, CURATE, LABEL, FEEDBACK, ADMIN)
DEFAULT_SCOPES = (INGEST, GATE)

SCOPE_HELP = {
    INGEST: "send runs (API, OTLP) and create experiments",
    GATE: "run gates and scoring passes, read verdicts",
    CURATE: "edit datasets, cases, quarantine, prices; tighten gate policies",
    LABEL: "write human labels (ground truth for the judge)",
    FEEDBACK: "send end users' feedback on runs, nothing else (not even reads): safe in a web page",
    ADMIN: "everything, including loosening a gate policy with a reason",
}

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def scopes_clean(scopes):
    """The scopes as a sorted tuple in ``SCOPES`` order; ``ValueError`` names an unknown one."""
    chosen = {s.strip() for s in scopes if s and s.strip()}
    unknown = sorted(chosen - set(SCOPES))
    if unknown:
        raise ValueError(f"unknown scope {unknown[0]!r}; choose from {', '.join(SCOPES)}")
    if not chosen:
        raise ValueError(f"choose at least one scope of {', '.join(SCOPES)}")
    return tuple(s for s in SCOPES if s in chosen)


def key_has_scope(key, scope):
    """Whether ``key`` may act under ``scope`` (``admin`` and older keys may do anything)."""
    return key.full_access or scope in key.scopes or ADMIN in key.scopes


def key_may_read(key):
    """Whether ``key`` may read the project: any key but one that holds only ``feedback``."""
    return key.full_access or any(scope != FEEDBACK for scope in key.scopes)


def view_scope(view, method):
    """The scope a view needs for ``method``: ``None`` for reads, ``admin`` when undeclared.

    A view declares ``required_scopes = {"POST": "ingest"}``; a write a view forgot to
    declare needs ``admin``, so a new endpoint fails closed.
    """
    if method in SAFE_METHODS:
        return None
    return getattr(view, "required_scopes", {}).get(method, ADMIN)
