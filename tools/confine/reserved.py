"""The names the runtime reserves (docs/protocol.md, Paths): `.chorus-tmp-` begins every
entry it makes inside the workspace, an atomic write's temp file and an upload's spool
alike. No client path may name one, to read or to change it (a spool holds another
client's bytes, half uploaded); listings, searches, watches and archives hide them."""

from __future__ import annotations

from chorus_tools.tools.errors import ToolError

TEMP_PREFIX = ".chorus-tmp-"


def is_temp_name(name: str) -> bool:
    """True for a name the runtime reserves (and that listings and searches hide)."""
    return name.startswith(TEMP_PREFIX)


def beneath_temp(rel: str) -> bool:
    """True for a path with a reserved name anywhere in it: the runtime's entry, or one
    inside it (an upload spool's `data`)."""
    return TEMP_PREFIX in rel and any(is_temp_name(name) for name in rel.split("/"))


def refuse_reserved(name: str, shown: str, param: str = "path") -> None:
    """invalid_params for a reserved name."""
    if is_temp_name(name):
        raise ToolError("invalid_params", f"File names starting with {TEMP_PREFIX!r} are "
                        f"reserved for the runtime's own files: {shown}. Choose another "
                        "name.", path=shown, param=param)


def refuse_reserved_path(rel: str, shown: str, param: str = "path") -> None:
    """invalid_params for a path with a reserved name anywhere in it."""
    if TEMP_PREFIX in rel:
        for name in rel.split("/"):
            refuse_reserved(name, shown, param)
