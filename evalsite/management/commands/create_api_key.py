from django.core.management.base import BaseCommand, CommandError

from evalsite.models import Project
from evalsite.projects import api_key_create
from evalsite.scopes import DEFAULT_SCOPES, SCOPES


class Command(BaseCommand):
    help = "Create an API key for a project. The key is printed once, alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")
        parser.add_argument(
            "--scopes",
            default=",".join(DEFAULT_SCOPES),
            help=f"Comma-separated, of {', '.join(SCOPES)} (default: {','.join(DEFAULT_SCOPES)}, what a CI job needs).",
        )

    def handle(self, *args, slug, name, scopes, **options):
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"No project with slug {slug!r}.")
        try:
            key, full_key = api_key_create(project=project, name=name, scopes=scopes.split(","))
        except ValueError as exc:
            raise CommandError(f"--scopes: {exc}.") from None
        self.stdout.write(
            f"Created API key {key.prefix!r} for project {project.slug!r} with scopes {','.join(key.scopes)} (shown once):"
        )
        self.stdout.write(full_key)
