"""What ripgrep says on stderr, read so that no failure passes for an empty result.

rg goes on past a file it cannot search, prints `rg: PATH: REASON` and exits 2 in the end;
a PCRE2 pattern hitting its match limit on one file (`(?:(a+)+c|!)(?<!z)` on a long run
of `a`) was answered `{"matches": []}` (issue 22). Decided per case, as an agent relying on
the answer needs it:
- rg could not start or run (a bad pattern or glob, no summary): the call fails,
  `invalid_pattern` with rg's reason, else `internal_error`;
- a line naming the search's own directory: it was swapped or removed under the search
  (the caller retries, then says so);
- a line naming a file beneath (a PCRE2 limit, an I/O error, a file gone since rg listed
  it): that file is searched again by the python engine, which has no such limit (its
  per-file time budget still applies: past it, `timeout` naming the file), and the reply
  says so in `fallback`; a file gone since contributes nothing, as on the python engine;
- a line naming a directory beneath (rg could not list it): the call fails with the
  reason, since the files in it were never searched;
- any other line, or an exit code of 2 with nothing said: the call fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import BinaryIO, NamedTuple

from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.search.syntax import invalid_pattern

_PATTERN_ERRORS = ("regex parse error", "the literal", "PCRE2", "error parsing glob",
                   "unclosed", "invalid")
_MAX_LINE = 4096  # characters of one stderr line kept (a reason, with its path)
_MAX_REASON = 64 * 1024  # bytes of stderr read when rg failed as a whole
SHOWN_FALLBACKS = 20  # files named in the reply's `fallback`; the count says the rest


class NeedsPcre2(Exception):
    """ripgrep's default engine refused a PCRE-only feature and it has no PCRE2."""


class PathError(NamedTuple):
    path: str  # workspace-relative
    reason: str  # rg's words after the path


def raise_failure(stderr: str, needs_pcre2: bool) -> None:
    """rg failed as a whole: the error its words call for."""
    reason = "\n".join(ln.removeprefix("rg: ") for ln in stderr.strip().splitlines())
    if "--pcre2" in reason and not needs_pcre2:
        raise NeedsPcre2(reason)
    if any(key in reason for key in _PATTERN_ERRORS):
        raise invalid_pattern(reason)
    raise ToolError("internal_error", f"ripgrep failed: {reason or 'no reason given'}",
                    reason=reason)


def whole_failure(errors: BinaryIO) -> str:
    """The start of what rg said when it failed as a whole."""
    errors.seek(0)
    return errors.read(_MAX_REASON).decode("utf-8", "replace")


def path_errors(errors: BinaryIO, name: Callable[[str], str | None],
                exists: Callable[[str], bool]) -> Iterator[PathError]:
    """Each line of rg's stderr as the path it names and why; a line naming no path of
    the search raises. `name` maps a path as rg prints it to a workspace-relative one
    (None: not one of the search's); a path can hold ': ', so the first cut that names
    an existing path wins, else the first that names one at all (a file gone since)."""
    errors.seek(0)
    for raw in errors:
        line = raw[:_MAX_LINE].decode("utf-8", "surrogateescape").rstrip("\n")
        if not line:
            continue
        found = _split(line.removeprefix("rg: "), name, exists)
        if found is None:
            raise_failure(line, True)
        else:
            yield found


def _split(text: str, name: Callable[[str], str | None],
           exists: Callable[[str], bool]) -> PathError | None:
    first = None
    at = text.find(": ")
    while at >= 0:
        path = name(text[:at])
        if path is not None:
            candidate = PathError(path, text[at + 2:])
            if exists(path):
                return candidate
            first = first or candidate
        at = text.find(": ", at + 1)
    return first


def unread_directory(path: str, reason: str) -> ToolError:
    """rg could not list a directory beneath the search: its files were never searched."""
    code = "permission_denied" if "os error 13" in reason or "os error 1)" in reason \
        else "internal_error"
    return ToolError(code, f"The search could not read the directory {path} ({reason}), "
                     "so the files in it were not searched. Fix its permissions, or "
                     "narrow the search with path or glob to leave it out.",
                     path=path, reason=reason)


def fallback_note(count: int, named: list[PathError]) -> dict:
    """The reply's `fallback`: how many files the python engine searched instead, the
    first SHOWN_FALLBACKS of them and why."""
    return {"engine": "python", "files": count,
            "paths": [{"path": f.path, "reason": f.reason} for f in named]}
