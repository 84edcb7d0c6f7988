"""A tool result already encoded as JSON: a whole code.symbols or code.references reply
the warm process made and keeps (tools/warm/code_replies.py), encoded once when it was
made. The worker hands it on and the server splices it into its response as it is
(rpc/wire/envelope.py): a 160 KB reply of 500 symbols is then neither unpickled into
dicts nor encoded again on every call (most of a repeated call's time).

Its `stamp` names the state of the tree it was made from (tools/warm/answers.py,
Warm.stamp): while the warm process says the tree is still in that state, the server
answers the same call again with it, without a worker (rpc/process/warm_replies.py)."""

from __future__ import annotations

import json
from typing import Any, Callable, Hashable

import orjson


class Encoded:
    """A result's JSON, exactly as orjson encodes it (the server's own encoder)."""

    __slots__ = ("json", "stamp")

    def __init__(self, json: bytes, stamp: Hashable = None) -> None:
        self.json = json
        self.stamp = stamp  # the tree's state it was made from; None: no such state

    def __reduce__(self) -> tuple[type[Encoded], tuple[bytes, Hashable]]:
        return Encoded, (self.json, self.stamp)


def encoded(result: Any, stamp: Hashable = None) -> Encoded | None:
    """`result` as Encoded; None when orjson refuses it (a lone surrogate from an
    undecodable file name: the server's fallback encoder writes it as an escape)."""
    try:
        return Encoded(orjson.dumps(result), stamp)
    except TypeError:
        return None


def decoded(result: Any) -> Any:
    """The result itself, for what reads it (MCP's content blocks, a test)."""
    return orjson.loads(result.json) if isinstance(result, Encoded) else result


def any_json(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """`value` as compact JSON: orjson's, or where orjson refuses (an integer past 64
    bits, a lone surrogate: a name that is not UTF-8, or a `\\ud800` a client sent) the
    standard encoder's, which writes the first exactly and escapes the second."""
    try:
        return orjson.dumps(value, default=default)
    except TypeError:
        return json.dumps(value, separators=(",", ":"), default=default).encode()
