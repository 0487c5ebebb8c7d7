"""Where the server may send its own requests (webhooks): refused addresses name the field."""

import pytest
from django.test import override_settings

from evalsite.errors import Invalid
from evalsite.outbound import outbound_url_check


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/hook",
        "http://metadata.google.internal/",
        "http://0.0.0.0:8080/",
        "http://224.0.0.1/",
        "http://[::ffff:169.254.1.1]/",
    ],
)
def test_it_always_refuses_link_local_metadata_unspecified_and_multicast(url):
    with override_settings(EVALSITE_OUTBOUND_ALLOW_PRIVATE=True), pytest.raises(Invalid) as caught:
        outbound_url_check(url, field="webhook_urls[0]")
    assert caught.value.errors[0]["field"] == "webhook_urls[0]"
    assert "may not be called" in caught.value.errors[0]["message"]


@pytest.mark.parametrize("url", ["http://127.0.0.1:9000/hook", "http://10.0.0.5/hook", "http://[::1]/"])
def test_it_refuses_private_and_loopback_addresses_unless_allowed(url):
    with override_settings(EVALSITE_OUTBOUND_ALLOW_PRIVATE=False), pytest.raises(Invalid) as caught:
        outbound_url_check(url)
    assert "EVALSITE_OUTBOUND_ALLOW_PRIVATE" in caught.value.errors[0]["message"]
    with override_settings(EVALSITE_OUTBOUND_ALLOW_PRIVATE=True):
        assert outbound_url_check(url) == url


@pytest.mark.parametrize(
    "url", ["ftp://example.com/", "hooks.example.com", "http://user:pw@1.1.1.1/", "http://x:99999/"]
)
def test_it_refuses_what_is_not_an_http_url_with_a_host(url):
    with pytest.raises(Invalid) as caught:
        outbound_url_check(url)
    assert caught.value.errors[0]["field"] == "url"


def test_it_accepts_a_public_address():
    with override_settings(EVALSITE_OUTBOUND_ALLOW_PRIVATE=False):
        assert outbound_url_check("https://1.1.1.1/hook") == "https://1.1.1.1/hook"
