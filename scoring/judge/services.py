"""The one writer of a project's judge configuration.

``judge_configure`` validates everything (``checks.judge.validation``) and writes the
project's ``JudgeConfig`` row, or raises ``Invalid`` with ``errors=[{field, message}]``
and writes nothing. The admin, the settings page and ``manage.py configure_judge`` all
come through here.

The api key is write-only: ``KEEP`` (the default) leaves the stored key as it is, which
is what a form left blank means; ``""`` clears it (no ``Authorization`` header). The
key is never part of an error or of the audit log line, which names the fields that
changed.

The endpoint's host must be one the server may call (``checks.outbound``, with
``EVALSITE_OUTBOUND_ALLOW_PRIVATE``): a link-local or metadata address, or with the
setting off a loopback or private one, is an ``endpoint`` error. The host is resolved
here and checked again on every call.
"""

import logging
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction

from checks.judge.spec import DEFAULT_MAX_CONCURRENCY, DEFAULT_TIMEOUT_SECONDS
from checks.judge.validation import judge_config_errors
from checks.outbound import host_refusal
from evalsite.errors import Invalid
from evalsite.models import Project
from evalsite.team import audit_record
from scoring.labels import label_configs_for_criteria
from scoring.models import JudgeConfig

logger = logging.getLogger("evalsite.audit")


class _Keep:
    def __repr__(self):
        return "KEEP"

    def __bool__(self):
        return False


# Leave the stored value unchanged (for a new configuration: the default).
KEEP = _Keep()
_FIELDS = ("endpoint", "model", "api_key", "timeout_seconds", "criteria", "max_concurrency")
# The fields that change what the judge answers: a change of one moves the gate's bar,
# recorded in the project's audit log under this action (the verdict lists it).
JUDGE_CHANGE = "judge.change"
_JUDGING_FIELDS = ("endpoint", "model", "criteria")


def judge_configure(
    *, project, endpoint, model, api_key=KEEP, timeout_seconds=KEEP, criteria=KEEP, max_concurrency=KEEP, actor=None
):
    """Set ``project``'s judge; returns the ``JudgeConfig`` row.

    ``endpoint`` and ``model`` are required together; both blank turns the judge off
    (criteria are kept). ``criteria`` (``{id: question}``) replaces the stored set
    whole. Any argument left ``KEEP`` keeps its stored value (or takes the default on
    a first configuration: no key, 30 s, no criteria, 4 calls at once). Idempotent: the
    same arguments twice store the same row. Locks the project row, so two admins
    saving at once are applied one after the other. ``actor`` is the user (or None for
    the command line), recorded as ``updated_by``.
    """
    # Resolved before the project row is locked: a slow resolver must not hold the lock.
    refusal = _endpoint_refusal(_text(endpoint))
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()
        config = JudgeConfig.objects.filter(project=project).first()
        current = config or JudgeConfig(
            project=project,
            timeout_seconds=DEFAULT_TIMEOUT_SECONDS,
            max_concurrency=DEFAULT_MAX_CONCURRENCY,
            criteria={},
        )
        values = {
            "endpoint": _text(endpoint),
            "model": _text(model),
            "api_key": current.api_key if api_key is KEEP else _text(api_key),
            "timeout_seconds": current.timeout_seconds if timeout_seconds is KEEP else timeout_seconds,
            "criteria": current.criteria if criteria is KEEP else _criteria(criteria),
            "max_concurrency": current.max_concurrency if max_concurrency is KEEP else max_concurrency,
        }
        errors = judge_config_errors(**values)
        if refusal and not any(e["field"] == "endpoint" for e in errors):
            errors.append({"field": "endpoint", "message": f"is not an address the server may call: {refusal}"})
        if errors:
            raise Invalid("The judge configuration is invalid; see errors.", errors=errors)
        changed = [name for name in _FIELDS if config is None or getattr(config, name) != values[name]]
        for name, value in values.items():
            setattr(current, name, value)
        current.updated_by = actor if getattr(actor, "is_authenticated", False) else None
        current.save()
        # Reviewers calibrate each criterion with labels of the same name.
        label_configs_for_criteria(project=project, criteria=current.criteria)
        judging = [name for name in changed if name in _JUDGING_FIELDS]
        if config is not None and judging:
            audit_record(
                project=project,
                actor=current.updated_by,
                action=JUDGE_CHANGE,
                summary="judge changed: " + "; ".join(_describe(name, values) for name in judging),
            )
    logger.info(
        "judge of project %s %s by %s: %s",
        project.slug,
        "created" if config is None else "changed",
        getattr(actor, "username", None) or "the command line",
        ", ".join(_describe(name, values) for name in changed) or "nothing changed",
    )
    return current


def _endpoint_refusal(endpoint):
    if not isinstance(endpoint, str) or not endpoint:
        return None
    try:
        host = urlsplit(endpoint).hostname
    except ValueError:
        return None  # the endpoint's own rule names the problem
    return host_refusal(host, allow_private=settings.EVALSITE_OUTBOUND_ALLOW_PRIVATE) if host else None


def _text(value):
    return value.strip() if isinstance(value, str) else value


def _criteria(criteria):
    if not isinstance(criteria, dict):
        return criteria
    return {_text(k): _text(v) for k, v in criteria.items()}


def _describe(name, values):
    if name == "api_key":
        return "api_key " + ("set" if values["api_key"] else "cleared")
    if name == "criteria":
        return "criteria " + (", ".join(sorted(values["criteria"])) or "none")
    return f"{name} {values[name]}"
