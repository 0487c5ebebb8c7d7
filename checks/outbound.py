"""The one rule for where the server may send a request of its own (the judge, webhooks).

An admin types the URL; the server makes the call from inside its network. Without a
rule, that is a way to reach what only the server can reach: a cloud's metadata service
(credentials), the host's own ports, the private network. So:

- **Always refused**: link-local addresses (169.254.0.0/16, fe80::/10), cloud metadata
  addresses (169.254.169.254, fd00:ec2::254, and the name ``metadata.google.internal``),
  the unspecified address (0.0.0.0, ::), multicast, broadcast and reserved addresses.
- **Refused unless allowed** (``allow_private``): loopback (127.0.0.0/8, ::1) and
  private addresses (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7...). A server
  whose judge runs beside it (Ollama on the same host, vLLM on the LAN) allows them with
  ``EVALSITE_OUTBOUND_ALLOW_PRIVATE=1``; docs/deploy.md says when.
- An IPv4 address written as IPv6 (``::ffff:127.0.0.1``) is judged as the IPv4 address.
- A host name is judged by every address it resolves to: one refused address refuses
  the host, so a name cannot hide a metadata address behind a public one. A caller
  checks again the address it actually connected to (a name may resolve differently a
  moment later).

Pure: no Django. ``address_refusal`` and ``host_refusal`` return why a target is
refused, as a sentence, or ``None`` when it may be called.
"""

import ipaddress
import socket

METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254"))
METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata"})
ALLOW_PRIVATE_SETTING = "EVALSITE_OUTBOUND_ALLOW_PRIVATE"


def address_refusal(address, *, allow_private):
    """Why the IP ``address`` (text or ``ipaddress`` object) may not be called, or ``None``."""
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in METADATA_ADDRESSES:
        return f"{ip} is a cloud metadata address"
    if ip.is_link_local:
        return f"{ip} is a link-local address"
    if ip.is_unspecified:
        return f"{ip} is the unspecified address"
    if ip.is_multicast:
        return f"{ip} is a multicast address"
    if ip.version == 4 and (ip == ipaddress.IPv4Address("255.255.255.255") or ip.is_reserved):
        return f"{ip} is a reserved address"
    if allow_private:
        return None
    if ip.is_loopback:
        return f"{ip} is a loopback address (allowed only with {ALLOW_PRIVATE_SETTING}=1)"
    if ip.is_private or ip in _SHARED or not ip.is_global:
        return f"{ip} is a private address (allowed only with {ALLOW_PRIVATE_SETTING}=1)"
    return None


def host_refusal(host, *, allow_private, resolve=True):
    """Why ``host`` (a name or an IP literal, brackets allowed) may not be called, or ``None``.

    A name is resolved (the system resolver) and every address checked; a name that does
    not resolve is not refused here (the call itself then fails as unreachable), unless
    ``resolve`` is false, when only literals and the metadata names are judged.
    """
    name = (host or "").strip().strip("[]").rstrip(".").lower()
    if "%" in name:  # an IPv6 zone (fe80::1%eth0) is link-local by construction
        return f"{host} names a link-local address"
    try:
        return address_refusal(name, allow_private=allow_private)
    except ValueError:
        pass
    if name in METADATA_HOSTS:
        return f"{name} is a cloud metadata address"
    if not resolve:
        return None
    try:
        found = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return None
    for address in dict.fromkeys(info[4][0] for info in found):
        refusal = address_refusal(address.split("%")[0], allow_private=allow_private)
        if refusal is not None:
            return f"{name} resolves to {refusal}"
    return None


# Carrier-grade NAT space: not global, and not "private" to every Python version.
_SHARED = ipaddress.ip_network("100.64.0.0/10")
