"""Grams (tools/warm/grams.py): a file's grams, and the grams every match's file must hold.

The one bug to fear is a gram claimed required that a match lacks: the index would drop
that file and the search would miss the match. So the property is checked against the
engines themselves, ripgrep (with `--engine=auto`, as the search runs it, so PCRE2 takes
the patterns its Rust engine refuses) and the `regex` module as the python engine compiles
it, on drawn patterns and contents, and on real source files.
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings, strategies as st

from fanout_runner import RG_PATH, RG_PCRE2
from fuzzing import examples
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.search.rg_run import Query, search_args
from chorus_tools.tools.search.syntax import analyse, compile_python
from chorus_tools.tools.warm import grams as grams_module
from chorus_tools.tools.warm.grams import (CASE_INSENSITIVE_LETTERS, content_grams,
                                          gram_codes, indexable, query_grams)

needs_rg = pytest.mark.skipif(RG_PATH is None, reason="checked against ripgrep")
ROOT = Path(__file__).resolve().parents[2]
STDLIB = Path(re.__file__).resolve().parents[1]
WORD = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
KELVIN, LONG_S, DOTTED_I, DOTLESS_I = "\u212a", "\u017f", "\u0130", "\u0131"


def grams(*words: str) -> list[int]:
    """Codes of the grams of `words`, each a run of word bytes."""
    return sorted({b[i] << 16 | b[i + 1] << 8 | b[i + 2]
                   for w in words for b in [w.lower().encode()] for i in range(len(b) - 2)})


def query(pattern: str, *, literal: bool = False, case_sensitive: bool = True,
          multiline: bool = False) -> list[int] | None:
    """query_grams with the pattern's needs_pcre2 as the search reads it."""
    return query_grams(pattern, literal=literal, case_sensitive=case_sensitive,
                       multiline=multiline,
                       needs_pcre2=analyse(pattern, literal=literal).needs_pcre2)


def rg_matches(path: Path, pattern: str, *, literal: bool, case_sensitive: bool,
               multiline: bool, pcre2: bool = RG_PCRE2) -> bool | None:
    """Whether ripgrep finds a match in `path`, with the search's own options (None: it
    refuses the pattern)."""
    query = Query(pattern, literal, False, case_sensitive, multiline, [], (), False, False)
    argv = search_args(str(RG_PATH), query, pcre2=pcre2, kind="counts", context=(0, 0),
                       sort=False)
    done = subprocess.run([*argv, "--", str(path)], capture_output=True, timeout=60)
    return {0: True, 1: False}.get(done.returncode)


def python_matches(text: str, pattern: str, *, literal: bool, case_sensitive: bool) -> bool:
    """Whether the python engine's compiled pattern matches the text as a whole or any of
    its lines (it searches both ways); False when it refuses the pattern."""
    try:
        rx = compile_python(analyse(pattern, literal=literal), case_sensitive=case_sensitive)
        return any(rx.search(part, timeout=5) is not None
                   for part in [text, *text.split("\n")])
    except (ToolError, TimeoutError):  # a refused pattern, or too slow here: no verdict
        return False


def assert_required(data: bytes, codes: list[int] | None, what: str) -> None:
    held = content_grams(data)
    if codes is None or held is None:
        return
    missing = sorted(set(codes) - set(held.tolist()))
    assert not missing, f"{what}: grams {[hex(c) for c in missing]} claimed, not held"


# --- a file's grams ---------------------------------------------------------------------

def test_content_grams_are_lowercased_word_triples() -> None:
    held = content_grams("Hello, wORLD_1 \u00e9-x a\u00e9\n".encode())
    assert held is not None and held.dtype.name == "uint32"
    assert held.tolist() == grams("hello", "world_1", "a\u00e9")  # a C3 A9: 3 word bytes


@pytest.mark.parametrize("data", [b"\xff\xfeh\0i\0", b"\xfe\xff\0h\0i", b"abc\0def",
                                  b"caf\xe9 latin-1", b"cut \xe2\x82"])
def test_content_grams_refuses_what_engines_read_otherwise(data: bytes) -> None:
    assert not indexable(data)
    assert content_grams(data) is None and gram_codes(data) is None


def test_content_grams_of_short_and_empty_files() -> None:
    for data in (b"", b"ab", b"ab\n"):
        held = content_grams(data)
        assert held is not None and held.dtype.name == "uint32" and held.tolist() == []


def test_gram_codes_keeps_repeats_content_grams_drops_them() -> None:
    codes = gram_codes(b"abc abc abcd")
    assert codes is not None and codes.tolist() == grams("abc") * 3 + grams("bcd")
    held = content_grams(b"abc abc abcd")
    assert held is not None and held.tolist() == grams("abcd")


def reference_grams(data: bytes) -> list[int]:
    """Every gram by the definition, one position at a time."""
    low = data.lower()
    word = set(WORD.encode()) | set(range(0x80, 0x100))
    return [low[i] << 16 | low[i + 1] << 8 | low[i + 2] for i in range(len(low) - 2)
            if {low[i], low[i + 1], low[i + 2]} <= word]


@settings(max_examples=examples(200), deadline=None)
@given(text=st.text(alphabet=st.sampled_from([*"aZ_9 -\n\t.", "\u00e9", KELVIN, "\U0001f600"]),
                    max_size=60),
       chunk=st.sampled_from([1, 2, 3, 7, 1 << 20]))
def test_gram_codes_match_the_definition_across_chunks(text: str, chunk: int) -> None:
    data = text.encode()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grams_module, "_CHUNK", chunk)
        codes, held = gram_codes(data), content_grams(data)
    assert codes is not None and held is not None
    assert codes.tolist() == reference_grams(data)
    assert held.tolist() == sorted(set(reference_grams(data)))


def test_gram_codes_of_a_file_larger_than_a_chunk() -> None:
    data = b"x" * ((1 << 20) - 2) + b"Straddle " + "\u00e9t\u00e9 ".encode() * 100_000
    codes = gram_codes(data)
    assert codes is not None and codes.tolist() == reference_grams(data)


# --- the grams a pattern requires -------------------------------------------------------

@pytest.mark.parametrize("pattern, literal, expected", [
    ("def foo", False, ["def", "foo"]),
    (r"class\s+Foo", False, ["class", "Foo"]),
    (r"foo_bar\(", False, ["foo_bar"]),
    ("TODO", False, ["TODO"]),
    ("self.load(path)", True, ["self", "load", "path"]),
    (r"\bparse_args\b", False, ["parse_args"]),
    ("abc?def", False, ["def"]),  # c is optional: "ab" and "def" are apart
    ("abc*def", False, ["def"]),
    ("abc{2}def", False, ["def"]),
    ("ab+cde", False, ["cde"]),  # b stays, but "ab" and "cde" need not touch
    (r"\pLabc", False, ["abc"]),  # \pL is a class, not a plain L
    (r"\x41bcd", False, ["bcd"]),
    (r"[abc]xyz", False, ["xyz"]),
    (r"[]abc]xyz", False, ["xyz"]),
    (r"[^]abc]xyz", False, ["xyz"]),
    (r"[a[bc]d]xyz", False, ["xyz"]),
    (r"[[:alpha:]]xyz", False, ["xyz"]),
    (r"[\]abc]xyz", False, ["xyz"]),
    ("x.yzw", False, ["yzw"]),
    ("^start$", False, ["start"]),
    (r"\012abc", False, ["abc"]),  # the octal escape swallows its digits
    ("ab\u00e9cd", False, ["ab\u00e9cd"]),
    ("x{e<=1}abc", False, ["abc"]),  # the regex module's fuzzy matching: x only
    ("foo{ins<=1}bar", False, ["bar"]),
    (r"foo\Kbar", False, ["foo", "bar"]),  # PCRE2's match start reset
])
def test_query_grams_narrows_common_patterns(pattern: str, literal: bool,
                                             expected: list[str]) -> None:
    assert query(pattern, literal=literal) == grams(*expected)


@pytest.mark.parametrize("pattern", [
    "foo|bar", "(foo)", "(?i)foo", "(?x)f o o", "(?:foo)bar", r"foo(?=bar)", r"(\w+)\1",
    r"\Qfoo\E", r"[\Q]abc\E]", "x{[}abcd]", "x{e<=1:[a-z]}abc", "[abc", "abc\\", ".",
    "ab", "a.b(c)", r"\d+\s*",
])
def test_query_grams_gives_up(pattern: str) -> None:
    """Alternation, groups and flags, PCRE-only syntax, what the scan cannot be sure of,
    and patterns with no 3 word bytes in a row: no narrowing."""
    assert query(pattern) is None
    assert query(pattern, case_sensitive=False) is None


@needs_rg
def test_braces_after_an_escape_hiding_a_class(tmp_path: Path) -> None:
    """Regression: `\\d{[}abc]` was read as `\\d{...}` then the run "abc", but ripgrep's
    Rust engine refuses it and PCRE2 reads `{` as a plain char and `[}abc]` as a class: the
    file "5{}" matches without holding "abc"."""
    path = tmp_path / "file.txt"
    path.write_bytes(b"5{}\n.{}\n")
    for pattern in (r"\d{[}abc]", r"\.{[}abc]"):
        assert rg_matches(path, pattern, literal=False, case_sensitive=True,
                          multiline=False) is RG_PCRE2
        assert query(pattern) is None


def test_query_grams_reads_hostile_patterns_in_linear_time() -> None:
    """Regression: classes were read recursively (a RecursionError past ~1000 nested `[`)
    and each `{` searched to the end for a `}` (quadratic on a pattern of `{`)."""
    for pattern, expected in [("[" * 5000 + "a" + "]" * 5000 + "xyz", "xyz"),
                              ("{" * 200_000 + "abc", "abc"), ("a{1}" * 50_000 + "bcd", "bcd")]:
        assert query_grams(pattern, literal=False, case_sensitive=True, multiline=False,
                           needs_pcre2=False) == grams(expected)


def test_query_grams_gives_up_on_pcre2_and_unsplit_line_breaks() -> None:
    assert query_grams("foobar", literal=False, case_sensitive=True, multiline=False,
                       needs_pcre2=True) is None
    # without multiline ripgrep reads the lines of a pattern as alternatives
    assert query("foo\nbar", literal=True) is None
    assert query("foo\nbar", literal=True, multiline=True) == grams("foo", "bar")


def test_query_grams_case_insensitive_drops_foldable_bytes() -> None:
    assert query("Kelvin", case_sensitive=False) == grams("elv")
    assert query("Kelvin", case_sensitive=True) == grams("Kelvin")
    assert query("caf\u00e9 au", case_sensitive=False) == grams("caf")
    assert query("DEF_X", case_sensitive=False) == grams("def_x")


@pytest.mark.long  # every code point through four engines: a table's check, not a path's
@needs_rg
def test_case_insensitive_letters_complete(tmp_path: Path) -> None:
    """Every ASCII word char a non-ASCII char matches case-insensitively, in every engine
    a search may run (ripgrep's Rust engine, its PCRE2, its fixed strings, and the `regex`
    module as the python engine compiles it), over every code point: exactly the
    module's set. Each char is tried alone and inside a literal string (`aCa`), since
    engines match a string through other code than a single char."""
    chars = [chr(c) for c in range(0x80, sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    alone, framed = "\n".join(chars), "".join(f"a{c}a\n" for c in chars)
    path = tmp_path / "every-char.txt"
    path.write_text(framed, encoding="utf-8")
    found: set[str] = set()
    for ch in WORD:
        for pattern, text in ((ch, alone), (f"a{ch}a", framed)):
            rx = compile_python(analyse(pattern, literal=False), case_sensitive=False)
            if rx.search(text):
                found.add(ch.lower())
        for mode in [["--fixed-strings"], []] + ([["--pcre2"]] if RG_PCRE2 else []):
            done = subprocess.run([str(RG_PATH), "--no-config", "--ignore-case", "--quiet",
                                   *mode, f"--regexp=a{ch}a", str(path)], capture_output=True)
            assert done.returncode in (0, 1), done.stderr
            if done.returncode == 0:  # every line holds a non-ASCII char
                found.add(ch.lower())
    assert found == {chr(b) for b in CASE_INSENSITIVE_LETTERS}


# --- the property, against both engines -------------------------------------------------

_PLAIN = list("abcdefgikmsxyz_019KSI -:,<>=#'/") + [
    "\u00e9", "\u00c9", KELVIN, LONG_S, DOTTED_I, DOTLESS_I, "\u00df", "\u1e9e", "\u00fc"]
_SYNTAX = [
    ".", "^", "$", "?", "*", "+", "+?", "*?", "??", "{2}", "{1,3}", "{,2}", "{2,}", "{",
    "}", "{ab}", "{e<=1}", "[", "]", "[abc]", "[^k]", "[]a]", "[^]a]", "[[:alpha:]]",
    "[a[bc]d]", "[a-z&&[^s]]", r"[\]]", r"[\w]", "(", ")", "|", "(?i)", "\\", r"\d",
    r"\w", r"\s", r"\b", r"\B", r"\.", r"\x41", r"\x{4B}", r"\u004B", r"\pL", r"\p{L}",
    r"\PL", r"\012", r"\1", r"\Q", r"\E", r"\cA", r"\N{LATIN SMALL LETTER K}", r"\z",
    r"\A", r"\<", r"\>", "\n", r"\n", r"\t", r"\K", r"\h", "{[}", "{]", "[}", r"\d{",
    r"\p{", "{\\", "[:", ":]", "&&", "--",
]
_WORDS = st.text(alphabet="abcdefkKsSiI_09" + KELVIN + LONG_S + DOTTED_I, min_size=3,
                 max_size=7)
_TOKENS = st.one_of(_WORDS, st.sampled_from(_PLAIN), _WORDS, st.sampled_from(_SYNTAX))
_FOLDS = {"k": ["K", KELVIN], "K": ["k", KELVIN], "s": ["S", LONG_S], "S": ["s", LONG_S],
          "i": ["I", DOTTED_I, DOTLESS_I], "I": ["i", DOTTED_I, DOTLESS_I]}


@st.composite
def _sample(draw: st.DrawFn, pattern: str, literal: bool) -> str:
    """A text likely to match: a string the pattern (read as Python's `re`) generates,
    else the pattern itself; in half the draws, letters swapped for their case variants."""
    base = pattern
    if not literal:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # `re` on a nested set
                base = draw(st.from_regex(re.compile(pattern), fullmatch=True))
        except Exception:  # not a Python `re` pattern: its own text will do
            base = pattern
    if not draw(st.booleans()):
        return base
    swapped = [draw(st.sampled_from([c, *_FOLDS.get(c, []), c.swapcase()])) for c in base[:40]]
    return "".join(swapped)


@needs_rg
@settings(max_examples=examples(250), deadline=None)
@given(data=st.data(), tokens=st.lists(_TOKENS, min_size=1, max_size=8),
       literal=st.booleans(), case_sensitive=st.booleans(), multiline=st.booleans(),
       noise=st.text(alphabet=_PLAIN + ["\n", "\t", "(", ")", "["], max_size=12),
       bom=st.booleans())
def test_required_grams_are_in_every_matching_file(
        tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, tokens: list[str],
        literal: bool, case_sensitive: bool, multiline: bool, noise: str, bom: bool) -> None:
    pattern = "".join(tokens)
    codes = query(pattern, literal=literal, case_sensitive=case_sensitive,
                  multiline=multiline)
    text = noise + data.draw(_sample(pattern, literal)) + noise[::-1]
    content = ("\ufeff" if bom else "") + text
    raw = content.encode("utf-8")
    path = tmp_path_factory.mktemp("grams") / "file.txt"
    path.write_bytes(raw)
    options = {"literal": literal, "case_sensitive": case_sensitive}
    if python_matches(text, pattern, **options):
        assert_required(raw, codes, f"python engine, {pattern!r} in {text!r}")
    if rg_matches(path, pattern, multiline=multiline, **options):
        assert_required(raw, codes, f"ripgrep, {pattern!r} in {text!r}")


# --- real files -------------------------------------------------------------------------

def _real_files() -> list[Path]:
    files = sorted(p for p in (ROOT / "tests" / "samples").rglob("*") if p.is_file())
    for package in ("json", "email", "http", "asyncio"):
        files += sorted((STDLIB / package).rglob("*.py"))
    return files


def _identifiers(files: list[Path], count: int) -> list[str]:
    """Identifiers spread over the files, rare and common alike."""
    seen: dict[str, None] = {}
    for path in files[::3]:
        for word in regex.findall(r"\b[A-Za-z_][A-Za-z0-9_]{3,}\b",
                                  path.read_text("utf-8", "replace"))[:4]:
            seen.setdefault(word)
    words = list(seen)
    return words[::max(1, len(words) // count)][:count]


@pytest.mark.long  # seconds of the default suite; CI runs it under -m long
@needs_rg
def test_required_grams_hold_in_real_files() -> None:
    """Identifier-shaped patterns, as agents write them, over real source: every file
    ripgrep (or the python engine) matches holds every required gram."""
    files = _real_files()
    contents = {p: p.read_bytes() for p in files}
    patterns: list[tuple[str, bool, bool]] = []
    for word in _identifiers(files, 25):
        patterns += [(word, True, True), (word, False, False), (rf"\b{word}\b", False, True),
                     (f"def {word}", False, True), (rf"class\s+{word}", False, False),
                     (rf"{word}\(", False, True), (f"{word}.append(", True, False)]
    texts = {p: raw.decode("utf-8-sig") for p, raw in contents.items() if indexable(raw)}
    narrowed = 0
    for pattern, literal, case_sensitive in patterns:
        codes = query(pattern, literal=literal, case_sensitive=case_sensitive)
        narrowed += codes is not None
        argv = [str(RG_PATH), "--files-with-matches", "--no-config", "--no-ignore",
                "--hidden", "--case-sensitive" if case_sensitive else "--ignore-case",
                *(["--fixed-strings"] if literal else []), f"--regexp={pattern}", "--",
                *map(str, files)]
        done = subprocess.run(argv, capture_output=True, timeout=120)
        assert done.returncode in (0, 1), done.stderr
        for line in done.stdout.decode().splitlines():
            assert_required(contents[Path(line)], codes, f"ripgrep, {pattern!r} in {line}")
        rx = compile_python(analyse(pattern, literal=literal), case_sensitive=case_sensitive)
        for path, text in texts.items():
            if rx.search(text):
                assert_required(contents[path], codes, f"python engine, {pattern!r} in {path}")
    assert narrowed >= len(patterns) * 3 // 4  # the property was not met by giving up
