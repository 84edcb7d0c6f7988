"""Fuzzing the wire: arbitrary bytes, chunkings, both framings, nesting, huge numbers,
invalid UTF-8, duplicate keys and every JSON type in every field. In process, the codec
and the envelope never raise and never write anything but strict JSON-RPC; against the
real server process, every reply is well-formed, the process never dies, and the next
valid request is answered. Budget: tests/fuzz_support.py."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chorus_tools.rpc.wire.envelope import Invalid, dumps, error_response, parse
from chorus_tools.rpc.wire.errors import INVALID_REQUEST, protocol_error
from chorus_tools.rpc.wire.framing import Decoder
from e2e_support import LSP, E2EServer
from fuzz_support import (HUGE_NUMBERS, JSON, MAX_DEPTH, TEXT, budget, check_reply,
                          check_response, strict_loads)

_HEADER = b"content-length:"
METHODS = st.sampled_from(["file.info", "file.read", "file.list", "rpc.discover", "nope",
                           "$/cancelRequest", "notifications/cancelled", "ping"])


def _any_or(valid: st.SearchStrategy) -> st.SearchStrategy:
    """Mostly a plausible value for a field, often any JSON value at all."""
    return st.one_of(valid, valid, JSON)


REQUEST = st.builds(
    lambda base, extra: {**extra, **base},
    st.fixed_dictionaries({}, optional={
        "jsonrpc": _any_or(st.just("2.0")),
        "id": _any_or(st.one_of(st.integers(), TEXT, st.none())),
        "method": _any_or(st.one_of(METHODS, TEXT)),
        "params": _any_or(st.one_of(st.just({"path": "."}), st.dictionaries(TEXT, JSON,
                                                                         max_size=3))),
    }),
    st.dictionaries(TEXT, JSON, max_size=2))


def _nested(depth: int, kind: str) -> str:
    if kind == "array":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


RAW_JSON = st.one_of(
    st.builds(lambda n: f'{{"jsonrpc":"2.0","id":{n},"method":"file.info","params":'
                        f'{{"path":"."}}}}', HUGE_NUMBERS),
    st.builds(lambda n: f'{{"jsonrpc":"2.0","id":1,"method":"file.read","params":'
                        f'{{"path":"a.txt","offset":{n}}}}}', HUGE_NUMBERS),
    st.just('{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"id":"x","method":"nope",'
            '"method":"file.info","params":{"path":"a.txt","path":"."}}'),
    st.builds(_nested, st.integers(1, MAX_DEPTH), st.sampled_from(["array", "object"])),
    st.builds(lambda n: "[" + ",".join([n] * 3) + "]", HUGE_NUMBERS),
)

BODY = st.one_of(
    st.builds(lambda v: json.dumps(v).encode(), REQUEST),
    st.builds(lambda v: json.dumps(v).encode(), st.lists(REQUEST, max_size=4)),
    st.builds(lambda v: json.dumps(v).encode(), JSON),
    RAW_JSON.map(str.encode),
    st.binary(max_size=200),
    st.builds(lambda a, b: a + b"\xff\xfe\xc3" + b,  # invalid UTF-8 inside a request
              st.just(b'{"jsonrpc":"2.0","id":7,"method":"file.info","params":{"path":"'),
              st.just(b'"}}')),
)


def _line(body: bytes) -> bytes | None:
    """A body as one line, when it can be one: no newline inside, and not read as an LSP
    header (then the frame would not end where this test thinks)."""
    body = body.replace(b"\n", b" ")
    if body.lstrip(b" \t\r\n").lower().startswith(_HEADER):
        return None
    return body + b"\n"


def _lsp(body: bytes, extra: bytes) -> bytes:
    return b"Content-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


FRAME = st.one_of(
    BODY.map(_line).filter(lambda f: f is not None),
    st.builds(_lsp, BODY, st.sampled_from([b"", b"Content-Type: application/json\r\n",
                                           b"X: \xff\r\n"])),
    st.sampled_from([b"Content-Length: nope\r\n\r\n", b"Content-Length: -1\r\n\r\n",
                     b"Content-Type: x\r\nContent-Length: 2\r\n\r\n{}",
                     b"\r\n\r\n", b"   \n"]),
)


@st.composite
def chunked(draw: st.DrawFn) -> list[bytes]:
    """Frames joined into one stream, cut at arbitrary points."""
    stream = b"".join(draw(st.lists(FRAME, min_size=1, max_size=6)))
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    return [stream[a:b] for a, b in itertools.pairwise([0, *cuts, len(stream)])]


@budget(2)
@given(chunked(), st.sampled_from([16, 64, 1 << 20]), st.sampled_from([1, 5, 1 << 20]))
def test_decoding_does_not_depend_on_chunking(chunks: list[bytes], limit: int,
                                              long_line: int) -> None:
    """Also with a tiny --max-message-bytes: oversized frames are skipped the same way;
    and a line kept as pieces (past `long_line`) decodes as one buffered whole."""
    whole, pieces = Decoder(limit), Decoder(limit, long_line)
    expected = whole.feed(b"".join(chunks)) + whole.eof()
    got = [event for chunk in chunks for event in pieces.feed(chunk)] + pieces.eof()
    assert got == expected


@budget(2)
@given(BODY)
def test_the_envelope_answers_anything_with_strict_json_rpc(body: bytes) -> None:
    envelope = parse(body)
    assert envelope.items
    for item in envelope.items:
        if isinstance(item, Invalid):
            check_response(strict_loads(dumps(item.response)))
        elif not item.is_notification:  # the id it will be answered with survives the wire
            response = error_response(item.id, protocol_error(INVALID_REQUEST, "probe"))
            check_response(strict_loads(dumps(response)))
            assert strict_loads(dumps(response))["id"] == item.id


def test_the_server_process_survives_any_stream(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    sentinels = itertools.count()
    with E2EServer(ws, "--workers", "2", "--allow-root", "--search-engine", "python") as server:

        @budget(1)
        @given(chunked(), st.sampled_from(["line", LSP]))
        def stream_then_a_valid_request(chunks: list[bytes], framing: str) -> None:
            for chunk in chunks:
                server.send_raw(chunk)
            sentinel: dict[str, Any] = {"jsonrpc": "2.0", "id": f"sentinel-{next(sentinels)}",
                                        "method": "file.info", "params": {"path": "a.txt"}}
            if framing == LSP:
                server.send_lsp(sentinel)
            else:  # a fresh line, whatever the stream left unfinished
                server.send_raw(b"\n" + json.dumps(sentinel).encode() + b"\n")
            while True:
                raw = server.recv_raw(timeout=30)
                reply = strict_loads(raw)
                check_reply(reply)
                if isinstance(reply, dict) and reply["id"] == sentinel["id"]:
                    assert reply["result"]["size"] == 6 and raw.framing == framing
                    break
            assert server.proc.poll() is None

        stream_then_a_valid_request()
        # a fuzzed write may have changed a.txt, a fuzzed request may reuse any plain id
        last = server.request("file.list", {}, rid=f"final-{next(sentinels)}")
        while True:  # fuzzed requests (or batches) may still be answering: any order
            reply = strict_loads(server.recv_raw(timeout=30))
            check_reply(reply)
            if isinstance(reply, dict) and reply["id"] == last:
                break
        assert isinstance(reply["result"]["files"], list)
    assert server.proc.returncode == 0


def test_regression_lone_surrogates_are_answered_never_dropped(tmp_path: Path) -> None:
    """Found by fuzzing: a lone surrogate sent as an escape (in an id, a path) made the
    reply unencodable, and the request was never answered; a file name that is not UTF-8
    (listed as a surrogate escape) likewise. Each is answered, and the name read back."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    with open(bytes(ws) + b"/\xff.txt", "wb") as f:
        f.write(b"raw name\n")
    with E2EServer(ws, "--workers", "1", "--allow-root") as server:
        server.send_raw(b'{"jsonrpc":"2.0","id":"\\ud800","method":"file.info",'
                        b'"params":{"path":"a.txt"}}\n')
        by_surrogate = strict_loads(server.recv_raw())
        assert by_surrogate["id"] == "\ud800" and by_surrogate["result"]["size"] == 6
        bad_path = server.error("file.read", {"path": "\ud800.txt"})
        assert bad_path["data"]["error"] == "invalid_params"
        listed = [f["path"] for f in server.result("file.list", {})["files"]]
        assert sorted(listed) == ["a.txt", "\udcff.txt"]
        assert server.result("file.read", {"path": "\udcff.txt"})["content"] == "     1\traw name"
