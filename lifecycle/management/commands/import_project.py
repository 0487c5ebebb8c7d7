from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evalsite.errors import Conflict, Invalid
from lifecycle.archive import project_import


class Command(BaseCommand):
    help = "Create a project from a zip written by export_project (all or nothing)."

    def add_arguments(self, parser):
        parser.add_argument("archive")
        parser.add_argument("--slug", help="The new project's slug (default: the archived one).")
        parser.add_argument("--name", help="The new project's name (default: the archived one).")

    def handle(self, *args, archive, slug, name, **options):
        path = Path(archive)
        if not path.is_file():
            raise CommandError(f"No such file: {path}.")
        try:
            project = project_import(data=path.read_bytes(), slug=slug, name=name)
        except (Invalid, Conflict) as exc:
            raise CommandError(exc.detail) from None
        self.stdout.write(f"Imported project {project.slug!r}. Create its keys and members next.")
