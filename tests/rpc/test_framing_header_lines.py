"""The LSP header block as a sloppy client writes it: lines ended by a bare `\\n`, or a
header with no blank line after it. Neither may swallow the messages that follow."""

from __future__ import annotations

from chorus_tools.rpc.wire.framing import BadFrame, Decoder, Framing, Message, TooLarge


def test_regression_lf_only_header_swallowed_the_next_requests() -> None:
    """Regression: a header block ended `\\n\\n` was waited on for `\\r\\n\\r\\n` until 8 KiB
    had come, then dropped with every newline-delimited request inside that 8 KiB."""
    dec = Decoder(1000)
    events = dec.feed(b'Content-Length: 7\nContent-Type: x\n\n{"a":1}{"b":2}\n')
    assert events == [Message(b'{"a":1}', Framing.LSP), Message(b'{"b":2}', Framing.LINE)]


def test_regression_header_without_blank_line_swallowed_the_next_requests() -> None:
    """Regression: a header whose blank line was missing took the body and the requests
    after it as more header lines; now the first line that is no header ends it."""
    dec = Decoder(1000)
    events = dec.feed(b'Content-Length: 7\r\n{"a":1}\n{"b":2}\n')
    assert events == [BadFrame("the Content-Length header block has no blank line after it"),
                      Message(b'{"a":1}', Framing.LINE), Message(b'{"b":2}', Framing.LINE)]


def test_a_header_block_split_across_feeds_at_every_byte_is_read_once() -> None:
    stream = b'Content-Length: 7\r\nX-Y: z\r\n\r\n{"a":1}{"b":2}\n'
    dec = Decoder(1000)
    events = [e for i in range(len(stream)) for e in dec.feed(stream[i:i + 1])]
    assert events == [Message(b'{"a":1}', Framing.LSP), Message(b'{"b":2}', Framing.LINE)]


def test_an_endless_header_block_is_cut_at_8_kib_and_the_stream_goes_on() -> None:
    dec = Decoder(100_000)
    events = dec.feed(b"Content-Length: 2\r\n" + b"X-Pad: y\r\n" * 1000)
    assert events == [BadFrame("header block larger than 8 KiB")]
    assert dec.feed(b'\r\n{"n":1}\n')[-1] == Message(b'{"n":1}', Framing.LINE)


def test_regression_lsp_message_cut_by_the_end_of_input_went_unanswered() -> None:
    """Regression: a Content-Length body the input ended inside was dropped without a
    word (a cut line is -32700), and a cut header block was answered as a line."""
    dec = Decoder(1000)
    assert dec.feed(b'Content-Length: 100\r\n\r\n{"jsonrpc":"2.0"') == []
    assert dec.eof() == [BadFrame("the input ended before the Content-Length body was whole")]
    dec = Decoder(1000)
    assert dec.feed(b"Content-Length: 100\r\n") == []
    assert dec.eof() == [BadFrame("the input ended inside the Content-Length header block")]


def test_a_skipped_oversized_body_cut_by_the_end_of_input_is_not_answered_twice() -> None:
    dec = Decoder(10)
    assert dec.feed(b"Content-Length: 100\r\n\r\nabc") == [TooLarge(Framing.LSP)]
    assert dec.eof() == []


def test_regression_bom_before_an_lsp_header_lost_the_requests() -> None:
    """Regression: a UTF-8 BOM before `Content-Length:` (a PowerShell pipe writes one) hid
    the header: the header, body and the next line were read as lines, two -32700s for
    two requests."""
    stream = b'\xef\xbb\xbfContent-Length: 7\r\n\r\n{"a":1}\xef\xbb\xbf{"b":2}\n'
    for step in (1, 2, len(stream)):
        dec = Decoder(1000)
        events = [e for i in range(0, len(stream), step) for e in dec.feed(stream[i:i + step])]
        assert events == [Message(b'{"a":1}', Framing.LSP), Message(b'{"b":2}', Framing.LINE)]
