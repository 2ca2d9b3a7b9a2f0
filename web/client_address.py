"""Who is asking, by address (issue 40 §1): the connection's own address, or, only when that connection comes
from one of the ``trusted_proxies``, the client its ``X-Forwarded-For`` names.

The study arrival limit and the sign-in throttle count by address. A header is anyone's to write: believed from
everyone, it lets one script pose as a thousand addresses. So ``python app.py`` gives uvicorn exactly
``trusted_proxies`` as the addresses whose forwarded headers it applies (its own default trusted loopback; with
none, its proxy handling is off), and this function checks again for any server in front of the app:
``X-Forwarded-For`` is read from the right (the entry the nearest proxy added), skipping the trusted proxies
themselves; the first other address is the client's.

>>> from types import SimpleNamespace as NS
>>> req = lambda peer, xff: NS(client=NS(host=peer), headers={"x-forwarded-for": xff} if xff else {})
>>> client_address(req("203.0.113.9", "198.51.100.1"), "")  # no proxy trusted: the header is ignored
'203.0.113.9'
>>> client_address(req("10.0.0.5", "6.6.6.6, 198.51.100.1"), "10.0.0.5")  # the proxy's own entry, not the forged one
'198.51.100.1'
>>> client_address(req("10.0.0.5", "198.51.100.1, 10.0.0.6"), "10.0.0.5,10.0.0.6")  # two proxies in a row
'198.51.100.1'
>>> client_address(req("203.0.113.9", "198.51.100.1"), "10.0.0.5")  # a header from someone else: ignored
'203.0.113.9'
"""

from __future__ import annotations

from typing import Any


def trusted(setting: str) -> frozenset[str]:
    """The addresses of ``trusted_proxies`` (comma-separated)."""
    return frozenset(part.strip() for part in (setting or "").split(",") if part.strip())


def client_address(request: Any, trusted_proxies: str) -> str:
    """The client's address for ``request`` (a Starlette request) under the ``trusted_proxies`` setting."""
    peer = request.client.host if request.client else "unknown"
    proxies = trusted(trusted_proxies)
    if peer not in proxies:
        return str(peer)
    chain = [part.strip() for part in request.headers.get("x-forwarded-for", "").split(",") if part.strip()]
    for hop in reversed(chain):
        if hop not in proxies:
            return hop[:64]
    return str(peer)
