"""The bytes methods' registry entries (docs/protocol.md, Bytes in and out): for
orchestrators, over plain JSON-RPC and HTTP whatever --tools says, never MCP tools (a model
has no use for base64 parts)."""

from __future__ import annotations

from chorus_tools.tools.method import (NON_NEGATIVE, PATH, POSITIVE, VERSION, WRITE_RESULT,
                                      Method, obj)

BASE64 = {"type": "string", "description": "Standard base64 (RFC 4648, padded)"}
SHA256 = {"type": "string", "description": "SHA-256 of the whole content, as hex"}
UPLOAD_ID = {"type": "string", "description": "What file.upload_begin returned"}
_TARGET = "chorus_tools.tools.bytes."
# what the invoker adds to an upload's beginning, and learns from its commit's audit, so
# a file it landed is not hashed again when an upload replaces it (rpc/dispatch/landed.py)
REPLACED_VERSION, REPLACED_SHA256, LANDED = "replaced_version", "replaced_sha256", "landed"

METHODS = [
    Method(
        "file.read_bytes", _TARGET + "ranges:read_bytes",
        "Read a byte range of any regular file, as base64.",
        obj(["path"], path=PATH, offset=NON_NEGATIVE, length=POSITIVE),
        obj(["data", "offset", "length", "size", "eof", "version"], data=BASE64,
            offset=NON_NEGATIVE, length=NON_NEGATIVE, size=NON_NEGATIVE,
            eof={"type": "boolean"}, version=VERSION),
        stoppable=True, idempotent=True, mcp_tool=False, title="Read bytes"),
    Method(
        "file.write_bytes", _TARGET + "write:write_bytes",
        "Create or replace a file atomically with bytes given as base64.",
        obj(["path", "data"], path=PATH, data=BASE64, create_dirs={"type": "boolean"},
            overwrite={"type": "boolean"}, expected_version=VERSION, sha256=SHA256),
        WRITE_RESULT, mutating=True, destructive=True, idempotent=True, mcp_tool=False,
        title="Write bytes"),
    Method(
        "file.upload_begin", _TARGET + "uploads:upload_begin",
        "Begin uploading a file in parts; it appears whole at file.upload_commit.",
        obj(["path"], path=PATH, size=NON_NEGATIVE, sha256=SHA256,
            overwrite={"type": "boolean"}, expected_version=VERSION),
        obj(["upload_id"], upload_id=UPLOAD_ID), mutating=True, mcp_tool=False,
        title="Begin upload"),
    Method(
        "file.upload_part", _TARGET + "uploads:upload_part",
        "Send one part of an upload (any order; a part may be resent with the same bytes).",
        obj(["upload_id", "offset", "data"], upload_id=UPLOAD_ID, offset=NON_NEGATIVE,
            data=BASE64),
        obj(["received"], received=NON_NEGATIVE), mutating=True, idempotent=True,
        path_params=(), mcp_tool=False, title="Upload part"),
    Method(
        "file.upload_commit", _TARGET + "uploads:upload_commit",
        "Check an upload's size and SHA-256 and put the file in place whole, atomically.",
        obj(["upload_id"], upload_id=UPLOAD_ID), WRITE_RESULT, mutating=True,
        destructive=True, path_params=(), mcp_tool=False, title="Commit upload"),
    Method(
        "file.upload_abort", _TARGET + "uploads:upload_abort",
        "Drop an upload and the parts it received.",
        obj(["upload_id"], upload_id=UPLOAD_ID), obj(["success"], success={"type": "boolean"}),
        mutating=True, path_params=(), mcp_tool=False, title="Abort upload"),
]

ARCHIVE_FORMAT = {"type": "string", "enum": ["tar", "tar.gz"]}
CURSOR = {"type": ["string", "null"],
          "description": "Where the next chunk starts: the previous reply's, unchanged"}
METHODS += [
    Method(
        "archive.export", _TARGET + "archive_out:export",
        "Take a directory out as a tar or tar.gz stream, one chunk per call.",
        obj([], path=PATH, format=ARCHIVE_FORMAT, include_ignored={"type": "boolean"},
            cursor=CURSOR),
        obj(["data", "cursor"], data=BASE64, cursor=CURSOR),
        stoppable=True, idempotent=True, mcp_tool=False, title="Export archive"),
    Method(
        "archive.import_begin", _TARGET + "archive_in:import_begin",
        "Begin putting a tar or tar.gz into a directory; send it with file.upload_part.",
        obj(["path"], path=PATH), obj(["upload_id"], upload_id=UPLOAD_ID), mutating=True,
        mcp_tool=False, title="Begin archive import"),
    Method(
        "archive.import_commit", _TARGET + "archive_in:import_commit",
        "Validate the whole archive sent, then extract it, every file atomically.",
        obj(["upload_id"], upload_id=UPLOAD_ID),
        obj(["created", "replaced", "bytes"], created=NON_NEGATIVE, replaced=NON_NEGATIVE,
            bytes=NON_NEGATIVE),
        mutating=True, destructive=True, path_params=(), mcp_tool=False,
        title="Extract archive", recover=_TARGET + "archive_in:recover"),
]

# no client's method: the server's own timer calls it (rpc/dispatch/upload_expiry.py)
EXPIRE_IDLE = Method(
    "file.upload_expire", _TARGET + "spool:expire_idle",
    "Remove every upload untouched for --upload-timeout (the server's own timer).",
    obj([]), obj(["removed"], removed=NON_NEGATIVE), mutating=True, path_params=(),
    mcp_tool=False, audited=False)
