"""--http's settings, apart from the transport (rpc/wire/http.py) so that the command line
and a stdio-only server never import the HTTP library."""

from __future__ import annotations

import functools
import ipaddress
import socket
from dataclasses import dataclass

LOOPBACK_NAMES = ("localhost", "ip6-localhost")


@dataclass(frozen=True)
class HttpOptions:
    """The transport's settings; the bounds (docs/protocol.md, HTTP: limits) are options
    with these defaults."""

    host: str
    port: int
    token: bytes | None  # --http-token-file's content; required off loopback
    max_message_bytes: int
    max_head_bytes: int = 64 * 1024  # a request's line and headers; past it: 431
    head_timeout: float = 10.0  # from connecting, or a head's first byte, to its end: 408
    idle_timeout: float = 60.0  # a kept-alive connection between requests, a stalled body
    max_connections: int = 256  # open at once (fewer under a low descriptor limit)
    metrics_public: bool = False  # GET /metrics without the token (docs/protocol.md)


@functools.lru_cache(maxsize=256)  # asked per request, of the few Host values clients send
def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, IPv6 with or without brackets) is this
    machine's loopback."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def listen(options: HttpOptions) -> socket.socket:
    """The listening socket, bound at start, before privileges are dropped (--user), so
    a port below 1024 works and a taken one fails at once, like every start-up error."""
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    return socket.create_server((options.host, options.port), family=family, backlog=1024)
