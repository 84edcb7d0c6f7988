"""JSON-RPC 2.0 envelopes, checked strictly and purely: bytes in, request objects or
ready error responses out. Batches are split here, element by element, so `[1,2,3]` gets
three errors, as the specification wants (libraries that validate a batch as one document,
jsonrpcserver among them, answer it with one)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import orjson
import pybase64

from chorus_tools.rpc.wire.errors import INVALID_REQUEST, PARSE_ERROR, protocol_error
from chorus_tools.tools.bytes.payload import Decoded
from chorus_tools.tools.encoded import Encoded

_NO_ID = object()
_LIFT_MIN = 1 << 20  # a message this long may carry a base64 `data` worth lifting out
_DATA = re.compile(rb'"data"\s*:\s*"')


@dataclass(frozen=True)
class Request:
    method: str
    params: dict[str, Any] | list[Any] | None
    id: Any  # _NO_ID for a notification
    raw: dict[str, Any]

    @property
    def is_notification(self) -> bool:
        return self.id is _NO_ID


@dataclass(frozen=True)
class Invalid:
    """An element that is not a request: its error response is already made."""

    response: dict[str, Any]


@dataclass(frozen=True)
class Envelope:
    items: list[Request | Invalid]
    batch: bool


def parse(body: bytes) -> Envelope:
    try:
        doc = _loads(body)
    except ValueError as exc:
        return Envelope([Invalid(error_response(None, protocol_error(
            PARSE_ERROR, f"Parse error: the message is not valid JSON ({exc})")))], False)
    except RecursionError:  # nested deeper than either parser goes: refused, not fatal
        return Envelope([Invalid(error_response(None, protocol_error(
            PARSE_ERROR, "Parse error: the message nests arrays or objects deeper than "
            "the parser allows")))], False)
    if isinstance(doc, list):
        if not doc:
            return Envelope([Invalid(error_response(None, protocol_error(
                INVALID_REQUEST, "Invalid Request: an empty batch")))], False)
        return Envelope([check(item) for item in doc], True)
    return Envelope([check(doc)], False)


def _loads(body: bytes) -> Any:
    """orjson for speed; the standard parser where orjson would change a number (it turns
    integers beyond 64 bits into floats: an id, or an `offset` answered as a rounded
    `start_line`) or refuse valid JSON."""
    try:
        doc = _lifted(body) if len(body) >= _LIFT_MIN else None
        if doc is None:
            doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body, parse_constant=_reject_constant)
    if _rounded(doc):
        return json.loads(body, parse_constant=_reject_constant)
    return doc


_PAST_64_BITS = 2.0 ** 63


def _rounded(doc: Any) -> bool:
    """Whether a number in `doc` may be an integer orjson rounded: a whole float past 64
    bits (a float the client wrote so parses the same either way). A loop, not recursion
    and generators: under a microsecond for a plain request, about orjson's own parse
    time for a request of 50 patches."""
    stack = [doc]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is dict:
            stack.extend(value.values())
        elif kind is list:
            stack.extend(value)
        elif kind is float and value.is_integer() and abs(value) >= _PAST_64_BITS:
            return True
    return False


def _lifted(body: bytes) -> Any:
    """A request whose `params.data` is a long base64 string (an upload's part: 11 MB of
    JSON for 8 MiB), parsed without orjson reading that string: parsing it took 19 ms of
    the server process's time a part, decoding it from the line's bytes takes under 1
    (docs/benchmarks.md, upload_parts). The string is lifted out of the line, decoded
    (pybase64, strict: standard base64 holds no escape, no quote and no control
    character, so it was a valid JSON string), the rest parsed, and `params.data` is the
    bytes, `Decoded` (tools/bytes/payload.py): the validator sees the string it was
    (rpc/dispatch/validate.py) and the worker gets 8 MiB, not 11 MB of text to decode
    again. None, and the whole line is parsed as ever, when the line is anything else: no
    such string, not standard base64, a `"data"` anywhere else in the line (so the
    string lifted is surely `params.data`), or a rest that does not parse."""
    found = _DATA.search(body)
    if found is None:
        return None
    start = found.end()
    end = body.find(b'"', start)
    if end < 0:
        return None
    with memoryview(body) as view:
        value = view[start:end]
        try:
            data = pybase64.b64decode(value, validate=True)
        except ValueError:
            return None
        rest = body[:start - 1] + b"null" + body[end + 1:]
        if rest.count(b'"data"') != 1:
            return None
        try:
            doc = orjson.loads(rest)
        except orjson.JSONDecodeError:
            return None
        params = doc.get("params") if isinstance(doc, dict) else None
        if not isinstance(params, dict) or "data" not in params or params["data"] is not None:
            return None
    params["data"] = Decoded(data)
    return doc


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def check(obj: Any) -> Request | Invalid:
    """One element, strictly: an object with jsonrpc "2.0", a string method, an id that is
    a string, a number or null, and params that are an object or an array."""
    if not isinstance(obj, dict):
        return _invalid(None, "a request must be a JSON object")
    rid = obj.get("id", _NO_ID)
    id_ok = rid is _NO_ID or valid_id(rid)
    echo = rid if id_ok and rid is not _NO_ID else None
    if obj.get("jsonrpc") != "2.0":
        return _invalid(echo, '"jsonrpc" must be exactly "2.0"')
    if not id_ok:
        return _invalid(None, '"id" must be a string, a number or null (and a number '
                        'a double can hold: one like 1e400 cannot be echoed)')
    method = obj.get("method")
    if not isinstance(method, str):
        return _invalid(echo, '"method" must be a string')
    params = obj.get("params")
    if "params" in obj and not isinstance(params, (dict, list)):
        return _invalid(echo, '"params" must be an object or an array')
    return Request(method, params, rid, obj)


def valid_id(rid: Any) -> bool:
    """A string, a number or null: what may identify a request (true, objects and arrays
    may not, nor a number that overflows a double: the parser makes 1e400 infinity, which
    JSON cannot carry back)."""
    if isinstance(rid, float):
        return math.isfinite(rid)
    return rid is None or (isinstance(rid, (str, int)) and not isinstance(rid, bool))


def _invalid(rid: Any, why: str) -> Invalid:
    return Invalid(error_response(rid, protocol_error(INVALID_REQUEST,
                                                      f"Invalid Request: {why}")))


def error_response(rid: Any, error: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": error, "id": rid}


def result_response(rid: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "result": result, "id": rid}


def dumps(response: Any) -> bytes:
    """The response's JSON; a result already Encoded (tools/encoded.py) goes in as it is."""
    try:
        return orjson.dumps(response, default=_spliced)
    except TypeError:  # an id beyond 64 bits, or a lone surrogate the client sent (as a
        # \ud800 escape, echoed in an id or a message): the standard encoder writes the
        # first exactly and escapes the second as it came, where UTF-8 cannot hold it
        return json.dumps(response, separators=(",", ":"), default=_decoded).encode()


def _spliced(value: Any) -> orjson.Fragment:
    if isinstance(value, Encoded):
        return orjson.Fragment(value.json)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _decoded(value: Any) -> Any:
    if isinstance(value, Encoded):
        return orjson.loads(value.json)
    raise TypeError(f"{type(value).__name__} is not JSON")
