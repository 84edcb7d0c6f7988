"""Structured logs on stderr (docs/protocol.md, Running many: Logs).

`--log-format json` writes one object per line: `time`, `level`, `event`, and for a
request `id`, `method`, `path` (path methods), `outcome`, `ms`. What a request line
carries is chosen here and nowhere else: the error's code, never its message (a message
can quote file text, like a find_not_found hint), never params besides the path, never a
header (the token)."""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

from chorus_tools.tools.encoded import any_json

REQUEST_FIELDS = ("id", "method", "path", "outcome", "ms")
requests_log = logging.getLogger("chorus.requests")
address_log = logging.getLogger("chorus.address")  # said whatever --log-level is
start_log = logging.getLogger("chorus.cli")


class JsonFormatter(logging.Formatter):
    """One JSON object a record; a request's fields come from the record's `request`."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "event": record.getMessage(),
            "logger": record.name,
        }
        fields = getattr(record, "request", None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return _json(line)


class TextFormatter(logging.Formatter):
    """The default prose lines, with a request's fields as key=value after the event."""

    def __init__(self) -> None:
        super().__init__("chorus-tools %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        fields = getattr(record, "request", None)
        if isinstance(fields, dict):
            text += "".join(f" {k}={_json(v)}" for k, v in fields.items())
        return text


def _json(value: Any) -> str:
    """`value` as JSON on one line, whatever a client sent (an id past 64 bits, a lone
    surrogate in its id or path: tools/encoded.py any_json)."""
    return any_json(value, default=str).decode()


def configure(level: str, log_format: str, log_requests: bool) -> None:
    """Set up the root logger on stderr; with `log_requests` every request is logged at
    info level, whatever --log-level says of the other loggers."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    requests_log.setLevel(logging.INFO if log_requests else logging.WARNING)
    address_log.setLevel(logging.INFO)


def refusal(message: str) -> None:
    """The one line a start-up refusal (exit 2) writes on stderr: `chorus-tools: ...`, or
    under --log-format json an object like every other line, so a pipeline reading one
    object per line keeps the reason the server did not start."""
    if any(isinstance(h.formatter, JsonFormatter) for h in logging.getLogger().handlers):
        start_log.critical(message)
    else:
        print(f"chorus-tools: {message}", file=sys.stderr)


def serving(address: str) -> None:
    """The one line a launcher reads to learn the port (--http 127.0.0.1:0), in the log's
    own format: under --log-format json an object like every other line, its event the
    same words, so a pattern for the address finds it in either."""
    address_log.info("serving HTTP on http://%s/mcp (MCP) and http://%s/rpc (JSON-RPC)",
                     address, address)


def log_request(rid: Any, method: str, path: Any, outcome: str, ms: float) -> None:
    """One request line (only when --log-requests asked for it: the caller checks
    `requests_log.isEnabledFor(INFO)` first, so the hot path pays one call without it)."""
    fields: dict[str, Any] = {"id": rid, "method": method}
    if isinstance(path, str):
        fields["path"] = path
    fields["outcome"] = outcome
    fields["ms"] = round(ms, 3)
    requests_log.info("request", extra={"request": fields})
