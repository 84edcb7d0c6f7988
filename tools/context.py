"""What every tool call gets besides its params: the workspace, the limits, the engines.

One ToolContext lives in each worker for its whole life; `record` is the only per-call
slot: when audit records are on, the worker sets it to a fresh dict and mutating tools fill
it (see `note_hashes`), so the hashes come from inside the tool's critical section.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chorus_tools.tools.read.count_cache import CountCache
from chorus_tools.tools.confine.sandbox import Workspace

if TYPE_CHECKING:
    from chorus_tools.tools.patch.oxlint import Oxlint
    from chorus_tools.tools.walk.source import DirSource
    from chorus_tools.tools.warm.record_cache import RecordCache

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True)
class Limits:
    """Every limit docs/protocol.md names (Starting the server), with its default; each
    is also a command-line option."""

    max_read_bytes: int = 256 * KIB
    max_image_bytes: int = 10 * MIB
    max_write_bytes: int = 64 * MIB
    max_line_chars: int = 2000
    max_diff_bytes: int = 64 * KIB
    search_file_timeout: float = 1.0
    # the syntax guard's and diagnostics' parse (tools/code/bounds.py)
    syntax_max_bytes: int = 4 * MIB
    syntax_timeout: float = 5.0
    # bytes in and out (tools/bytes/): one read_bytes range or upload part at most, and
    # how long an upload may sit untouched before its spool is removed
    max_chunk_bytes: int = 16 * MIB
    upload_timeout: float = 600.0
    # archives in (tools/bytes/archive_in.py): the most entries, and the most bytes they
    # expand to, before an archive is refused whole
    max_archive_entries: int = 1_000_000
    max_archive_bytes: int = 4 * 1024 * MIB


@dataclass
class ToolContext:
    ws: Workspace
    limits: Limits = field(default_factory=Limits)
    search_engine: str = "auto"  # auto | ripgrep | python
    rg_path: str | None = None  # resolved ripgrep binary, None when there is none
    rg_has_pcre2: bool = False
    workers: int = 1  # the pool's size: how many parts a FanOut should make for it
    read_only: bool = False  # --read-only: every mutating method is refused
    syntax_gate: str = "loose"  # --syntax-gate: loose | all | off (tools/code/diagnostics.py)
    problems_gate: str = "off"  # --problems-gate: off | introduced (tools/patch/problems.py)
    problems: bool = True  # --problems on|off: off checks syntax only (problems_checked false)
    line_counts: CountCache = field(default_factory=CountCache)  # made before the fork:
    # shared by every worker
    record: dict[str, Any] | None = None
    auditing: bool = True  # the call's audit record wants hashes (False: history only)
    # history on (docs/protocol.md, History): the spool descriptors the dispatcher opened
    # before the fork (tools/mutate/keep.py); None when --history 0
    history_spools: tuple[int, ...] | None = None
    history_budget: int | None = None  # --history-bytes: larger content is only hashed
    history_full: str = "refuse"  # --history-full: refuse | write (tools/mutate/reserve.py)
    keeping_paused: bool = False  # a failed call putting its own changes back keeps nothing
    # the warm tree (tools/warm/): the socket its process answers on, None when it is off
    # (--index-memory 0) and inside that process itself
    warm: str | None = None
    # where the walker reads directories: None is the disk; the warm process's own
    # context reads its tree in memory (tools/walk/source.py)
    source: DirSource | None = None
    # the quota's room for this call (tools/mutate/quota.py: a Room, None when no quota
    # is set) and what the call has added so far (bytes, files, lasting: quota.charge)
    room: Any = None
    grown: tuple[int, int, int] = (0, 0, 0)
    # JavaScript and TypeScript problems (tools/patch/oxlint.py): the binary and its
    # private directory, made at start; None when none was found (problems_checked false)
    oxlint: Oxlint | None = None
    # --index-cache: the symbol index's records on disk (tools/warm/record_cache.py), read
    # and written by the warm process and its helpers alone; None when it is off
    index_cache: RecordCache | None = None


# the audit key of a change of many files recorded one line per file (an archive import):
# [path, bytes, sha256_before, sha256_after] each (rpc/dispatch/records.py)
EACH_FILE = "each_file"


def sha256_hex(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def note_hashes(ctx: ToolContext, *, before: bytes | None = None,
                after: bytes | None = None, nbytes: int | None = None,
                before_known: bool = False, after_known: bool = False,
                after_sha256: str | None = None, before_sha256: str | None = None) -> None:
    """Fill the audit slot (a no-op unless records are on). `*_known` says the bytes
    were looked at, so None means 'no file' rather than 'not looked'; `after_sha256`
    gives the new content's digest where its bytes were never in memory (a spool), and
    `before_sha256` the old content's where its digest was known without reading it."""
    rec = ctx.record
    if rec is None or not ctx.auditing:
        return
    if before_sha256 is not None:
        rec["sha256_before"] = before_sha256
    elif before is not None or before_known:
        rec["sha256_before"] = sha256_hex(before)
    if after_sha256 is not None:
        rec["sha256_after"] = after_sha256
    elif after is not None or after_known:
        rec["sha256_after"] = sha256_hex(after)
    if nbytes is not None:
        rec["bytes"] = nbytes
