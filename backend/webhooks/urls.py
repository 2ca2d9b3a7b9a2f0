"""Where an outgoing webhook may go (issue 26 §7): http(s) only, and by default never to the server's own network.

A webhook URL is typed by an admin but fetched by the server, so it could point the server at itself or at
machines only it can reach (server-side request forgery). Unless ``webhooks_allow_private`` is on, every
address the host name resolves to must be a public one: loopback, private (RFC 1918, fc00::/7), link-local
(including cloud metadata at 169.254.169.254), carrier-grade NAT, multicast, reserved and unspecified
addresses are refused. The check runs when the endpoint is registered and again before every delivery (a
name may resolve elsewhere later); redirects are never followed.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from backend.errors import ValidationError

SCHEMES = ("http", "https")


def public_address(text: str) -> bool:
    """Whether an IP address is a public one.

    >>> [public_address(a) for a in ("93.184.216.34", "127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "::ffff:10.0.0.1")]
    [True, False, False, False, False, False]
    """
    address = ipaddress.ip_address(text.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


def _addresses(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ValidationError(f"the webhook's host {host!r} cannot be resolved ({exc})") from exc
    return sorted({str(info[4][0]) for info in infos})


def check_url(url: str, allow_private: bool) -> str:
    """The URL, cleaned, or :class:`ValidationError` saying why it may not be a webhook."""
    url = (url or "").strip()
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES or not parts.hostname or len(url) > 2000:
        raise ValidationError(
            f"a webhook URL must start with http:// or https:// and name a host (you wrote {url[:80]!r})"
        )
    if parts.username or parts.password:
        raise ValidationError("a webhook URL must not carry a user name or password; use the secret to sign instead")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise ValidationError(f"the webhook URL's port is not a number ({exc})") from exc
    if not allow_private:
        refused = [a for a in _addresses(parts.hostname, port) if not public_address(a)]
        if refused:
            raise ValidationError(
                f"the webhook's host {parts.hostname!r} is a loopback, private or otherwise non-public address "
                f"({', '.join(refused)}); webhooks go to public addresses only unless the setting "
                "webhooks_allow_private is on"
            )
    return url
