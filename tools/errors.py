"""Tool failures as values: a stable code an agent can branch on, plus details.

The codes are the `data.error` names of docs/protocol.md, Errors; the numeric JSON-RPC codes live in
`rpc/`, which alone speaks the protocol.
"""

from __future__ import annotations

import errno
import re
from typing import Any, Mapping

CODES = (
    "invalid_params",
    "path_outside_workspace",
    "file_not_found",
    "is_directory",
    "not_a_directory",
    "not_a_regular_file",
    "binary_file",
    "file_too_large",
    "already_exists",
    "conflict",
    "permission_denied",
    "find_not_found",
    "find_not_unique",
    "invalid_pattern",
    "write_failed",
    "timeout",
    "worker_crashed",
    "server_busy",
    "not_read",
    "edit_breaks_syntax",
    "unsupported_language",
    "symbol_not_found",
    "symbol_not_unique",
    "quota_exceeded",
    "shutting_down",
    "upload_not_found",
    "verification_failed",
    "cancelled",
    "internal_error",
)


class ToolError(Exception):
    """A failure the client caused or must know about; never a bug.

    `message` says what went wrong and what to do; `quote` is text from the file that the
    agent needs to act on (a hint's region, the lines an edit would have written), shown
    after the message exactly as it is: most MCP hosts give a model the error's text
    alone (docs/protocol.md, MCP), so that text holds what the data holds, never a
    pointer to it. A tool set's own words (`in_words`) change the message, never the quote."""

    def __init__(self, code: str, message: str, *, quote: str | None = None,
                 own_words: bool = False, **details: Any) -> None:
        if code not in CODES:
            raise ValueError(f"unknown tool error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.quote = quote
        self.own_words = own_words  # a tool set's adapter wrote it: in_words leaves it
        self.details = details

    @property
    def text(self) -> str:
        """What the agent reads: the message, then the quote on the lines after it."""
        return self.message if self.quote is None else f"{self.message}\n{self.quote}"

    def to_data(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.text, **self.details}

    def saying(self, message: str, *, own_words: bool = False) -> ToolError:
        """The same error (code, quote, details) with another message; `own_words`: a
        tool set's adapter wrote it in the set's words, which may echo the agent's text
        (an `old_str`), so the set's `words` must not touch it again."""
        return ToolError(self.code, message, quote=self.quote, own_words=own_words,
                         **self.details)

    def __reduce__(self):  # keyword details survive pickling across the worker pipe
        return (_rebuild, (self.code, self.message, self.quote, self.own_words,
                           self.details))


def _rebuild(code: str, message: str, quote: str | None, own_words: bool,
             details: dict[str, Any]) -> ToolError:
    return ToolError(code, message, quote=quote, own_words=own_words, **details)


# file.read's advice on a binary file; a tool set whose read is another says it in its
# own words (a Method's `words`: tools/dialects/*_table.py)
BINARY_ADVICE = ("file.read returns text and PNG/JPEG/GIF/WebP images only; use file.info for "
                 "its metadata.")
# file.search's advice on a line break or a \r in a pattern; a tool set whose search has no
# `multiline` parameter says it in these words instead (a Method's `words`)
MULTILINE_ADVICE = ("but multiline is off. Set multiline: true to match across lines, or "
                    "remove the \\n.")
CR_ADVICE = ("but multiline is off: lines are searched without their line ending, as you "
             "see them. Remove the \\r (`$` matches before \\r\\n), or set multiline: true.")
SINGLE_LINE_WORDS = {MULTILINE_ADVICE: "but this tool matches within one line: remove the "
                     "\\n and search for one of the lines.",
                     CR_ADVICE: "but this tool searches lines without their line ending, as "
                     "you see them: remove the \\r (`$` matches before \\r\\n)."}


def in_words(err: ToolError, words: Mapping[str, str]) -> ToolError:
    """`err` in a tool set's own words (a Method's `words`: docs/protocol.md, Tool sets).
    Each key is a name the core uses (a parameter, `'path'` as messages quote it,
    `patches[{i}].find` for every index, a method, a phrase) and becomes the tool's own
    wherever it stands whole in the message, `data.param` and `data.reason`; the quote
    (the file's text) is never touched. `data.param` also follows a quoted key
    (`'path'`: the parameter `path`)."""
    if not words:
        return err
    details = dict(err.details)
    named = [v for k in _PATH_FIELDS if isinstance(v := details.get(k), str) and v]
    message = err.message if err.own_words else _swap(err.message, words, named)
    for field in ("param", "reason"):
        if isinstance(details.get(field), str):
            details[field] = _swap(details[field], words, named)
    param = details.get("param")
    if isinstance(param, str) and f"'{param}'" in words:
        details["param"] = words[f"'{param}'"].strip("'")
    return ToolError(err.code, message, quote=err.quote, own_words=err.own_words, **details)


def reworded(text: str, words: Mapping[str, str]) -> str:
    """`text` the server wrote (an MCP result's note) in a tool set's own words, as
    in_words says an error."""
    return _swap(text, words)


# the details naming a file: a message quotes it as it is, even a file named `file.list`
_PATH_FIELDS = ("path", "source", "destination")


def _swap(text: str, words: Mapping[str, str], paths: list[str] | None = None) -> str:
    """`text` in `words`, every occurrence of `paths` (the files it names) left as is."""
    if paths:
        kept = "|".join(map(re.escape, sorted(paths, key=len, reverse=True)))
        # a path standing whole, as _word finds a name (`a`, never the a of `patches`)
        parts = re.split(rf"((?<![\w./-])(?:{kept})(?![\w/-]|\.\w))", text)  # odd: paths
        return "".join(p if i % 2 else _swap(p, words) for i, p in enumerate(parts))
    for core, own in words.items():
        text = _word(core).sub(lambda m, own=own: own.replace("{i}", m.group(1))
                               if m.groups() else own, text)
    return text


_WORDS: dict[str, re.Pattern[str]] = {}


def _word(core: str) -> re.Pattern[str]:
    """`core` standing whole: not inside a longer name or a path (`src/file.patch.py`)."""
    rx = _WORDS.get(core)
    if rx is None:
        rx = _WORDS[core] = re.compile(
            r"(?<![\w./-])" + re.escape(core).replace(r"\{i\}", r"(\d+)")
            + r"(?![\w\[/-]|\.\w)")
    return rx


_ERRNO_CODES = {
    errno.ENOENT: ("file_not_found", "File not found: {path}"),
    errno.EXDEV: ("path_outside_workspace",
                  "Path resolves outside the workspace (through '..' or a symlink): {path}"),
    errno.ENOTDIR: ("not_a_directory", "A component of the path is not a directory: {path}"),
    errno.EISDIR: ("is_directory", "Path is a directory, not a file: {path}"),
    errno.EACCES: ("permission_denied", "Permission denied by the operating system: {path}"),
    errno.EPERM: ("permission_denied", "Operation not permitted by the operating system: {path}"),
    errno.EROFS: ("permission_denied", "The file system is read-only: {path}"),
    errno.ELOOP: ("file_not_found", "Too many levels of symbolic links: {path}"),
    errno.ENAMETOOLONG: ("invalid_params", "Path or a component of it is too long: {path}"),
    errno.EEXIST: ("already_exists", "File already exists: {path}"),
    errno.EFBIG: ("file_too_large", "File too large for the file system: {path}"),
}


def from_os_error(exc: OSError, path: str, fallback: str = "internal_error") -> ToolError:
    """Turn an OSError into the ToolError an agent can act on; `fallback` for the rest."""
    known = None if exc.errno is None else _ERRNO_CODES.get(exc.errno)
    code, template = known or (fallback, "{path}: {reason}")
    details: dict[str, Any] = {"path": path}
    if code == "invalid_params":
        details["param"] = "path"
    if code == fallback and exc.errno not in _ERRNO_CODES:
        details["errno"] = errno.errorcode.get(exc.errno or 0, str(exc.errno))
    return ToolError(code, template.format(path=path, reason=exc.strerror), **details)
