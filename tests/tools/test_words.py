"""A tool set's words (tools/errors.in_words): the core's names in an error become the
tool's own, in its message, `data.param` and `data.reason`, never inside a path or in
the file's text the error quotes; and every word a table gives is a name its tool has."""

from __future__ import annotations

import pickle
import re
from typing import Any

from chorus_tools.rpc.wire.errors import wire_error
from chorus_tools.tools.errors import ToolError, in_words
from chorus_tools.tools.registry import ALL_METHODS

EDIT = {"patches[{i}].find": "edits[{i}].old_string", "patches[{i}]": "edits[{i}]",
        "'path'": "'file_path'", "file.patch": "MultiEdit"}


def test_names_become_the_tools_own_in_message_param_and_reason() -> None:
    err = ToolError("find_not_found", "patches[1].find was not found in a.py by file.patch.",
                    quote="text with patches[1].find and 'path' in it",
                    param="patches[1].find", reason="patches[1].find line 2 is indented")
    said = in_words(err, EDIT)
    assert said.message == "edits[1].old_string was not found in a.py by MultiEdit."
    assert said.details["param"] == "edits[1].old_string"
    assert said.details["reason"] == "edits[1].old_string line 2 is indented"
    assert said.quote == err.quote  # the file's own text, as it is
    assert said.text == f"{said.message}\n{err.quote}"


def test_a_quoted_name_renames_the_param_it_names() -> None:
    said = in_words(ToolError("invalid_params", "'path' must not be empty", param="path"),
                    EDIT)
    assert (said.message, said.details["param"]) == ("'file_path' must not be empty",
                                                     "file_path")


def test_a_name_inside_a_path_or_a_longer_name_stays() -> None:
    message = ("File not found: src/file.patch.py, docs/file.patch and my-file.patch; "
               "patches[0].finder, patches[0].find_all")
    assert in_words(ToolError("file_not_found", message), EDIT).message == message


def test_an_adapters_own_words_are_left_alone() -> None:
    err = ToolError("find_not_found", "old_str `file.patch` did not appear verbatim",
                    own_words=True, param="'path'")
    said = in_words(err, EDIT)
    assert said.message == err.message and said.own_words


def test_the_quote_and_own_words_cross_the_worker_pipe() -> None:
    err = ToolError("find_not_found", "m:", quote="q", own_words=True, hint={"a": 1})
    back = pickle.loads(pickle.dumps(err))
    assert (back.message, back.quote, back.own_words, back.details) == (
        "m:", "q", True, {"hint": {"a": 1}})
    wire = wire_error(back)
    assert wire["message"] == wire["data"]["message"] == "m:\nq"


def _names(method: Any) -> set[str]:
    """What a tool of `method`'s set may name: its parameters (and their items'), its set's
    tools, the values of its `command`."""
    names: set[str] = set()
    stack = [method.params]
    while stack:
        schema = stack.pop()
        for name, prop in schema.get("properties", {}).items():
            names.add(name)
            names.update(v for v in prop.get("enum", []) if isinstance(v, str))
            stack.append(prop)
        if isinstance(schema.get("items"), dict):
            stack.append(schema["items"])
    names.update(m.name for m in ALL_METHODS if m.toolset == method.toolset)
    return names


def test_every_word_a_table_gives_is_a_name_its_tool_has() -> None:
    worded = [m for m in ALL_METHODS if m.words]
    assert {m.toolset for m in worded} == {"claude", "scope", "shadow", "codex", "anthropic",
                                           "gemini"}
    wrong = []
    for method in worded:
        names = _names(method)
        for core, own in method.words.items():
            if " " in own.strip("'"):
                continue  # a phrase (`regex: false`, `escape its special characters`)
            tokens = set(re.findall(r"[A-Za-z_]\w*", own)) - {"i", "the", "edit"}
            wrong += [(method.name, core, own) for t in tokens if t not in names]
    assert wrong == []
