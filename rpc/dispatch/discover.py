"""`rpc.discover`: an OpenRPC 1.x document built from the same registry that drives
dispatch and validation, so it cannot drift from what the server does."""

from __future__ import annotations

import inspect
from functools import cache
from typing import Any

from chorus_tools.rpc.wire.errors import CODES
from chorus_tools.tools.registry import Method, callable_methods


def server_version() -> str:
    from importlib import metadata  # 15 ms to import: only --version and rpc.discover pay

    try:
        return metadata.version("chorus-tools")
    except metadata.PackageNotFoundError:
        return "0.0.0+unknown"


def _defaults(method: Method) -> dict[str, Any]:
    """The defaults of a method's optional params, read from its function's signature, so
    the document states what the code does (the tools are imported for this)."""
    if method.func is None:  # answered by the dispatcher: no defaults to read
        return {}
    params = inspect.signature(method.func).parameters.values()
    return {p.name: p.default for p in params
            if p.default is not inspect.Parameter.empty and p.default is not None}


def _with_default(schema: dict[str, Any], default: Any) -> dict[str, Any]:
    return schema if default is None else {**schema, "default": default}


def method_document(m: Method, errors: list[dict[str, Any]]) -> dict[str, Any]:
    """One method as OpenRPC describes it (docs/generate.py documents every set's)."""
    return {
        "name": m.name,
        "summary": m.summary,
        "paramStructure": "by-name",
        "params": [{"name": p, "required": p in m.params["required"],
                    "schema": _with_default(schema, _defaults(m).get(p))}
                   for p, schema in m.params["properties"].items()],
        "result": {"name": "result", "schema": m.reply},
        "errors": errors,
    }


@cache
def openrpc_document(toolsets: tuple[str, ...] = ("native",)) -> dict[str, Any]:
    """The document of the methods callable under `--tools toolsets`."""
    errors = [{"code": code, "message": name, "data": {"error": name}}
              for name, code in CODES.items()]
    methods = [method_document(m, errors) for m in callable_methods(toolsets).values()]
    methods.append({"name": "rpc.discover", "summary": "This document.",
                    "paramStructure": "by-name", "params": [],
                    "result": {"name": "OpenRPC document", "schema": {"type": "object"}}})
    return {
        "openrpc": "1.2.6",
        "info": {"title": "chorus-tools", "version": server_version(),
                 "description": "Sandboxed file tools for agents over JSON-RPC 2.0."},
        "methods": methods,
        "components": {"errors": {name: {"code": code, "message": name}
                                  for name, code in CODES.items()}},
    }
