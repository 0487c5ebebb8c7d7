import json
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from evalsite.models import Project, Role
from evalsite.projects import api_key_create, membership_set, project_create
from evalsite.scopes import ADMIN
from web.demo import demo_data_load

DEMO_SLUG = "reservo"


class Command(BaseCommand):
    help = "Create (once) the local demo: an admin user, the demo project with data, and an API key; print them."

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000/")

    def handle(self, *args, url, **options):
        path = settings.VAR_DIR / "demo.json"
        demo = json.loads(path.read_text()) if path.exists() else None
        project = Project.objects.filter(slug=DEMO_SLUG).first()
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

    @transaction.atomic
    def _create(self, project):
        User = get_user_model()  # noqa: N806
        password = secrets.token_urlsafe(12)
        user = User.objects.filter(username="admin").first() or User(username="admin", email="admin@localhost")
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        project = project or project_create(slug=DEMO_SLUG, name="Reservo (demo)")
        membership_set(user=user, project=project, role=Role.ADMIN)
        _, full_key = api_key_create(project=project, name="demo", created_by=user, scopes=[ADMIN])
        demo_data_load(project=project, user=user)
        return {"username": user.username, "password": password, "project": project.slug, "api_key": full_key}
