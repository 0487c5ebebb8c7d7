import json
import secrets

from django.conf import settings
from django.core.management.base import BaseCommand

from evalsite.selectors import project_find
from lifecycle.demo import demo_create

DEMO_SLUG = "reservo"


class Command(BaseCommand):
    help = "Create (once) the local demo: an admin user, the demo project with data, and an API key; print them."

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000/")

    def handle(self, *args, url, **options):
        path = settings.VAR_DIR / "demo.json"
        demo = json.loads(path.read_text()) if path.exists() else None
        project = project_find(DEMO_SLUG)
        if demo is None or project is None:
            demo = self._create(project)
            path.write_text(json.dumps(demo, indent=2))
            path.chmod(0o600)
        self.stdout.write(
            "\n".join(
                [
                    "",
                    f"  evalsite is starting at {url}",
                    f"  log in as {demo['username']} / {demo['password']}",
                    f"  demo project: {DEMO_SLUG} (API docs at {url}v1/api/docs/)",
                    "  API key (kept in var/demo.json for local use):",
                    f"  {demo['api_key']}",
                    "",
                ]
            )
        )

    def _create(self, project):
        password = secrets.token_urlsafe(12)
        project, full_key = demo_create(
            slug=DEMO_SLUG, name="Reservo (demo)", username="admin", password=password, project=project
        )
        return {"username": "admin", "password": password, "project": project.slug, "api_key": full_key}
