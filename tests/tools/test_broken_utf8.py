"""UTF-8 with a few bytes that are not (issue 36): read as UTF-8 with each bad sequence shown
as U+FFFD, `encoding: "utf-8"` and `invalid_bytes` counting them; a `find` matches the
UTF-8 text (a U+FFFD in it matches a bad sequence); every edit keeps each bad byte it did
not remove exactly as it was and writes new text as UTF-8. Latin-1 and legacy files stay
what they were."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fuzzing import examples
from legacy_texts import TEXTS
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.dialects.codex import apply_patch
from chorus_tools.tools.dialects.positional import insert_after
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.patch.patch import patch
from chorus_tools.tools.read import legacy, linecount, lossy, text
from chorus_tools.tools.read import read as read_module
from chorus_tools.tools.read.info import info
from chorus_tools.tools.read.read import read
from chorus_tools.tools.read.reencode import encode_edit

# Well-formed multi-byte UTF-8: 23 bytes over 0x7F, more than any generated file's bad ones.
HEAD = "# ünïcöde — 日本語 ✓\n"
# Sequences that are not UTF-8: a lone continuation, a lead without its tail, an overlong
# form, an encoded surrogate, bytes UTF-8 never uses.
BAD = [b"\xff", b"\xfe", b"\x80", b"\xbf", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98",
       b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8\x88"]
# Text parts: with a real U+FFFD (EF BF BD) for reading; edits draw parts without it, since
# text alone cannot tell a real U+FFFD from a bad sequence's (see below).
READ_PART = st.text(alphabet=list("ab \nçé€日😀\ufffd"), min_size=1, max_size=12)
PART = st.text(alphabet=list("ab \nçé€日😀"), min_size=1, max_size=12)
SETTINGS = settings(max_examples=examples(150), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(params=["memory", "stream"])
def rctx(request: pytest.FixtureRequest, ctx: ToolContext,
         monkeypatch: pytest.MonkeyPatch) -> ToolContext:
    """`ctx` on the in-memory path, and on the streaming one with tiny odd-sized chunks
    (bad sequences and characters straddle them)."""
    if request.param == "stream":
        monkeypatch.setattr(read_module, "SMALL_FILE", 0)
        monkeypatch.setattr(read_module, "WHOLE_FILE", 0)
        monkeypatch.setattr(linecount, "SMALL", -1)
        monkeypatch.setattr(read_module, "_WINDOW_FIRST", 3)
        monkeypatch.setattr(text, "CHUNK", 7)
    return ctx


def occurs(haystack: str, needle: str) -> int:
    """Occurrences, overlapping ones too (file.patch counts those as not unique)."""
    return sum(haystack.startswith(needle, i) for i in range(len(haystack)))


def joined(parts: list[str | bytes]) -> bytes:
    return b"".join(p.encode() if isinstance(p, str) else p for p in parts)


ONE_BAD = "# naïve café\nprint('日本')\n".encode() + b"x = '\xff'\n" + "y = 'ü'\n".encode()
SHOWN = "# naïve café\nprint('日本')\nx = '\ufffd'\ny = 'ü'\n"


# reading ----------------------------------------------------------------------------------

def test_regression_utf8_with_one_bad_byte_was_read_as_latin1(rctx: ToolContext,
                                                               root: Path) -> None:
    (root / "a.py").write_bytes(ONE_BAD)
    got = read(rctx, "a.py", raw=True)
    assert (got["content"], got["encoding"], got["invalid_bytes"]) == (SHOWN, "utf-8", 1)
    got = read(rctx, "a.py", offset=3, limit=1)
    assert (got["content"], got["total_lines"]) == ("     3\tx = '\ufffd'", 4)
    assert got["invalid_bytes"] == 1
    described = info(rctx, "a.py")
    assert (described["encoding"], described["invalid_bytes"], described["lines"]) == (
        "utf-8", 1, 4)


def test_well_formed_files_carry_no_invalid_bytes(rctx: ToolContext, root: Path) -> None:
    """invalid_bytes is there only when there are some: a real U+FFFD is a character."""
    (root / "ok.txt").write_bytes("caf\u00e9 \ufffd\n".encode())
    assert "invalid_bytes" not in read(rctx, "ok.txt")
    assert "invalid_bytes" not in info(rctx, "ok.txt")
    (root / "l.txt").write_bytes(b"caf\xe9\n")  # no well-formed UTF-8 at all: latin-1
    got = read(rctx, "l.txt", raw=True)
    assert (got["content"], got["encoding"]) == ("caf\u00e9\n", "latin-1")
    assert "invalid_bytes" not in got


@pytest.mark.parametrize("data, expected", [
    # one bad byte among well-formed UTF-8
    (ONE_BAD, (SHOWN, "utf-8", 1)),
    # a UTF-8 BOM: utf-8-sig, the BOM itself not counted as evidence
    (codecs.BOM_UTF8 + ONE_BAD, (SHOWN, "utf-8-sig", 1)),
    (codecs.BOM_UTF8 + b"caf\xe9\n", ("\xef\xbb\xbfcaf\xe9\n", "latin-1", 0)),
    # as many bytes in broken sequences as in well-formed ones: latin-1
    ("é".encode() + b"\xe9\xe8\n", ("Ã©éè\n", "latin-1", 0)),
    ("é".encode() + b"\xe9\n", ("é\ufffd\n", "utf-8", 1)),
    # a cut sequence counts each of its bytes, shown as one U+FFFD
    ("日本".encode() + b"\xe2\x82\n", ("日本\ufffd\n", "utf-8", 2)),
    # no well-formed multi-byte character: latin-1, as before
    (b"ok\n\xe2\x82", ("ok\n\xe2\x82", "latin-1", 0)),
])
def test_what_counts_as_utf8_with_bad_bytes(data: bytes,
                                           expected: tuple[str, str, int]) -> None:
    got = text.decoded(data)
    assert (got.text, got.encoding, got.invalid) == expected


@pytest.mark.parametrize("language, pasted, codec", [("ru", "zh_hans", "gbk"),
                                                      ("fr", "ru", "cp1251")])
def test_mostly_utf8_with_a_pasted_legacy_paragraph_is_utf8(
        rctx: ToolContext, root: Path, language: str, pasted: str, codec: str) -> None:
    """The whole file decides before a sample: the detector would name gb18030 (or
    cp1251) for the pasted part, and the whole file decodes in it, as mojibake."""
    body = TEXTS[language].encode() * 20
    data = body + TEXTS[pasted].encode(codec)
    assert legacy.named_text(data, len(body)) is not None  # what the sample alone says
    assert legacy.decode(data, len(body)) is None  # and so the python engine agrees
    (root / "m.txt").write_bytes(data)
    got = read(rctx, "m.txt", raw=True)
    assert (got["content"], got["encoding"]) == (data.decode("utf-8", "replace"), "utf-8")
    assert got["invalid_bytes"] == lossy.tally(data).bad > 16


def test_raw_windows_concatenate_to_the_decoded_text(rctx: ToolContext, root: Path) -> None:
    data = (HEAD.encode() + b"".join(f"line {i} \u00e9 ".encode() + BAD[i % len(BAD)]
                                     + b"\r\n" for i in range(40)))
    (root / "w.txt").write_bytes(data)
    whole = data.decode("utf-8", "replace")
    pieces, offset = [], 1
    while True:
        got = read(rctx, "w.txt", offset=offset, limit=3, raw=True)
        pieces.append(got["content"])
        if not got["truncated"]:
            break
        offset = got["end_line"] + 1
    assert "".join(pieces) == whole
    assert got["invalid_bytes"] == sum(len(BAD[i % len(BAD)]) for i in range(40))
    tail = read(rctx, "w.txt", offset=-1, raw=True)
    assert tail["content"] == whole.split("\r\n")[-2] + "\r\n"


@SETTINGS
@given(parts=st.lists(st.tuples(READ_PART, st.sampled_from(BAD)), min_size=1, max_size=5),
       tail=READ_PART)
def test_any_file_with_a_few_bad_sequences_reads_as_utf8(
        ctx: ToolContext, root: Path, parts: list[tuple[str, bytes]], tail: str) -> None:
    data = joined([HEAD, *(p for pair in parts for p in pair), tail])
    (root / "p.txt").write_bytes(data)
    got = read(ctx, "p.txt", raw=True)
    assert (got["content"], got["encoding"]) == (data.decode("utf-8", "replace"), "utf-8")
    assert got["invalid_bytes"] == sum(len(bad) for _, bad in parts)


# editing ----------------------------------------------------------------------------------

def test_regression_utf8_find_was_not_found_in_a_file_with_a_bad_byte(
        ctx: ToolContext, root: Path) -> None:
    f = root / "a.py"
    f.write_bytes(ONE_BAD)
    got = patch(ctx, "a.py", [{"find": "naïve café", "replace": "naïve résumé"}])
    assert got["matches"][0]["tier"] == "exact"
    assert f.read_bytes() == ONE_BAD.replace("café".encode(), "résumé".encode())


def test_regression_non_ascii_replacement_was_written_as_latin1(ctx: ToolContext,
                                                                root: Path) -> None:
    """A find holding the U+FFFD the file shows matches the bad byte; a replacement that
    keeps it keeps the byte, and new text is UTF-8."""
    f = root / "a.py"
    f.write_bytes(ONE_BAD)
    patch(ctx, "a.py", [{"find": "x = '\ufffd'", "replace": "x = '\ufffd' # ✓ ü"}])
    assert f.read_bytes() == ONE_BAD.replace(b"x = '\xff'",
                                             b"x = '\xff' # " + "✓ ü".encode())
    # a U+FFFD in new text is the character U+FFFD; one the edit removes is gone
    patch(ctx, "a.py", [{"find": "x = '\ufffd' #", "replace": "x = '' #"}])
    patch(ctx, "a.py", [{"find": "y = 'ü'", "replace": "y = '\ufffd'"}])
    assert f.read_bytes() == ONE_BAD.replace(b"x = '\xff'", "x = '' # ✓ ü".encode()).replace(
        "y = 'ü'".encode(), "y = '\ufffd'".encode())


def test_every_tier_and_replace_all_keep_the_bad_bytes(ctx: ToolContext,
                                                       root: Path) -> None:
    f = root / "t.py"
    body = b"".join([HEAD.encode(), b"def f():\r\n", b"    a = '\xff' # \xc3\r\n",
                     b"    return 'x\xe2\x82'\r\n", b"b = 'x\xe2\x82'\r\n"])
    f.write_bytes(body)
    got = patch(ctx, "t.py", [
        {"find": "def f():\n    a = '\ufffd'", "replace": "def f():\n    a = 'é\ufffd'"},
        {"find": "  return 'x\ufffd'", "replace": "  return 'y\ufffd'"},
        {"find": "x\ufffd'", "replace": "z\ufffd'", "replace_all": True}])
    assert [m["tier"] for m in got["matches"]] == ["line_endings", "exact", "exact"]
    assert f.read_bytes() == b"".join([
        HEAD.encode(), b"def f():\r\n", "    a = 'é".encode() + b"\xff' # \xc3\r\n",
        b"    return 'y\xe2\x82'\r\n", b"b = 'z\xe2\x82'\r\n"])
    # the indentation tier, and its syntax guard parsing the text with U+FFFD in it
    patch(ctx, "t.py", [{"find": "a = 'é\ufffd' # \ufffd\nreturn 'y\ufffd'",
                         "replace": "a = 'è\ufffd' # \ufffd\nreturn 'w\ufffd'"}])
    assert f.read_bytes() == b"".join([
        HEAD.encode(), b"def f():\r\n", "    a = 'è".encode() + b"\xff' # \xc3\r\n",
        b"    return 'w\xe2\x82'\r\n", b"b = 'z\xe2\x82'\r\n"])


def test_bom_and_bad_bytes_are_kept(ctx: ToolContext, root: Path) -> None:
    f = root / "b.txt"
    f.write_bytes(codecs.BOM_UTF8 + ONE_BAD)
    patch(ctx, "b.txt", [{"find": "y = 'ü'", "replace": "y = 'ö'"}])
    assert f.read_bytes() == codecs.BOM_UTF8 + ONE_BAD.replace("ü".encode(), "ö".encode())


def test_a_lone_surrogate_in_a_replacement_is_refused(ctx: ToolContext, root: Path) -> None:
    f = root / "a.py"
    f.write_bytes(ONE_BAD)
    with pytest.raises(ToolError) as caught:
        patch(ctx, "a.py", [{"find": "y = 'ü'", "replace": "y = '\udcff'"}])
    assert caught.value.code == "invalid_params"
    assert f.read_bytes() == ONE_BAD


@SETTINGS
@given(parts=st.lists(st.tuples(PART, st.sampled_from(BAD)), min_size=1, max_size=5),
       tail=PART, data=st.data())
def test_an_edit_keeps_every_bad_byte_it_does_not_remove(
        ctx: ToolContext, root: Path, parts: list[tuple[str, bytes]], tail: str,
        data: st.DataObject) -> None:
    """A random file of well-formed text and bad sequences; a `find` inside one text part,
    or across a bad sequence with its U+FFFDs kept in `replace`: the file becomes exactly
    the parts with that one change, every bad byte as it was."""
    pieces: list[str | bytes] = [HEAD, *(p for pair in parts for p in pair), tail]
    at = data.draw(st.integers(1, len(parts)), "part") * 2 - 1  # a text part, not HEAD
    part = pieces[at]
    assert isinstance(part, str)
    cut = data.draw(st.integers(0, len(part) - 1), "start")
    end = data.draw(st.integers(cut + 1, len(part)), "end")
    new = data.draw(PART, "new")
    across = data.draw(st.booleans(), "across") and end == len(part)
    after = pieces.copy()
    if across:  # the find runs on over the bad sequence into the next text part
        bad, following = pieces[at + 1], pieces[at + 2]
        assert isinstance(bad, bytes) and isinstance(following, str)
        shown = bad.decode("utf-8", "replace")
        head = data.draw(st.integers(1, len(following)), "head")
        find = part[cut:] + shown + following[:head]
        replace = new + shown + new
        after[at], after[at + 2] = part[:cut] + new, new + following[head:]
    else:
        find, replace = part[cut:end], new
        after[at] = part[:cut] + new + part[end:]
    original = joined(pieces)
    assume(find != replace and occurs(original.decode("utf-8", "replace"), find) == 1)
    (root / "p.txt").write_bytes(original)
    patch(ctx, "p.txt", [{"find": find, "replace": replace}])
    assert (root / "p.txt").read_bytes() == joined(after)


@SETTINGS
@given(parts=st.lists(st.tuples(PART, st.sampled_from(BAD)), min_size=1, max_size=5),
       tail=PART, data=st.data())
def test_codex_and_insert_keep_every_bad_byte(
        ctx: ToolContext, root: Path, parts: list[tuple[str, bytes]], tail: str,
        data: st.DataObject) -> None:
    """apply_patch rewrites a whole line keeping its U+FFFDs; an insert adds lines: every
    other byte is as it was."""
    original = joined([HEAD, *(p for pair in parts for p in pair), tail, "\n"])
    lines = original.split(b"\n")[:-1]
    shown = [line.decode("utf-8", "replace") for line in lines]
    at = data.draw(st.integers(1, len(lines) - 1), "line")
    assume(shown.count(shown[at]) == 1 and shown[at].strip())
    (root / "c.txt").write_bytes(original)
    apply_patch(ctx, "\n".join(["*** Begin Patch", "*** Update File: c.txt", "@@",
                                f"-{shown[at]}", f"+ü{shown[at]}€", "*** End Patch"]))
    lines[at] = "ü".encode() + lines[at] + "€".encode()
    assert (root / "c.txt").read_bytes() == b"\n".join(lines) + b"\n"
    insert_after(ctx, "c.txt", at, "日本\n\ufffd")  # after line `at`: before lines[at]
    lines[at:at] = ["日本".encode(), "\ufffd".encode()]
    assert (root / "c.txt").read_bytes() == b"\n".join(lines) + b"\n"


def test_deleting_one_of_two_bad_sequences_keeps_the_other() -> None:
    """Text alone cannot tell which of two alike U+FFFDs an edit removed: the kept one
    keeps bytes that were there, in place, and what the file shows is the edit's text."""
    original = "é".encode() + b"a\xffb\xfec\n"
    before = original.decode("utf-8", "replace")
    for after in ("éa\ufffdc\n", "éa\ufffdb\n", "é\ufffdb\ufffdc\n"):
        written = encode_edit(after, "utf-8", before, original)
        assert written.decode("utf-8", "replace") == after
        assert written.count(b"\xff") + written.count(b"\xfe") == after.count("\ufffd")


def test_kept_bytes_that_would_join_into_a_character_are_written_as_shown() -> None:
    """Removing the text between the halves of a cut sequence would join them into a
    character the agent never wrote (€): the second is written as the character U+FFFD."""
    original = HEAD.encode() + b"x\xe2\x82y\xac\n"
    before = original.decode("utf-8", "replace")
    assert before == HEAD + "x\ufffdy\ufffd\n"
    written = encode_edit(HEAD + "x\ufffd\ufffd\n", "utf-8", before, original)
    assert written == HEAD.encode() + b"x\xe2\x82" + "\ufffd\n".encode()


def test_a_real_replacement_character_keeps_its_bytes() -> None:
    original = HEAD.encode() + "a\ufffd".encode() + b"\xff\n"
    before = original.decode("utf-8", "replace")
    written = encode_edit(before.replace("a", "b"), "utf-8", before, original)
    assert written == original.replace(b"a", b"b")


def test_tally_counts_bytes_across_pieces() -> None:
    data = HEAD.encode() + b"\xe2\x82 \xf0\x9f\x98\x80 \xff"
    for size in (1, 2, 3, 5, len(data)):
        tally = lossy.Tally()
        for i in range(0, len(data), size):
            tally.feed(data[i:i + size], final=i + size >= len(data))
        assert (tally.bad, tally.mostly_utf8) == (3, True)
