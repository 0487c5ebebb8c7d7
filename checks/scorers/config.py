"""Which config a scorer runs with, whether a requested config is valid, and its hash.

Resolution (ARCHITECTURE §5, "a linked case's expectation wins"):

1. When the run is linked to a case and the case configures the scorer (its
   ``case_config`` returns a config), that config is used whole and the request's
   config for the scorer is ignored. The case is the reference a gate is judged
   against, so a pass cannot loosen it.
2. Otherwise the request's config for the scorer (``config[scorer_id]``).
3. Otherwise ``{}`` for a scorer that runs without config, and None for one that needs
   it; ``config_missing_abstain(scorer)`` is then the abstention to record.

``config_hash`` is the SHA-256 of the canonical JSON of the resolved config; a score is
unique on (trace, scorer, scorer_version, config_hash).
"""

import hashlib

import jsonschema

from .base import config_missing_abstain
from .schemas import schema_problems
from .values import canonical_json, json_path

__all__ = ["config_hash", "config_missing_abstain", "config_validate", "resolve_config"]


def resolve_config(scorer, request_config, run):
    """The config ``scorer`` runs with on ``run``, or None when it needs one and has none.

    ``request_config`` is this scorer's entry of the request's ``config`` map (None
    when the request gave none).
    """
    if scorer.fixed_config is not None:
        return dict(scorer.fixed_config)
    if run.has_case and scorer.case_config is not None:
        from_case = scorer.case_config(run)
        if from_case is not None:
            return from_case
    if request_config is not None:
        return dict(request_config) if isinstance(request_config, dict) else request_config
    return None if scorer.needs_config else {}


def config_validate(scorer, config):
    """Every problem of a requested ``config`` for ``scorer``, as ``"<scorer>.<field>: <message>"``.

    ``[]`` when the config is valid. Config values that are themselves JSON Schemas
    (``json_valid.schema``, ``tool_output_schema.tool_output_schema``) are checked
    against the JSON Schema meta-schema too.
    """
    validator = jsonschema.Draft202012Validator(scorer.config_schema)
    problems = []
    for error in sorted(validator.iter_errors(config), key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        problems.append(f"{_field(scorer, error.absolute_path)}: {error.message}")
    if not problems and scorer.config_problems is not None:
        problems.extend(scorer.config_problems(config))
    if isinstance(config, dict):
        for key in scorer.schema_keys:
            if key in config:
                problems.extend(
                    f"{scorer.id}.{key}: not a valid JSON Schema: {p}" for p in schema_problems(config[key])
                )
    return problems


def _field(scorer, parts):
    # "$.expected_tools[0]" -> "tool_choice.expected_tools[0]"
    return scorer.id + json_path(parts)[1:]


def config_hash(config):
    """SHA-256 (hex) of the canonical JSON of ``config`` (None hashes as ``{}``)."""
    return hashlib.sha256(canonical_json(config if config is not None else {}).encode()).hexdigest()
