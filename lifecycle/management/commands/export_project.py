from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evalsite.models import Project
from lifecycle.exports import export_write


class Command(BaseCommand):
    help = "Write a project (datasets, experiments, cases, runs, scores) to a zip of JSONL files, here and now."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--output", "-o", help="The zip to write (default: <slug>.zip).")

    def handle(self, *args, slug, output, **options):
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"No project with slug {slug!r}.")
        path = Path(output or f"{slug}.zip")
        counts = export_write(project, path)  # a temporary file renamed once whole, as a worker writes it
        self.stdout.write(f"Wrote project {slug!r} to {path} ({counts['runs']} runs, {counts['scores']} scores).")
