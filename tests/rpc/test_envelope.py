"""rpc.envelope: strict JSON-RPC 2.0 objects and batches, element by element."""

from __future__ import annotations

import json

import pytest

from chorus_tools.rpc.wire.envelope import Invalid, Request, parse


def codes(envelope):
    return [i.response["error"]["code"] if isinstance(i, Invalid) else "ok"
            for i in envelope.items]


def test_a_request_and_a_notification():
    req = parse(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}').items[0]
    assert isinstance(req, Request) and req.id == 1 and req.params == {"a": 1}
    assert not req.is_notification
    note = parse(b'{"jsonrpc":"2.0","method":"m"}').items[0]
    assert note.is_notification


def test_null_id_is_a_request_not_a_notification():
    assert not parse(b'{"jsonrpc":"2.0","id":null,"method":"m"}').items[0].is_notification


def test_invalid_json_is_a_parse_error_with_null_id():
    env = parse(b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]')
    assert codes(env) == [-32700] and env.items[0].response["id"] is None
    assert not env.batch


def test_empty_batch_is_one_invalid_request_not_an_array():
    env = parse(b"[]")
    assert codes(env) == [-32600] and not env.batch


def test_each_bad_batch_element_gets_its_own_error():
    env = parse(b"[1,2,3]")
    assert env.batch and codes(env) == [-32600, -32600, -32600]


def test_a_mixed_batch_keeps_the_good_elements():
    env = parse(b'[{"jsonrpc":"2.0","id":1,"method":"m"},{"foo":"boo"},'
                b'{"jsonrpc":"2.0","method":"n"}]')
    assert codes(env) == ["ok", -32600, "ok"]


@pytest.mark.parametrize("doc, echoed", [
    (b'{"jsonrpc":"1.0","id":7,"method":"m"}', 7),
    (b'{"id":7,"method":"m"}', 7),
    (b'{"jsonrpc":"2.0","id":true,"method":"m"}', None),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"m"}', None),
    (b'{"jsonrpc":"2.0","id":[1],"method":"m"}', None),
    (b'{"jsonrpc":"2.0","id":7,"method":1}', 7),
    (b'{"jsonrpc":"2.0","id":7}', 7),
    (b'{"jsonrpc":"2.0","id":7,"method":"m","params":"x"}', 7),
    (b'{"jsonrpc":"2.0","id":7,"method":"m","params":3}', 7),
    (b'"just a string"', None),
])
def test_strictly_invalid_requests(doc, echoed):
    item = parse(doc).items[0]
    assert isinstance(item, Invalid)
    assert item.response["error"]["code"] == -32600
    assert item.response["error"]["data"]["error"] == "invalid_request"
    assert item.response["id"] == echoed


def test_ids_of_every_allowed_kind_are_kept():
    for raw, rid in [(b'"abc"', "abc"), (b"12", 12), (b"1.5", 1.5),
                     (b"123456789012345678901234567890", 123456789012345678901234567890)]:
        item = parse(b'{"jsonrpc":"2.0","method":"m","id":' + raw + b"}").items[0]
        assert isinstance(item, Request) and item.id == rid


def test_nan_is_not_json():
    assert codes(parse(b'{"jsonrpc":"2.0","id":NaN,"method":"m"}')) == [-32700]


def test_a_big_integer_id_is_echoed_exactly():
    from chorus_tools.rpc.wire.envelope import dumps, result_response
    rid = 123456789012345678901234567890
    assert dumps(result_response(rid, None)) == (
        b'{"jsonrpc":"2.0","result":null,"id":123456789012345678901234567890}')


@pytest.mark.parametrize("big", [2**64, -2**64, 123456789012345678901234567890])
def test_a_param_integer_past_64_bits_is_kept_exactly(big: int) -> None:
    """orjson reads an integer past 64 bits as a float: a file.read `offset` of
    123456789012345678901234567890 was answered with `start_line`
    123456789012345677877719597056. Ids were kept; params, nested ones too, now are."""
    body = json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "m",
                        "params": {"offset": big, "list": [{"n": big}], "x": 1.5}}]).encode()
    [req] = parse(body).items
    assert isinstance(req, Request) and req.params["offset"] == big
    assert type(req.params["offset"]) is int and req.params["list"] == [{"n": big}]
    assert req.params["x"] == 1.5


def test_an_encoded_result_goes_in_as_it_is_whichever_encoder_writes_it():
    from chorus_tools.rpc.wire.envelope import dumps, result_response
    from chorus_tools.tools.encoded import encoded
    result = encoded({"symbols": [{"name": "é"}], "total": 1})
    assert dumps(result_response(7, result)) == (
        '{"jsonrpc":"2.0","result":{"symbols":[{"name":"é"}],"total":1},"id":7}'.encode())
    rid = 123456789012345678901234567890  # the standard encoder's turn: the same JSON
    assert json.loads(dumps(result_response(rid, result))) == {
        "jsonrpc": "2.0", "result": {"symbols": [{"name": "é"}], "total": 1}, "id": rid}
    with pytest.raises(TypeError):  # anything else JSON cannot carry is still refused
        dumps(result_response(7, object()))
