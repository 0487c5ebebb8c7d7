"""The package as it would be published: an sdist and a wheel that ``python -m build``
makes from client/ and ``twine check --strict`` accepts, with the license declared the
PEP 639 way and a README that reads right off the repository (no relative links)."""

import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser

import pytest

from tests.live import ROOT

CLIENT = ROOT / "client"


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The sdist and the wheel built from a copy of client/ (the wheel built from the sdist)."""
    folder = tmp_path_factory.mktemp("dist")
    source = folder / "client"
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    result = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(folder / "dist"), str(source)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    (sdist,) = (folder / "dist").glob("evalgate-*.tar.gz")
    (wheel,) = (folder / "dist").glob("evalgate-*-py3-none-any.whl")
    return sdist, wheel


def wheel_metadata(wheel):
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return Parser().parsestr(archive.read(name).decode("utf-8"))


def test_it_passes_twine_check_strict(dist):
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, dist)], capture_output=True, text=True
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == 2


def test_it_declares_its_license_as_an_spdx_expression_with_the_license_file(dist):
    metadata = wheel_metadata(dist[1])

    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert metadata["License"] is None  # the deprecated free-text field is gone
    assert not [c for c in metadata.get_all("Classifier") if c.startswith("License ::")]


def test_it_ships_the_license_text_in_the_sdist_and_the_wheel(dist):
    sdist, wheel = dist
    with tarfile.open(sdist) as archive:
        in_sdist = [n for n in archive.getnames() if n.endswith("/LICENSE")]
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = [n for n in archive.namelist() if n.endswith("licenses/LICENSE")]
        text = archive.read(in_wheel[0]).decode("utf-8")

    assert in_sdist == ["evalgate-1.0.0/LICENSE"]
    assert text.startswith("MIT License")


def test_its_long_description_has_no_relative_link_or_placeholder(dist):
    description = wheel_metadata(dist[1]).get_payload()
    targets = re.findall(r"\]\(([^)]+)\)", description)

    assert description.startswith("# evalgate")
    assert [t for t in targets if not t.startswith("https://")] == []
    assert "OWNER" not in description
