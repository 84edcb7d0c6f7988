"""Parameter validation from the registry's JSON Schemas, compiled once to plain Python
(fastjsonschema: about a microsecond a call), with messages that name the parameter."""

from __future__ import annotations

from typing import Any, Callable

import fastjsonschema

from tools.errors import ToolError
from tools.registry import Method


class ParamsValidator:
    """Each method's schema is compiled on its first call (about 5 ms each): a server
    answers its first request without compiling the schemas of the others."""

    def __init__(self, methods: dict[str, Method]) -> None:
        self._checks: dict[str, Callable[[Any], Any]] = {}
        self._ints: dict[str, tuple[str, ...]] = {
            name: tuple(p for p, s in m.params["properties"].items()
                        if s.get("type") == "integer")
            for name, m in methods.items()}

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
        try:
            check(params)
        except fastjsonschema.JsonSchemaValueException as exc:
            raise _explain(method, params, exc) from None
        for name in self._ints[method.name]:  # JSON's 1.0 is an integer for the schema
            if isinstance(params.get(name), float):
                params = {**params, name: int(params[name])}
        return params


def _explain(method: Method, params: dict[str, Any],
             exc: fastjsonschema.JsonSchemaValueException) -> ToolError:
    props = method.params["properties"]
    accepted = ", ".join(props)
    if exc.rule == "additionalProperties":
        unknown = sorted(set(params) - set(props))
        return ToolError("invalid_params", f"Unknown parameter '{unknown[0]}' for "
                         f"{method.name}; it accepts: {accepted}.", param=unknown[0])
    if exc.rule == "required" and len(exc.path) == 1:
        missing = [p for p in method.params["required"] if p not in params]
        return ToolError("invalid_params", f"Missing required parameter '{missing[0]}' for "
                         f"{method.name}.", param=missing[0])
    name = ".".join(str(p) for p in exc.path[1:]) or "params"
    message = exc.message.replace(exc.name, f"'{name}'", 1)
    return ToolError("invalid_params", f"Invalid parameter for {method.name}: {message}.",
                     param=name)
