"""``manage.py configure_judge SLUG --endpoint URL --model NAME [...]``: set a project's judge.

The api key is read from the environment variable named by ``--api-key-env``, never
from the command line (argv is visible to every user of the machine and lands in shell
history). Options left out keep their stored values; ``--criterion`` given at least
once replaces the whole set of criteria. The summary printed never includes the key.
"""

import argparse
import os
import re

from django.core.management.base import BaseCommand, CommandError

from evalsite.errors import Invalid
from evalsite.models import Project
from scoring.judge.services import KEEP, judge_configure


def _criterion(text):
    criterion_id, sep, question = text.partition("=")
    if not sep or not criterion_id.strip():
        raise ValueError(text)
    return criterion_id.strip(), question.strip()


_criterion.__name__ = "ID=QUESTION"  # argparse names the type in its error message
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Command(BaseCommand):
    help = (
        "Configure a project's LLM judge (an OpenAI-compatible chat completions server). "
        "The api key is read from the environment variable named by --api-key-env."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        # No prefixes: "--api-key sk-..." must be refused, not read as "--api-key-env sk-...".
        parser.allow_abbrev = False
        return parser

    def add_arguments(self, parser):
        parser.add_argument("slug", metavar="SLUG")
        parser.add_argument("--endpoint", required=True, metavar="URL", help="e.g. http://localhost:11434/v1")
        parser.add_argument("--model", required=True, metavar="NAME", help="e.g. qwen2.5:14b")
        key = parser.add_mutually_exclusive_group()
        key.add_argument("--api-key-env", metavar="VAR", help="read the api key from this environment variable")
        key.add_argument("--no-api-key", action="store_true", help="clear the stored api key (no Authorization header)")
        # Refused with an explanation (and without echoing it) rather than as an unknown option.
        parser.add_argument("--api-key", dest="api_key_on_argv", help=argparse.SUPPRESS)
        parser.add_argument("--timeout-seconds", type=int, metavar="N", help="one call, connect to last byte (1..300)")
        parser.add_argument("--max-concurrency", type=int, metavar="N", help="judge calls at once in a worker (1..32)")
        parser.add_argument(
            "--criterion",
            action="append",
            type=_criterion,
            default=None,
            metavar='ID="QUESTION"',
            help="a judge criterion; repeat for several (replaces the stored set)",
        )

    def handle(
        self,
        *args,
        slug,
        endpoint,
        model,
        api_key_env,
        no_api_key,
        timeout_seconds,
        max_concurrency,
        criterion,
        **options,
    ):
        if options.get("api_key_on_argv") is not None:
            raise CommandError(
                "The api key is never taken from the command line (other users can see it, and it stays in the "
                "shell's history): export it in an environment variable and pass --api-key-env VAR."
            )
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"No project with slug {slug!r}.")
        try:
            config = judge_configure(
                project=project,
                endpoint=endpoint,
                model=model,
                api_key="" if no_api_key else _api_key_from(api_key_env),
                timeout_seconds=KEEP if timeout_seconds is None else timeout_seconds,
                criteria=_criteria_from(criterion),
                max_concurrency=KEEP if max_concurrency is None else max_concurrency,
                actor=None,
            )
        except Invalid as exc:
            problems = "\n".join(f"  {e['field']}: {e['message']}" for e in exc.errors)
            raise CommandError(f"The judge configuration is invalid:\n{problems}") from None
        self.stdout.write(_summary(project, config, api_key_env))


def _api_key_from(api_key_env):
    """The key read from the named environment variable; ``KEEP`` when none is named."""
    if api_key_env is None:
        return KEEP
    if not _ENV_NAME_RE.fullmatch(api_key_env):
        # Not echoed: what was typed may be the key itself.
        raise CommandError(
            "--api-key-env takes the NAME of an environment variable (letters, digits and underscores), "
            "not the key itself."
        )
    if api_key_env not in os.environ:
        raise CommandError(f"The environment variable {api_key_env} is not set; export it with the api key.")
    api_key = os.environ[api_key_env].strip()
    if not api_key:
        raise CommandError(f"The environment variable {api_key_env} is empty; use --no-api-key to clear the key.")
    return api_key


def _criteria_from(criterion):
    if criterion is None:
        return KEEP
    criteria = {}
    for criterion_id, question in criterion:
        if criterion_id in criteria:
            raise CommandError(f"--criterion {criterion_id} is given twice.")
        criteria[criterion_id] = question
    return criteria


def _summary(project, config, api_key_env):
    key_source = f" (from ${api_key_env})" if api_key_env else ""
    lines = [
        f"Judge of project {project.slug!r} is {'on' if config.is_configured else 'off'}:",
        f"  endpoint         {config.endpoint}",
        f"  model            {config.model}",
        f"  api key          {'set' + key_source if config.api_key else 'none (no Authorization header)'}",
        f"  timeout_seconds  {config.timeout_seconds}",
        f"  max_concurrency  {config.max_concurrency}",
        f"  criteria         {len(config.criteria)}",
        *(f"    {cid}: {question}" for cid, question in config.criteria.items()),
    ]
    return "\n".join(lines)
