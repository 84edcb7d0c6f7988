"""The files this server landed from uploads (file.upload_commit, whether the parts came
over JSON-RPC or a PUT's body), kept as path → (version, SHA-256) for the last KEEP paths.

An upload begun at a path it knows is handed both, as params the invoker adds once the
client's were checked (no client can send them: the schema refuses them). When the commit
finds the file still at that version, the history and the audit record take that digest
instead of reading the old file again to hash it: a 1 GiB file replaced costs 0.6 s of a
worker otherwise (docs/benchmarks.md, upload_parts). A change by anyone else makes another
version (mtime, size, inode), and the digest is then computed as ever; a same-size
rewrite in place with its mtime put back goes unseen, as it does for `ETag`/`If-Match`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from chorus_tools.tools.bytes.table import LANDED, REPLACED_SHA256, REPLACED_VERSION
from chorus_tools.tools.method import Method

UPLOAD_BEGIN = "file.upload_begin"


class Landed:
    KEEP = 256

    def __init__(self) -> None:
        self._by_path: OrderedDict[str, tuple[str, str]] = OrderedDict()

    def prepare(self, method: Method, params: dict[str, Any],
                paths: dict[str, str]) -> dict[str, Any]:
        """The params an upload's beginning runs with: the digest of what it replaces,
        when this server landed the file there."""
        if method.name != UPLOAD_BEGIN:
            return params
        known = self._by_path.get(paths.get(params["path"], ""))
        if known is None:
            return params
        return {**params, REPLACED_VERSION: known[0], REPLACED_SHA256: known[1]}

    def note(self, audit: dict[str, Any] | None) -> None:
        """What a commit landed (its audit's LANDED: path, version, SHA-256), taken out
        of the audit, which the records write as it is."""
        landed = (audit or {}).pop(LANDED, None)
        if landed is None:
            return
        path, version, sha256 = landed
        self._by_path.pop(path, None)
        self._by_path[path] = version, sha256
        while len(self._by_path) > self.KEEP:
            self._by_path.popitem(last=False)
