"""API key format: ``esk_<prefix>_<secret>``.

The prefix (10 lowercase letters and digits) finds the row; the secret (43 URL-safe
characters, 256 random bits) is checked against its SHA-256. The full key is returned
once, when it is made, and never stored.
"""

import hashlib
import hmac
import secrets
import string

KEY_PREFIX = "esk"
_PREFIX_ALPHABET = string.ascii_lowercase + string.digits
_PREFIX_LENGTH = 10


def key_generate():
    """A new ``(full_key, prefix, secret_hash)``."""
    prefix = "".join(secrets.choice(_PREFIX_ALPHABET) for _ in range(_PREFIX_LENGTH))
    secret = secrets.token_urlsafe(32)
    return f"{KEY_PREFIX}_{prefix}_{secret}", prefix, secret_hash(secret)


def secret_hash(secret):
    return hashlib.sha256(secret.encode()).hexdigest()


def key_split(full_key):
    """``(prefix, secret)`` of a well-formed key, else ``None``."""
    parts = full_key.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX or len(parts[1]) != _PREFIX_LENGTH or not parts[2]:
        return None
    return parts[1], parts[2]


def secret_matches(secret, stored_hash):
    return hmac.compare_digest(secret_hash(secret), stored_hash)
