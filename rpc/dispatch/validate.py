"""Parameter validation from the registry's JSON Schemas, compiled once to plain Python
(fastjsonschema: about a microsecond a call), with messages that name the parameter."""

from __future__ import annotations

from typing import Any, Callable

import fastjsonschema

from chorus_tools.tools.bytes.payload import Decoded, encoded
from chorus_tools.tools.bytes.table import BASE64
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.registry import Method


class ParamsValidator:
    """Each method's schema is compiled on its first call (about 5 ms each): a server
    answers its first request without compiling the schemas of the others."""

    def __init__(self, methods: dict[str, Method]) -> None:
        self._checks: dict[str, Callable[[Any], Any]] = {}
        self._ints: dict[str, tuple[str, ...]] = {
            name: _integers(m) for name, m in methods.items()}

    def check(self, method: Method, params: Any) -> dict[str, Any]:
        """The params as keyword arguments, or invalid_params naming what is wrong."""
        if params is None or params == []:
            params = {}
        if not isinstance(params, dict):
            raise ToolError("invalid_params", f"{method.name} takes its parameters by name: "
                            "send 'params' as an object.", param="params")
        check = self._checks.get(method.name)
        if check is None:
            check = self._checks[method.name] = fastjsonschema.compile(method.params)
        checked = params
        if type(params.get("data")) is Decoded:  # decoded by the wire: rpc/wire/envelope.py
            params, checked = _lifted(method, params)
        try:
            check(checked)
        except fastjsonschema.JsonSchemaValueException as exc:
            raise _explain(method, checked, exc) from None
        ints = self._ints.get(method.name)
        if ints is None:  # a method the server calls of itself (tools/bytes/handoff.py)
            ints = self._ints[method.name] = _integers(method)
        for name in ints:  # JSON's 1.0 is an integer for the schema
            if isinstance(params.get(name), float):
                params = {**params, name: int(params[name])}
        return params


def _lifted(method: Method, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The params with a `data` the wire decoded, and what the schema checks: a string in
    its place (it was one, standard base64). For a method whose `data` is no base64 (none
    now), the string as it came."""
    if method.params["properties"].get("data") != BASE64:
        params = {**params, "data": encoded(params["data"].data)}
        return params, params
    return params, {**params, "data": ""}


def _integers(method: Method) -> tuple[str, ...]:
    return tuple(p for p, s in method.params["properties"].items()
                 if s.get("type") == "integer")


def _explain(method: Method, params: dict[str, Any],
             exc: fastjsonschema.JsonSchemaValueException) -> ToolError:
    """The schema's complaint in the parameter's own terms, at any depth: `path`,
    `patches[0].find`."""
    where: list[str | int] = []
    obj: Any = params  # a dict, or a list below an array
    schema = method.params
    for named in exc.path[1:]:  # the object the complaint is about, and its schema
        step: str | int
        if "items" in schema:  # fastjsonschema names an array index as a string
            step, schema = int(named), schema["items"]
        else:
            step, schema = named, schema["properties"][named]
        obj = obj[step]
        where.append(step)
    if exc.rule == "additionalProperties":
        unknown = sorted(set(obj) - set(schema["properties"]))[0]
        accepted = (f"accepted there: {', '.join(schema['properties'])}"
                    if schema["properties"] else "it takes no parameters: send {}")
        return ToolError("invalid_params", f"Unknown parameter '{_name(where + [unknown])}' "
                         f"for {method.name}; {accepted}.", param=_name(where + [unknown]))
    if exc.rule == "required":
        missing = next(p for p in schema["required"] if p not in obj)
        return ToolError("invalid_params", f"Missing required parameter "
                         f"'{_name(where + [missing])}' for {method.name}.",
                         param=_name(where + [missing]))
    name = _name(where) or "params"
    message = exc.message.replace(exc.name, f"'{name}'", 1) if exc.name else exc.message
    if exc.rule in ("oneOf", "anyOf"):  # fastjsonschema's words name no type
        message = f"'{name}' must be " + " or ".join(map(_kind, schema[exc.rule]))
    if exc.rule == "not":  # its words name only "a disallowed definition"
        message = f"'{name}' must not be {schema['not']['const']!r}: {schema['description']}"
    return ToolError("invalid_params", f"Invalid parameter for {method.name}: {message}.",
                     param=name)


def _name(steps: list[str | int]) -> str:
    """A parameter's path as tools name it too: `patches[0].find`."""
    return "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps).lstrip(".")


def _kind(schema: dict[str, Any]) -> str:
    if schema.get("type") == "array":
        return f"a list of {schema['items']['type']}s"
    if schema.get("type") == "integer":
        return "a non-negative integer" if schema.get("minimum") == 0 else "an integer"
    if schema.get("type") == "string" and "pattern" in schema:
        return "the same as a decimal string"  # shadow's integers-as-strings
    return f"a {schema['type']}"
