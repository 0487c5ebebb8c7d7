from django.core.management.base import BaseCommand, CommandError

from evalsite.models import Project
from evalsite.projects import api_key_create


class Command(BaseCommand):
    help = "Create an API key for a project. The key is printed once, alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")

    def handle(self, *args, slug, name, **options):
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"No project with slug {slug!r}.")
        key, full_key = api_key_create(project=project, name=name)
        self.stdout.write(f"Created API key {key.prefix!r} for project {project.slug!r} (shown once):")
        self.stdout.write(full_key)
