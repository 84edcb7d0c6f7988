"""The `anthropic` tool set (docs/protocol.md, Tool sets): Anthropic's text editor tool as
Claude models were trained on it. `str_replace_based_edit_tool` is text_editor_20250728
(view, create, str_replace, insert); `str_replace_editor` the earlier text_editor_20250124,
with `undo_edit`. Result and error texts are those of Anthropic's reference implementation
(anthropic-quickstarts, computer_use_demo/tools/edit.py), with our hint or lines added where
the reference would leave the model guessing.

Where the reference is unsafe we go beyond it: str_replace runs through the core patch
engine (its three tiers, mapping check and syntax guard) instead of expanding every tab
of the file to spaces; writes are atomic and keep the file's encoding and line endings;
create makes missing parent directories.

undo_edit is handed the content to put back (`UNDO_PARAM`) and puts it back the way
file.restore does (tools/mutate/restore.py). That content comes from the history
(rpc/dispatch/history_undo.py); with `--history 0`, from the session's memory
(rpc/dispatch/undo.py), to which each edit hands back the bytes it replaced (`UNDO_KEY`,
stripped from the result there; with the history on the history keeps them instead).
"""

from __future__ import annotations

from typing import Any

from chorus_tools.tools.confine.sandbox import version_of
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.dialects.anthropic_table import UNDO_KEY, UNDO_PARAM, WORDS
from chorus_tools.tools.dialects.common import then
from chorus_tools.tools.dialects.positional import SNIPPET_LINES, insert_after, numbered
from chorus_tools.tools.errors import ToolError, in_words
from chorus_tools.tools.mutate.keep import keeping
from chorus_tools.tools.mutate.restore import current, restore
from chorus_tools.tools.mutate.write import write
from chorus_tools.tools.patch.explain import closest
from chorus_tools.tools.patch.note import carried, told
from chorus_tools.tools.patch.patch import patched
from chorus_tools.tools.read.read import read
from chorus_tools.tools.read.text import decode
from chorus_tools.tools.walk.fanout import FanOut
from chorus_tools.tools.walk.listing import list_files

COMMAND_PARAMS = {"view": ("view_range", "max_characters"), "create": ("file_text",),
                  "str_replace": ("old_str", "new_str"),
                  "insert": ("insert_line", "insert_text", "new_str"), "undo_edit": ()}
_CLIPPED = ("<response clipped><NOTE>To save on context only part of this file has been "
            "shown to you. View the rest with view_range [{next}, -1], or a narrower "
            "range.</NOTE>")


def text_editor_tool(ctx: ToolContext, command: str, path: str,
                     **params: Any) -> dict[str, Any] | FanOut:
    """str_replace_based_edit_tool (text_editor_20250728)."""
    return _run(ctx, command, path, params)


def str_replace_editor_tool(ctx: ToolContext, command: str, path: str,
                            **params: Any) -> dict[str, Any] | FanOut:
    """str_replace_editor (text_editor_20250124, with undo_edit)."""
    return _run(ctx, command, path, params)


def _run(ctx: ToolContext, command: str, path: str,
         params: dict[str, Any]) -> dict[str, Any] | FanOut:
    undo_to = params.pop(UNDO_PARAM, None)
    for name in params:
        if name not in COMMAND_PARAMS[command]:
            raise ToolError("invalid_params", f"Parameter `{name}` is not used by command: "
                            f"{command} (it takes {_names(COMMAND_PARAMS[command])}).",
                            param=name)
    try:
        if command == "view":
            return _view(ctx, path, params.get("view_range"), params.get("max_characters"))
        if command == "create":
            return _create(ctx, path, _required(params, "file_text", command))
        if command == "str_replace":
            return _str_replace(ctx, path, _required(params, "old_str", command),
                                params.get("new_str") or "")
        if command == "insert":
            return _insert(ctx, path, _required(params, "insert_line", command),
                           _insert_text(params))
        return _undo(ctx, path, undo_to)
    except ToolError as err:
        raise _reference_text(err, command, path, params.get("old_str")) from None


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(f"`{n}`" for n in names) or "no other parameter"


def _required(params: dict[str, Any], name: str, command: str) -> Any:
    if params.get(name) is None:
        raise ToolError("invalid_params", f"Parameter `{name}` is required for command: "
                        f"{command}", param=name)
    return params[name]


def _insert_text(params: dict[str, Any]) -> str:
    """insert's text: `insert_text` (text_editor_20250728) or `new_str` (its earlier
    spelling, and str_replace_editor's); both given must agree."""
    given = {n: params[n] for n in ("insert_text", "new_str") if params.get(n) is not None}
    if len(set(given.values())) > 1:
        raise ToolError("invalid_params", "`insert_text` and `new_str` were both given, with "
                        "different text: give one of them.", param="insert_text")
    if not given:
        raise ToolError("invalid_params", "Parameter `insert_text` (or `new_str`) is "
                        "required for command: insert", param="insert_text")
    return next(iter(given.values()))


def _view(ctx: ToolContext, path: str, view_range: list[int] | None,
          max_characters: int | None) -> dict[str, Any] | FanOut:
    start, end = view_range if view_range is not None else (1, -1)
    if view_range is not None:
        if start < 1:
            raise _bad_range(view_range, f"Its first element `{start}` should be within "
                             "the range of lines of the file")
        if end != -1 and end < start:
            raise _bad_range(view_range, f"Its second element `{end}` should be larger "
                             f"or equal than its first `{start}`")
    try:
        got = read(ctx, path, offset=start, limit=None if end == -1 else end - start + 1)
    except ToolError as err:
        if err.code != "is_directory":
            raise
        if view_range is not None:
            raise ToolError("invalid_params", "The `view_range` parameter is not allowed "
                            "when `path` points to a directory.", param="view_range") from None
        listed = list_files(ctx, path, depth=2, include_ignored=True)
        return then(listed, "chorus_tools.tools.dialects.anthropic:directory_result",
                    rel=ctx.ws.rel(path, allow_empty=True), max_characters=max_characters)
    if "image" in got:
        raise ToolError("binary_file", f"{path} is an image ({got['mime_type']}); the text "
                        "editor views text files only.", path=path,
                        mime_type=got["mime_type"], size=got["size"])
    total = max(got["total_lines"], 1)
    if view_range is not None and start > total:
        raise _bad_range(view_range, f"Its first element `{start}` should be within the "
                         f"range of lines of the file: {[1, total]}")
    if view_range is not None and end > got["total_lines"]:
        raise _bad_range(view_range, f"Its second element `{end}` should be smaller than "
                         f"the number of lines in the file: `{got['total_lines']}`")
    content, clipped_at = _clip(got["content"], got["start_line"], max_characters)
    if clipped_at is None and got["truncated"] and (end == -1 or got["end_line"] < end):
        clipped_at = got["end_line"] + 1  # the read cap cut it
    rel = ctx.ws.rel(path)
    output = f"Here's the result of running `cat -n` on {rel}:\n{content}\n"
    if clipped_at is not None:
        output += _CLIPPED.format(next=clipped_at)
    return {"output": output, "path": rel, "version": got["version"]}


def _bad_range(view_range: list[int], why: str) -> ToolError:
    return ToolError("invalid_params", f"Invalid `view_range`: {view_range}. {why}",
                     param="view_range")


def _clip(content: str, first: int, limit: int | None) -> tuple[str, int | None]:
    """The shown text cut at `limit` characters, and the line to continue from."""
    if limit is None or len(content) <= limit:
        return content, None
    cut = content[:limit]
    return cut, first + cut.count("\n")


def directory_result(listed: dict[str, Any], rel: str,
                     max_characters: int | None) -> dict[str, Any]:
    """A directory's entries two levels deep, hidden ones left out (the reference runs
    `find PATH -maxdepth 2 -not -path '*/.*'`), as workspace-relative paths."""
    lines = "\n".join([rel or ".", *(f["path"] for f in listed["files"])])
    shown, clipped = _clip(lines, 1, max_characters)
    output = (f"Here's the files and directories up to 2 levels deep in {rel}, excluding "
              f"hidden items:\n{shown}\n")
    if clipped is not None or listed["truncated"]:
        output += "[More entries exist: view a subdirectory to see them.]\n"
    return {"output": output, "path": rel}


def _create(ctx: ToolContext, path: str, file_text: str) -> dict[str, Any]:
    got = write(ctx, path, file_text, overwrite=False)
    rel = ctx.ws.rel(path)
    return {"output": told(f"File created successfully at: {rel}", got.get("diagnostics")),
            "path": rel, "version": got["version"], **carried(got),
            **_undo_state(ctx, None, got["version"])}


def _str_replace(ctx: ToolContext, path: str, old_str: str, new_str: str) -> dict[str, Any]:
    if old_str == "":
        raise ToolError("invalid_params", "Parameter `old_str` is empty: give the exact "
                        "text to replace (use `create` for a new file, `insert` to add "
                        "lines).", param="old_str")
    done = patched(ctx, path, [{"find": old_str, "replace": new_str}])
    got = done.result
    line = got["matches"][0]["lines"][0]
    first = max(1, line - SNIPPET_LINES)
    last = line + SNIPPET_LINES + new_str.count("\n")
    snippet = done.window(ctx, first, last - first + 1)["content"]
    rel = ctx.ws.rel(path)
    output = (f"The file {rel} has been edited. Here's the result of running `cat -n` on "
              f"a snippet of {rel}:\n{snippet}\nReview the changes and make sure they are "
              "as expected. Edit the file again if necessary.")
    return {"output": told(output, got.get("diagnostics")), "path": rel,
            "version": got["version"], **carried(got),
            **_undo_state(ctx, done.found, got["version"])}


def _insert(ctx: ToolContext, path: str, line: int, text: str) -> dict[str, Any]:
    done = insert_after(ctx, path, line, text)
    rel = ctx.ws.rel(path)
    output = (f"The file {rel} has been edited. Here's the result of running `cat -n` on "
              f"a snippet of the edited file:\n{done.snippet}\nReview the changes and make "
              "sure they are as expected (correct indentation, no duplicate lines, etc). "
              "Edit the file again if necessary.")
    diagnostics = {} if done.diagnostics is None else {"diagnostics": done.diagnostics}
    return {"output": told(output, done.diagnostics), "path": rel, "version": done.version,
            **diagnostics, **_undo_state(ctx, done.before, done.version)}


def _undo_state(ctx: ToolContext, before: bytes | None, after: str) -> dict[str, Any]:
    """What an edit hands back for the session's undo memory: the bytes it replaced (None:
    it created the file) and the version it left; nothing when the history keeps them."""
    return {} if keeping(ctx) else {UNDO_KEY: {"before": before, "after": after}}


def _undo(ctx: ToolContext, path: str, undo_to: dict[str, Any] | None) -> dict[str, Any]:
    """Put back `undo_to["content"]` (None: remove the file a create made) if the file is
    still at `undo_to["expected_version"]`, the version the last edit (or undo) left."""
    rel = ctx.ws.rel(path)
    if undo_to is None:
        raise ToolError("invalid_params", f"No edit history found for {path}. (undo_edit "
                        "undoes, one at a time, the edits made to it through this server's "
                        "text editor tools.)", param="command", path=path)
    content, expected = undo_to["content"], undo_to["expected_version"]
    if expected is None:  # the last undo removed a created file: none may be there now
        _expect_no_file(ctx, rel, path)
    try:
        got = restore(ctx, path, "", content, undo_to.get("mode"), expected)
    except ToolError as err:
        if err.code != "conflict":
            raise
        raise _changed(path, expected, err.details.get("current_version")) from None
    if content is None:
        output = (f"Last edit to {rel} undone successfully. The file did not exist before "
                  "it, so it has been removed.")
    else:
        shown = numbered(decode(content)[0], ctx)
        output = (f"Last edit to {rel} undone successfully. Here's the result of running "
                  f"`cat -n` on {rel}:\n{shown['content']}\n")
        if shown["truncated"]:
            output += _CLIPPED.format(next=shown["end_line"] + 1)
    return {"output": told(output, got.get("diagnostics")), "path": rel,
            "version": got["version"], **carried(got)}


def _expect_no_file(ctx: ToolContext, rel: str, path: str) -> None:
    st = current(ctx, rel, path)
    if st is not None:
        raise _changed(path, None, version_of(st))


def _changed(path: str, expected: str | None, now: str | None) -> ToolError:
    return ToolError("conflict", f"{path} changed since the last edit made through this "
                     "server, so undo_edit would discard those changes; nothing was "
                     "undone. View the file and edit it instead.", path=path,
                     expected_version=expected, current_version=now)


def _reference_text(err: ToolError, command: str, path: str, old_str: str | None) -> ToolError:
    """A core error in the reference implementation's words (the data unchanged), with
    what the model needs to fix a failed str_replace: the closest text, or the lines."""
    message = {
        "file_not_found": f"The path {path} does not exist. Please provide a valid path.",
        "is_directory": f"The path {path} is a directory and only the `view` command can "
                        "be used on directories",
        "already_exists": f"File already exists at: {path}. Cannot overwrite files using "
                          "command `create`.",
    }.get(err.code)
    if err.code == "find_not_found":
        message = _not_found(in_words(err, WORDS), path, old_str)
    elif err.code == "find_not_unique":
        more = err.details.get("more_lines")
        message = ("No replacement was performed. Multiple occurrences of old_str "
                   f"`{old_str}` in lines {err.details.get('lines')}"
                   + (f" and {more} more" if more else "") + ". Please ensure it is unique")
    if message is None or (err.code == "file_not_found" and command == "create"):
        return err  # create's missing parent and the rest: the core's message says it
    return err.saying(message, own_words=True)


def _not_found(err: ToolError, path: str, old_str: str | None) -> str:
    """The reference's sentence, why the looser tiers refused (data.reason, in this
    set's words), and the closest region (quoted after it, as the core quotes it)."""
    hint = err.details.get("hint")
    why = err.details.get("reason")
    if why and hint:
        why = (f" It matches lines {hint['start_line']}-{hint['end_line']} only when "
               f"indentation is ignored, and no single indentation mapping fits: {why}.")
    where, _ = closest(hint, "old_str", bool(err.details.get("hint_cut")))
    return (f"No replacement was performed, old_str `{old_str}` did not appear verbatim "
            f"in {path}.{why or ''} {where}")
