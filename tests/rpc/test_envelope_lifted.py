"""rpc/wire/envelope.py lifts a long base64 `params.data` out of the line before parsing
the rest (an upload's 8 MiB part) and hands it on decoded: the request is what parsing
the whole line gives, its `data` the decoded bytes; the validator checks it as the string
it was (rpc/dispatch/validate.py), and hands a method whose `data` is no base64 the string
as it came. Every line that is not that case is parsed whole, with the same answer as
before (a parse error stays a parse error)."""

from __future__ import annotations

import json
import os

import orjson
import pybase64
import pytest

from chorus_tools.rpc.dispatch.validate import ParamsValidator
from chorus_tools.rpc.wire import envelope
from chorus_tools.rpc.wire.envelope import Invalid, Request, parse
from chorus_tools.tools.bytes.payload import Decoded, decoded
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.method import Method, obj
from chorus_tools.tools.registry import ALL_METHODS

DATA = pybase64.b64encode(os.urandom(900_000)).decode()  # 1.2 MB of base64


def _line(**params: object) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": 7, "method": "file.upload_part",
                         "params": params})


def _request(body: bytes) -> Request:
    item = parse(body).items[0]
    assert isinstance(item, Request), item
    return item


def _as_sent(doc: dict[str, object]) -> dict[str, object]:
    params = doc["params"]
    assert isinstance(params, dict) and type(params["data"]) is Decoded
    return {**doc, "params": {**params, "data": pybase64.b64encode(
        params["data"].data).decode()}}


def test_a_part_is_lifted_decoded_and_equals_the_whole_parse() -> None:
    body = _line(upload_id="a" * 32, offset=0, data=DATA)
    assert _as_sent(envelope._lifted(body)) == orjson.loads(body)
    params = _request(body).params
    assert isinstance(params, dict) and decoded(params["data"]) == decoded(DATA)
    spaced = body.replace(b'"data":"', b'"data" :\n "')  # whitespace JSON allows
    assert _as_sent(envelope._lifted(spaced)) == orjson.loads(body)


def test_the_validator_checks_it_as_the_string_it_was() -> None:
    part = next(m for m in ALL_METHODS if m.name == "file.upload_part")
    validator = ParamsValidator({part.name: part})
    params = _request(_line(upload_id="a" * 32, offset=0, data=DATA)).params
    assert validator.check(part, params) is params  # the bytes go on as they are
    with pytest.raises(ToolError) as info:  # the other params are still checked
        validator.check(part, _request(_line(upload_id="a" * 32, offset=-1,
                                             data=DATA)).params)
    assert info.value.details["param"] == "offset"
    other = Method("x.y", "m:f", "text data", obj(["data"], data={"type": "string"},
                                                   upload_id={"type": "string"},
                                                   offset={"type": "integer"}), obj([]))
    assert ParamsValidator({"x.y": other}).check(other, params)["data"] == DATA


@pytest.mark.parametrize("body", [
    _line(upload_id="a" * 32, offset=0, data=DATA[:-1] + "!"),  # not base64: the tool says
    _line(upload_id="data", offset=0, data=DATA),  # another "data" in the line
    _line(upload_id="a" * 32, offset=0, data=DATA, nested={"data": "AAAA"}),
    orjson.dumps({"jsonrpc": "2.0", "id": 7, "method": "m",
                  "params": {"inner": {"data": DATA}}}),  # not params.data
    orjson.dumps([{"jsonrpc": "2.0", "id": 7, "method": "m", "params": {"data": DATA}}]),
], ids=["invalid base64", "data elsewhere", "nested data too", "not params", "a batch"])
def test_anything_else_is_parsed_whole_as_before(body: bytes) -> None:
    assert envelope._lifted(body) is None
    assert parse(body) == parse_whole(body)


def test_a_control_character_in_the_string_is_still_a_parse_error() -> None:
    body = _line(upload_id="a" * 32, offset=0, data=DATA)
    at = body.index(b'"data":"') + 100
    body = body[:at] + b"\x01" + body[at + 1:]  # raw in a JSON string: not JSON
    item = parse(body).items[0]
    assert isinstance(item, Invalid) and item.response["error"]["code"] == -32700


def test_a_big_id_is_echoed_exactly() -> None:
    body = _line(data=DATA).replace(b'"id":7', b'"id":123456789012345678901234567890')
    assert _request(body).id == 123456789012345678901234567890
    assert _request(body).params == {"data": DATA}


def parse_whole(body: bytes) -> envelope.Envelope:
    """What parse gave before the lift: the whole line through orjson (json for what
    orjson refuses)."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        doc = json.loads(body)
    if isinstance(doc, list):
        return envelope.Envelope([envelope.check(i) for i in doc], True)
    return envelope.Envelope([envelope.check(doc)], False)
