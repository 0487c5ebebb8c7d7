"""The evalgate client's source archive, served at ``/client/evalgate.tar.gz``.

CI installs the client from the server it is about to talk to, with nothing but pip:
``pip install "$EVALSITE_URL/client/evalgate.tar.gz"``. No git, no package index for the
client itself (pip still fetches setuptools to build it), and the client always matches
the server's version. The archive is the package as ``client/pyproject.toml`` declares
it (the pyproject, README, LICENSE and the ``evalgate`` package), built once per process
from the files beside this deployment, byte for byte the same each time (sorted names,
the files' own times, no owner). Public, like the client's source: no key needed.

The CI definitions that install it are served beside it, so a repository can take them
from the server it gates against: ``/client/action.yml`` (the GitHub action, saved
once as ``.github/actions/evalgate/action.yml`` and used as ``uses:
./.github/actions/evalgate``; without ``client/`` beside it, it installs the client from
the server) and ``/client/evalgate.gitlab-ci.yml`` (the GitLab template, to ``include:``).
"""

import functools
import gzip
import hashlib
import io
import re
import tarfile

from django.conf import settings
from django.http import HttpResponse
from django.views.decorators.http import require_safe

CLIENT_FILES = ("pyproject.toml", "README.md", "LICENSE")
CI_FILES = {"action.yml": "action.yml", "evalgate.gitlab-ci.yml": "ci/evalgate.gitlab-ci.yml"}
PACKAGE = "evalgate"


def client_version() -> str:
    """The client's version, read from its ``version.py`` (the server does not import the client)."""
    text = (settings.BASE_DIR / "client" / PACKAGE / "version.py").read_text("utf-8")
    return re.search(r"""^__version__ = ["']([^"']+)["']""", text, re.MULTILINE).group(1)


@functools.cache
def client_archive() -> tuple[str, bytes]:
    """``(file name, tar.gz bytes)`` of the client's source; the same bytes for the same files."""
    root = settings.BASE_DIR / "client"
    top = f"evalgate-{client_version()}"
    paths = [root / name for name in CLIENT_FILES] + sorted((root / PACKAGE).glob("*.py"))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path in paths:
            data = path.read_bytes()
            info = tarfile.TarInfo(f"{top}/{path.relative_to(root).as_posix()}")
            info.size, info.mode = len(data), 0o644
            info.mtime = int(path.stat().st_mtime)  # a wheel built from it needs times after 1980
            archive.addfile(info, io.BytesIO(data))
    return f"{top}.tar.gz", gzip.compress(raw.getvalue(), mtime=0)


@require_safe
def client_download(request):
    name, body = client_archive()
    response = HttpResponse(body, content_type="application/gzip")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["ETag"] = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    response["Cache-Control"] = "public, max-age=300"
    return response


@require_safe
def ci_file_download(request, name):
    """One of ``CI_FILES``, as YAML text of this deployment."""
    body = (settings.BASE_DIR / CI_FILES[name]).read_bytes()
    response = HttpResponse(body, content_type="text/yaml; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{name}"'
    response["ETag"] = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    response["Cache-Control"] = "public, max-age=300"
    return response
