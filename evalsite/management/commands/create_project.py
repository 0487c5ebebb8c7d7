import argparse

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from evalsite.errors import Conflict, Invalid
from evalsite.models import Role
from evalsite.projects import api_key_create, project_create
from evalsite.scopes import ADMIN
from evalsite.team import member_add


def _ascii_whole(text):
    # int() also reads "١٢" and "1_000"; a quota is written in ASCII digits.
    if not (text.isascii() and text.lstrip("-").isdigit()):
        raise argparse.ArgumentTypeError(f"must be a whole number in ASCII digits; got {text!r}")
    return int(text)


class Command(BaseCommand):
    help = "Create a project and its first API key. The key is printed once, alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")
        parser.add_argument(
            "--quota-per-minute", type=_ascii_whole, default=0, help="Records per minute; 0 = no ceiling."
        )
        parser.add_argument(
            "--admin",
            metavar="USER",
            help="An existing user (username or e-mail) who becomes the project's admin and sees it in the pages.",
        )

    def handle(self, *args, slug, name, quota_per_minute, admin, **options):
        if quota_per_minute < 0:
            raise CommandError("--quota-per-minute must be 0 or more.")
        try:
            with transaction.atomic():
                project = project_create(slug=slug, name=name, quota_per_minute=quota_per_minute)
                if admin:
                    member_add(project=project, actor=None, who=admin, role=Role.ADMIN)
                _, full_key = api_key_create(project=project, name="created with the project", scopes=[ADMIN])
        except (Conflict, Invalid) as exc:
            raise CommandError(exc.detail) from None
        self.stdout.write(f"Created project {project.slug!r}. Its admin API key (shown once):")
        self.stdout.write(full_key)
