"""Logins are throttled: after ``EVALSITE_LOGIN_FAILURE_LIMIT`` wrong passwords for one
user from one address, that pair is locked out (429) for ``EVALSITE_LOGIN_COOLOFF_MINUTES``,
even with the right password; others are not. The count is django-axes'."""

from django.conf import settings

from tests.base import PASSWORD


def _log_in(client, username, password, address="203.0.113.7"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_repeated_wrong_passwords_lock_the_login_out_even_with_the_right_one(actors, client):
    limit = settings.AXES_FAILURE_LIMIT
    assert 3 <= limit <= 10
    for _ in range(limit - 1):
        response = _log_in(client, "alice", "wrong password")
        assert response.status_code == 200
        assert b"Please enter a correct username and password" in response.content
    locked = _log_in(client, "alice", "wrong password")
    assert locked.status_code == 429
    assert b"Too many failed logins" in locked.content
    assert _log_in(client, "alice", PASSWORD).status_code == 429
    assert "_auth_user_id" not in client.session


def test_a_lockout_does_not_lock_out_another_user_or_another_address(actors, client):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _log_in(client, "alice", "wrong password")
    assert _log_in(client, "bob", PASSWORD).status_code == 302
    client.logout()
    assert _log_in(client, "alice", PASSWORD, address="198.51.100.9").status_code == 302


def test_a_right_password_before_the_limit_logs_in_and_clears_the_count(actors, client):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _log_in(client, "alice", "wrong password")
    assert _log_in(client, "alice", PASSWORD).status_code == 302
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _log_in(client, "alice", "wrong password").status_code == 200


def test_behind_a_trusted_proxy_each_client_address_is_counted_apart(actors, client, settings):
    settings.EVALSITE_TRUSTED_PROXIES = 1
    proxy = "10.0.0.2"
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(
            "/login/", {"username": "alice", "password": "wrong"}, REMOTE_ADDR=proxy,
            HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.7",
        )  # fmt: skip
    # The forged first entry does not count: the attacker's address (the last) is locked.
    again = client.post(
        "/login/", {"username": "alice", "password": PASSWORD}, REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="203.0.113.7"
    )
    assert again.status_code == 429
    # Alice, through the same proxy from her own address, is not.
    mine = client.post(
        "/login/", {"username": "alice", "password": PASSWORD}, REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="198.51.100.9"
    )
    assert mine.status_code == 302
