"""A JavaScript RegExp source (the shadow set's Grep `query`) in ripgrep's syntax.

The common syntax means the same in both and passes as is. Translated: `[^]` (any
character) → `[\\s\\S]`, `[]` (nothing) → `[^\\s\\S]`, `\\/` → `/`, `\\uXXXX` and
`\\u{X…}` → `\\x{X…}`, `\\cX` → its control character, `\\0` → `\\x00`, `\\k<name>` →
`(?P=name)`, `[\\b]` → a backspace, an escaped letter JavaScript gives no meaning
(`\\A`, `\\Z`, `\\e`) → the letter itself, a `{` that starts no quantifier (`{,3}`)
→ `\\{`; inside a class, the characters ripgrep's
classes give a meaning that JS's do not (`[`, and doubled `&`, `-`, `~`: nesting and set
operations) are escaped. With no equivalent (invalid_pattern naming it): the `v` flag's
string literals `\\q{…}`.
Syntax errors are left for the engines to report as for any pattern.
"""

from __future__ import annotations

import re

from chorus_tools.tools.errors import ToolError

_UNICODE = re.compile(r"u(?:\{([0-9A-Fa-f]{1,6})\}|([0-9A-Fa-f]{4}))")
_NAMED_REF = re.compile(r"k<([A-Za-z_][A-Za-z0-9_]*)>")
# the letters a JavaScript RegExp escape gives a meaning; any other escaped letter is
# the letter itself there (an identity escape), whatever ripgrep or PCRE2 make of it
_JS_LETTERS = frozenset("dDwWsSbBnrtvfcxukpPq")
# a brace that starts no JavaScript quantifier ({n}, {n,}, {n,m}) is a literal brace there;
# ripgrep reads `{,3}` as one
_QUANTIFIER = re.compile(r"\{[0-9]+(?:,[0-9]*)?\}")


def translate(source: str, param: str = "query") -> str:
    out: list[str] = []
    i, n = 0, len(source)
    in_class = False
    while i < n:
        c = source[i]
        if c == "\\" and i + 1 < n:
            piece, i = _escape(source, i + 1, in_class, param)
            out.append(piece)
            continue
        if in_class:
            if c == "]":
                in_class = False
                out.append(c)
            elif c == "[" or (c in "&-~" and source.startswith(c * 2, i)):
                out.append("\\" + c)
            else:
                out.append(c)
            i += 1
            continue
        if c == "[":
            if source.startswith("[^]", i):
                out.append(r"[\s\S]")
                i += 3
                continue
            if source.startswith("[]", i):
                out.append(r"[^\s\S]")
                i += 2
                continue
            in_class = True
            if source.startswith("[^", i):
                out.append("[^")
                i += 2
            else:
                out.append("[")
                i += 1
            continue
        out.append("\\{" if c == "{" and not _QUANTIFIER.match(source, i) else c)
        i += 1
    return "".join(out)


def _escape(source: str, i: int, in_class: bool, param: str) -> tuple[str, int]:
    """The translation of the escape whose letter is at `i`, and where it ends."""
    c = source[i]
    if c == "/":
        return "/", i + 1
    if c == "u" and (m := _UNICODE.match(source, i)):
        return f"\\x{{{m.group(1) or m.group(2)}}}", m.end()
    if c == "c" and i + 1 < len(source) and source[i + 1].isalpha():
        return f"\\x{{{ord(source[i + 1].upper()) % 32:02X}}}", i + 2
    if c == "0" and not source[i + 1:i + 2].isdigit():
        return r"\x00", i + 1
    if c == "k" and not in_class and (m := _NAMED_REF.match(source, i)):
        return f"(?P={m.group(1)})", m.end()
    if c == "q" and source[i + 1:i + 2] == "{":
        end = source.find("}", i)
        construct = source[i - 1:end + 1 if end >= 0 else len(source)]
        raise ToolError("invalid_pattern",
                        f"The JavaScript RegExp construct {construct!r} (a string literal of "
                        "the v flag) has no equivalent in ripgrep's syntax. Write the "
                        "alternatives as (?:abc|def) instead.", param=param,
                        reason=f"untranslatable construct {construct}", construct=construct)
    if c in "pP" and source[i + 1:i + 2] == "{" and (end := source.find("}", i)) >= 0:
        return source[i - 1:end + 1], end + 1  # a Unicode property, braces and all
    if c == "b" and in_class:
        return r"\x08", i + 1  # backspace, as in JavaScript
    if c.isascii() and c.isalpha() and c not in _JS_LETTERS:
        return c, i + 1  # the letter itself (ripgrep reads anchors, classes into some)
    return "\\" + c, i + 1
