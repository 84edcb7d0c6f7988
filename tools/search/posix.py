"""POSIX classes (`[[:alpha:]]`, `[[:^digit:]]`) in the `regex` module's syntax, with the
meaning the engine ripgrep runs gives them: ASCII-only in its default engine, Unicode in
PCRE2, which ripgrep runs with PCRE2_UCP for a pattern that needs it (look-around,
back-references): there `[[:alpha:]]` is `\\p{L}`, `[[:digit:]]` `\\p{Nd}` (pcre2pattern,
"POSIX character classes"; `xdigit` and `ascii` stay ASCII)."""

from __future__ import annotations

_ASCII = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": r"\x00-\x7F", "blank": r"\t ",
    "cntrl": r"\x00-\x1F\x7F", "digit": "0-9", "graph": "!-~", "lower": "a-z",
    "print": " -~", "punct": r"!-/:-@\[-`{-~", "space": r"\t\n\x0B\f\r ", "upper": "A-Z",
    "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}
_UCP = {
    **_ASCII,
    "alnum": r"\p{L}\p{N}", "alpha": r"\p{L}", "blank": r"\t\p{Zs}", "cntrl": r"\p{Cc}",
    "digit": r"\p{Nd}", "graph": r"[^\p{Z}\p{C}]\p{Cf}", "lower": r"\p{Ll}",
    "print": r"[^\p{Z}\p{C}]\p{Cf}\p{Zs}", "punct": r"\p{P}$+<=>^`|~",
    "space": r"\p{Z}\t\n\x0B\f\r\x85", "upper": r"\p{Lu}", "word": r"\p{L}\p{N}_",
}


def posix_class(name: str, *, unicode: bool) -> str | None:
    """The class items for `name` (`alpha`, or `^alpha` negated), to sit inside a `[..]`
    of the `regex` module's VERSION1 syntax; None for a name that is no POSIX class."""
    table = _UCP if unicode else _ASCII
    if name.startswith("^") and name[1:] in table:
        return f"[^{table[name[1:]]}]"
    return table.get(name)
