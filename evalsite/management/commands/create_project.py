from django.core.management.base import BaseCommand, CommandError
from django.utils.text import slugify

from evalsite.errors import Conflict
from evalsite.projects import api_key_create, project_create


class Command(BaseCommand):
    help = "Create a project and its first API key. The key is printed once, alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")
        parser.add_argument("--quota-per-minute", type=int, default=0, help="Records per minute; 0 = no ceiling.")

    def handle(self, *args, slug, name, quota_per_minute, **options):
        if slugify(slug) != slug:
            raise CommandError(f"SLUG must be lowercase letters, digits, hyphens or underscores; got {slug!r}.")
        if quota_per_minute < 0:
            raise CommandError("--quota-per-minute must be 0 or more.")
        try:
            project = project_create(slug=slug, name=name, quota_per_minute=quota_per_minute)
        except Conflict as exc:
            raise CommandError(exc.detail) from None
        _, full_key = api_key_create(project=project, name="created with the project")
        self.stdout.write(f"Created project {project.slug!r}. Its API key (shown once):")
        self.stdout.write(full_key)
