"""``GET /client/evalgate.tar.gz``: the CI client's source archive, for pip, with no key."""

import io
import tarfile

import pytest

from evalgate.version import __version__
from tests.live import ROOT
from web.client_package import client_archive

URL = "/client/evalgate.tar.gz"


def names(body):
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as archive:
        return sorted(archive.getnames())


@pytest.mark.django_db
def test_it_serves_the_client_package_without_a_key(client):
    response = client.get(URL)

    assert response.status_code == 200
    assert response["Content-Type"] == "application/gzip"
    assert response["Content-Disposition"] == f'attachment; filename="evalgate-{__version__}.tar.gz"'
    top = f"evalgate-{__version__}"
    package = sorted(f"{top}/evalgate/{p.name}" for p in (ROOT / "client" / "evalgate").glob("*.py"))
    assert names(response.content) == sorted([f"{top}/LICENSE", f"{top}/README.md", f"{top}/pyproject.toml", *package])


@pytest.mark.django_db
def test_it_serves_the_files_of_this_deployment(client):
    body = client.get(URL).content

    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as archive:
        served = archive.extractfile(f"evalgate-{__version__}/evalgate/http.py").read()
    assert served == (ROOT / "client" / "evalgate" / "http.py").read_bytes()


def test_it_builds_the_same_bytes_each_time():
    client_archive.cache_clear()
    first = client_archive()
    client_archive.cache_clear()

    assert client_archive() == first
