"""C and C++ macros a parser without a preprocessor misreads, hidden before parsing for
symbols (replaced by spaces of the same length, so every offset and line stays where it
is): an export macro between `class` and the class's name (`class U_COMMON_API Name :`),
one after a declarator's parameters (`size() const _GLIBCXX_NOEXCEPT {`), and a macro
alone on its line with no semicolon (`__BEGIN_DECLS`,
`_GLIBCXX_BEGIN_NAMESPACE_VERSION`, `DEFINE_STACK_OF(X509)`), which tree-sitter would take
for the type of the declaration that follows and so lose it. Signatures are still cut
from the file's own bytes. Measured against universal-ctags: docs/benchmarks.md."""

from __future__ import annotations

import re

_EXPORT = re.compile(rb"\b(?:class|struct|union)[ \t]+(_*[A-Z][A-Z0-9_]*[A-Z0-9])[ \t]+"
                     rb"(?=[A-Za-z_][\w:]*[ \t]*(?:[:{]|final\b))")
# after a declarator's parameters: `f() const _GLIBCXX_NOEXCEPT {`, `g(int) __THROW;`
_TRAILING = re.compile(rb"\)[ \t]*(?:const[ \t]*)?(?:&&?[ \t]*)?"
                       rb"((?:_*[A-Z][A-Z0-9_]{2,}[ \t]*)+)(?=[{;:=]|//|/\*|\n)")
_LONE = re.compile(rb"^[ \t]*([A-Z_][A-Z0-9_]{2,}(?:[ \t]*\([^()\n]*\))?)[ \t]*$", re.M)
_CLOSED = (b";", b"{", b"}", b"*/", b":")  # a line above ending so ends a statement


def hide(data: bytes) -> bytes:
    """`data` with those macros blanked; the same object when there are none."""
    spans = [m.span(1) for m in _EXPORT.finditer(data)]
    spans += [m.span(1) for m in _TRAILING.finditer(data)]
    spans += [m.span(1) for m in _LONE.finditer(data) if _alone(data, *m.span())]
    if not spans:
        return data
    out = bytearray(data)
    for start, end in spans:
        out[start:end] = b" " * (end - start)
    return bytes(out)


def _alone(data: bytes, start: int, end: int) -> bool:
    """Whether the line is a statement of its own: the line above ends one (or is a
    directive), and the next does not open a body or arguments (`FOO(x)` then `{` is a
    function named in capitals)."""
    before = data[:start].rstrip()
    above = before[before.rfind(b"\n") + 1:].lstrip()
    if before and not (above.startswith(b"#") and not above.endswith(b"\\")
                       or above.endswith(_CLOSED)):
        return False
    after = data[end:].lstrip()
    return not after.startswith((b"{", b"(", b":", b","))
