"""Which MCP revision a request speaks, and what the stateless one (2026-07-28) adds to
its answers (docs/protocol.md, MCP).

The handshake revisions (2024-11-05 … 2025-11-25) pick their version once, with
`initialize`, for the connection. 2026-07-28 has no handshake: every request names its
version in `_meta["io.modelcontextprotocol/protocolVersion"]` and is served on its own,
initialized or not; its results carry `resultType`, the server's identity in their
`_meta`, and the cacheable ones (`server/discover`, `tools/list`) `ttlMs` and
`cacheScope`. A request of that revision must carry its client's capabilities in `_meta`
too (-32602 without them), and the methods it removed (`initialize`, `ping`, ...) are
-32601 for it. Followed from the specification's 2026-07-28 schema (schema.ts) and pages
(server/discover, basic/versioning, server/utilities/caching), at modelcontextprotocol
commit b0f60ba.
"""

from __future__ import annotations

import json
from typing import Any

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # oldest first
STATELESS_VERSIONS = ("2026-07-28",)
SUPPORTED = (*reversed(STATELESS_VERSIONS), *reversed(HANDSHAKE_VERSIONS))  # newest first

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
# what 2026-07-28 removed with the handshake and the session: a request of that revision
# naming one is -32601, as for any method the server does not have
REMOVED = frozenset({"initialize", "notifications/initialized", "ping", "logging/setLevel",
                     "resources/subscribe", "resources/unsubscribe"})

# The tools of a process never change (its tool sets are fixed at start) and name nothing
# of the user's: an hour's freshness, and any cache may share them.
CACHE_HINTS = {"ttlMs": 3_600_000, "cacheScope": "public"}


class Unsupported(Exception):
    """A `_meta` protocol version this server does not speak."""

    def __init__(self, requested: Any) -> None:
        super().__init__(requested)
        self.requested = requested

    def error(self) -> dict[str, Any]:
        """UnsupportedProtocolVersionError: the versions to retry with."""
        said = json.dumps(self.requested, ensure_ascii=False)  # as the client wrote it
        message = (f"Unsupported protocol version {said}: this server speaks "
                   f"{', '.join(SUPPORTED)}.")
        return {"code": UNSUPPORTED_PROTOCOL_VERSION, "message": message,
                "data": {"supported": list(SUPPORTED), "requested": self.requested,
                         "error": "unsupported_protocol_version", "message": message}}


def requested_version(params: dict[str, Any]) -> str | None:
    """The version a request names in its `_meta` (None: it names none, and speaks the
    connection's); raises Unsupported for one this server does not speak."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or PROTOCOL_VERSION not in meta:
        return None
    version = meta[PROTOCOL_VERSION]
    if version not in SUPPORTED:
        raise Unsupported(version)
    return version


def is_stateless(version: str) -> bool:
    return version in STATELESS_VERSIONS


def incomplete_meta(params: Any) -> str | None:
    """What a 2026-07-28 request's `_meta` lacks (None: nothing). The revision requires
    its protocol version and the client's capabilities (clientInfo is only a SHOULD)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        return ("a request of MCP 2026-07-28 carries params._meta with "
                f"{PROTOCOL_VERSION!r} and {CLIENT_CAPABILITIES!r}")
    for key in (PROTOCOL_VERSION, CLIENT_CAPABILITIES):
        if key not in meta:
            return f"params._meta lacks {key!r}, which MCP 2026-07-28 requires"
    if not isinstance(meta[CLIENT_CAPABILITIES], dict):
        return f"params._meta[{CLIENT_CAPABILITIES!r}] must be an object"
    return None


def complete(result: dict[str, Any], server_info: dict[str, str],
             cacheable: bool = False) -> dict[str, Any]:
    """A 2026-07-28 result: marked complete, naming the server, with the caching hints
    when its method is cacheable."""
    hints = CACHE_HINTS if cacheable else {}
    meta = {**result.get("_meta", {}), SERVER_INFO: server_info}
    return {**result, "resultType": "complete", **hints, "_meta": meta}
