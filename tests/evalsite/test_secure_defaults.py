"""Secure by default: DEBUG is off unless ``EVALSITE_DEBUG`` turns it on, and a live
server shows the site's own 404 page, not Django's debug page."""

import os
import subprocess
import sys
import urllib.error
import urllib.request

from tests.live import ROOT, web_server

SHOW_DEBUG = "from django.conf import settings; print('DEBUG', settings.DEBUG)"


def _debug_with(**env):
    full_env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "EVALSITE_DEBUG")}
    full_env.update(env)
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", SHOW_DEBUG],
        cwd=ROOT, env=full_env, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_debug_is_off_when_nothing_turns_it_on():
    assert _debug_with() == "DEBUG False"


def test_a_generic_debug_variable_does_not_turn_it_on():
    # DEBUG=1 is set by many tools for their own purposes; only our own variable counts.
    assert _debug_with(DEBUG="1") == "DEBUG False"


def test_evalsite_debug_turns_it_on():
    assert _debug_with(EVALSITE_DEBUG="1") == "DEBUG True"


def test_a_live_server_on_default_settings_shows_the_sites_404_page(transactional_db):
    with web_server(workers=1, threads=2) as url:
        try:
            urllib.request.urlopen(url + "/no-such-page/", timeout=10)
        except urllib.error.HTTPError as error:
            status, body = error.code, error.read().decode()
    assert status == 404
    assert "There is nothing here" in body
    assert "URLconf" not in body and "DEBUG = True" not in body
