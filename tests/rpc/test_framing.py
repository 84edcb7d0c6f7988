"""rpc.framing: bytes in, events out, in both framings, with the size limit."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chorus_tools.rpc.wire.framing import BadFrame, Decoder, Framing, Message, TooLarge, encode


def lsp(body: bytes) -> bytes:
    return encode(body, Framing.LSP)


def test_lines_are_messages_and_blank_lines_are_skipped():
    events = Decoder(100).feed(b'{"a":1}\n\n\r\n{"b":2}\r\n')
    assert events == [Message(b'{"a":1}', Framing.LINE), Message(b'{"b":2}', Framing.LINE)]


def test_a_line_split_across_feeds_is_joined():
    dec = Decoder(100)
    assert dec.feed(b'{"a"') == []
    assert dec.feed(b':1}\n') == [Message(b'{"a":1}', Framing.LINE)]


def test_last_line_without_newline_is_delivered_at_eof():
    dec = Decoder(100)
    assert dec.feed(b'{"a":1}') == []
    assert dec.eof() == [Message(b'{"a":1}', Framing.LINE)]


def test_content_length_message_and_reply_encoding():
    dec = Decoder(100)
    assert dec.feed(lsp(b'{"x":1}')) == [Message(b'{"x":1}', Framing.LSP)]
    assert encode(b"{}", Framing.LSP) == b"Content-Length: 2\r\n\r\n{}"
    assert encode(b"{}", Framing.LINE) == b"{}\n"


def test_header_name_is_case_insensitive_and_other_headers_are_ignored():
    data = b"content-length: 2\r\nContent-Type: application/json\r\n\r\n{}"
    assert Decoder(100).feed(data) == [Message(b"{}", Framing.LSP)]


def test_framings_can_alternate_on_one_stream():
    data = lsp(b'{"a":1}') + b'{"b":2}\n' + lsp(b'{"c":3}')
    assert [e.framing for e in Decoder(100).feed(data)] == [Framing.LSP, Framing.LINE,
                                                             Framing.LSP]


def test_a_header_prefix_waits_for_more_bytes():
    dec = Decoder(100)
    assert dec.feed(b"Content-Le") == []
    assert dec.feed(b"ngth: 2\r\n\r\n{}") == [Message(b"{}", Framing.LSP)]


def test_oversized_line_is_reported_once_and_skipped_without_buffering():
    dec = Decoder(10)
    events = dec.feed(b"x" * 25)
    assert events == [TooLarge(Framing.LINE)]
    assert len(dec._buf) == 0  # nothing of it kept
    assert dec.feed(b"y" * 1000) == []
    assert dec.feed(b'zz\n{"ok":1}\n') == [Message(b'{"ok":1}', Framing.LINE)]


def test_oversized_content_length_body_is_skipped_as_it_arrives():
    dec = Decoder(10)
    assert dec.feed(b"Content-Length: 30\r\n\r\n" + b"a" * 5) == [TooLarge(Framing.LSP)]
    assert dec.feed(b"a" * 20) == []
    assert len(dec._buf) == 0
    assert dec.feed(b"a" * 5 + b'{"n":1}\n') == [Message(b'{"n":1}', Framing.LINE)]


def test_bad_content_length_is_a_bad_frame_and_the_stream_goes_on():
    dec = Decoder(100)
    assert dec.feed(b"Content-Length: abc\r\n\r\n") == [BadFrame(
        "missing or invalid Content-Length header")]
    assert dec.feed(b"{}\n") == [Message(b"{}", Framing.LINE)]


@given(st.lists(st.binary(min_size=1, max_size=40).filter(
    lambda b: b.strip() and b"\n" not in b and not b.lower().lstrip().startswith(b"content")
    and b.strip() == b and not b.startswith(b"\xef\xbb\xbf")),  # a BOM is dropped
    min_size=1, max_size=10), st.integers(1, 7))
def test_any_chunking_gives_the_same_messages(bodies, step):
    stream = b"".join(lsp(b) if i % 2 else b + b"\n" for i, b in enumerate(bodies))
    dec = Decoder(1000)
    events = []
    for i in range(0, len(stream), step):
        events += dec.feed(stream[i:i + step])
    assert [e.body for e in events] == bodies


def test_a_long_line_is_kept_as_pieces_and_joined_once_at_its_newline():
    dec = Decoder(100, long_line=8)
    assert dec.feed(b'{"data":"') == []
    assert dec._pieces and not dec._buf  # past long_line: pieces, no growing buffer
    assert dec.feed(b"AAAA") == []
    assert dec.feed(b'AAAA"}\r\n{"n"') == [Message(b'{"data":"AAAAAAAA"}', Framing.LINE)]
    assert not dec._pieces
    assert dec.feed(b":1}\n") == [Message(b'{"n":1}', Framing.LINE)]


def test_a_long_line_over_the_limit_is_reported_once_and_its_rest_skipped():
    dec = Decoder(20, long_line=8)
    assert dec.feed(b'{"data":"AAAA') == []
    assert dec.feed(b"A" * 10) == [TooLarge(Framing.LINE)]
    assert not dec._pieces and not dec._buf  # nothing of it kept
    assert dec.feed(b"A" * 100) == []
    assert dec.feed(b'"}\n{}\n') == [Message(b"{}", Framing.LINE)]


def test_a_long_line_whose_newline_puts_it_over_the_limit_is_too_large():
    dec = Decoder(12, long_line=4)
    assert dec.feed(b'{"data":"AA') == []
    assert dec.feed(b'AA"}\n[]\n') == [TooLarge(Framing.LINE), Message(b"[]", Framing.LINE)]


def test_a_long_last_line_without_its_newline_is_read_at_the_end_of_input():
    dec = Decoder(100, long_line=4)
    assert dec.feed(b'{"a":') + dec.feed(b'"bcdef"} ') == []
    assert dec.eof() == [Message(b'{"a":"bcdef"}', Framing.LINE)]
    assert dec.eof() == []
