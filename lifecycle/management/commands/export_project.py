from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evalsite.models import Project
from lifecycle.archive import project_export


class Command(BaseCommand):
    help = "Write a project (datasets, experiments, cases, runs, scores) to a zip of JSONL files."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--output", "-o", help="The zip to write (default: <slug>.zip).")

    def handle(self, *args, slug, output, **options):
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"No project with slug {slug!r}.")
        path = Path(output or f"{slug}.zip")
        path.write_bytes(project_export(project))
        self.stdout.write(f"Wrote project {slug!r} to {path}.")
