"""The command line (docs/protocol.md, Starting the server): start-up refusals exit 2 with
one line on stderr, --version and --help, both entry points, and a stdout that carries
protocol messages only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chorus_tools.rpc.cli import parser
from chorus_tools.rpc.options import seconds
from chorus_tools.tools.context import KIB, MIB
from chorus_tools.tools.search.locate import find_ripgrep
from rpc_client import REPO, RpcServer

PYTHON_M = [sys.executable, "-m", "chorus_tools"]
SPEC_OPTIONS = ["--workspace", "--workers", "--search-engine", "--rg", "--version", "--help",
                "--log-level", "--records", "--max-message-bytes", "--max-read-bytes",
                "--max-image-bytes", "--max-write-bytes", "--max-pending",
                "--request-timeout", "--shutdown-timeout"]


def run(argv: list[str], stdin: bytes | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=stdin, capture_output=True, timeout=60, cwd=REPO,
                          **kwargs)


def lines(*messages: object) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def req(rid: int, method: str, **params: object) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


@pytest.fixture
def ws(root: Path) -> Path:
    (root / "a.txt").write_text("alpha\nbeta\n")
    return root


def refused(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, result
    assert result.stdout == b""
    [line] = result.stderr.decode().splitlines()
    for word in words:
        assert word in line


def test_missing_workspace_exits_2_with_one_line(tmp_path: Path) -> None:
    refused(run([*PYTHON_M, "--workspace", str(tmp_path / "nope")]), "nope", "--workspace")


def test_workspace_that_is_a_file_exits_2_with_one_line(ws: Path) -> None:
    refused(run([*PYTHON_M, "--workspace", str(ws / "a.txt")]), "a.txt", "directory")


def test_no_workspace_option_exits_2(tmp_path: Path) -> None:
    result = run(PYTHON_M)
    assert result.returncode == 2 and "--workspace" in result.stderr.decode()


@pytest.mark.parametrize("where", [".", "audit", "a/b/c"])
def test_records_inside_the_workspace_exits_2(ws: Path, where: str) -> None:
    refused(run([*PYTHON_M, "--workspace", str(ws), "--records", str(ws / where)]),
            "--records")


def test_records_inside_through_a_symlink_exits_2(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(ws)
    refused(run([*PYTHON_M, "--workspace", str(ws), "--records",
                 str(tmp_path / "alias" / "audit")]), "--records")


@pytest.mark.parametrize("option", [["--workers", "0"], ["--search-engine", "grep"],
                                    ["--max-pending", "-1"], ["--request-timeout", "0"],
                                    ["--log-level", "loud"]])
def test_bad_option_values_exit_2(ws: Path, option: list[str]) -> None:
    result = run([*PYTHON_M, "--workspace", str(ws), *option])
    assert result.returncode == 2 and result.stdout == b""
    assert option[0] in result.stderr.decode()


@pytest.mark.parametrize("option", ["--records", "--history", "--state", "--index-cache",
                                    "--rg", "--oxlint", "--http-token-file"])
def test_an_empty_path_option_exits_2_not_read_as_left_out(ws: Path, option: str) -> None:
    """`--records ''` (a template's unset variable) served without audit records and said
    nothing; `--history ''` kept the default history, `--rg ''` found one on PATH."""
    refused(run([*PYTHON_M, "--workspace", str(ws), option, ""], b""), option, "empty path")


@pytest.mark.parametrize("option", ["--records", "--history", "--state", "--index-cache"])
@pytest.mark.parametrize("under", [False, True])
def test_a_directory_option_naming_a_file_exits_2_naming_the_option(
        ws: Path, tmp_path: Path, option: str, under: bool) -> None:
    """Bug: `--records FILE` with FILE an existing file was refused as "FILE: File
    exists", without the option's name, unlike the other directory options."""
    (tmp_path / "a-file").write_bytes(b"")
    given = str(tmp_path / "a-file" / "sub" if under else tmp_path / "a-file")
    result = run([*PYTHON_M, "--workspace", str(ws), "--tools", "native,claude",
                  "--allow-root", option, given], b"")
    refused(result, f"chorus-tools: {option} {given!r}: ",
            "Not a directory" if under else "")


def test_missing_workspace_and_a_file_are_told_apart(ws: Path, tmp_path: Path) -> None:
    """Issue 35: a missing workspace and a file shared one message."""
    missing = run([*PYTHON_M, "--workspace", str(tmp_path / "nope")])
    a_file = run([*PYTHON_M, "--workspace", str(ws / "a.txt")])
    under_a_file = run([*PYTHON_M, "--workspace", str(ws / "a.txt" / "x")])
    refused(missing, "does not exist")
    refused(a_file, "is a file, not a directory")
    refused(under_a_file, "a parent of it is a file")
    assert "is a file" not in missing.stderr.decode()
    assert "does not exist" not in a_file.stderr.decode()


BYTE_OPTIONS = [o for action in parser()._actions for o in action.option_strings
                if o.endswith("-bytes") or o == "--index-memory"]


def test_every_byte_option_takes_units_through_one_parser() -> None:
    """Issue 35: `--index-memory 256M` said `invalid _not_negative value`."""
    assert len(BYTE_OPTIONS) >= 7
    for text, size in [("2K", 2 * KIB), ("256M", 256 * MIB), ("64MiB", 64 * MIB),
                       ("1g", 1024 * MIB), ("5000", 5000), ("3kb", 3 * KIB)]:
        for option in BYTE_OPTIONS:
            args = parser().parse_args(["--workspace", "w", option, text])
            assert getattr(args, option[2:].replace("-", "_")) == size, (option, text)


@pytest.mark.parametrize("option, value, words", [
    ("--index-memory", "256Q", ["argument --index-memory", "256M", "KiB"]),
    ("--history-bytes", "0", ["argument --history-bytes", "at least 1"]),
    ("--max-read-bytes", "-1K", ["argument --max-read-bytes", "'-1K'"]),
    ("--workers", "two", ["argument --workers", "whole number", "'two'"]),
    ("--request-timeout", "soon", ["argument --request-timeout", "seconds", "'soon'"]),
])
def test_a_bad_value_names_its_option_and_what_it_takes(ws: Path, option: str, value: str,
                                                        words: list[str]) -> None:
    result = run([*PYTHON_M, "--workspace", str(ws), f"{option}={value}"])
    assert result.returncode == 2 and result.stdout == b""
    last = result.stderr.decode().splitlines()[-1]
    assert all(word in last for word in words), last
    assert "invalid" not in last  # argparse's "invalid _not_negative value"


def test_a_size_with_a_unit_takes_effect(ws: Path) -> None:
    (ws / "big.txt").write_text("".join(f"{n:>99}\n" for n in range(100)))
    with RpcServer(ws, "--max-read-bytes", "1K", "--workers", "1") as server:
        got = server.result("file.read", {"path": "big.txt"})
    assert got["truncated"] is True and got["end_line"] < 100
    assert len(got["content"].encode()) <= 1024


@pytest.mark.parametrize("argv, meant", [
    (["--workspce", "{ws}"], "--workspace"),
    (["--workspace", "{ws}", "--max-pendng", "3"], "--max-pending"),
    (["--workspace", "{ws}", "--index_memory=1M"], "--index-memory"),
])
def test_a_misspelt_option_is_answered_with_the_one_meant(ws: Path, argv: list[str],
                                                          meant: str) -> None:
    """Issue 35: `--workspce` only said that --workspace is required."""
    result = run([*PYTHON_M, *(a.format(ws=ws) for a in argv)])
    assert result.returncode == 2 and result.stdout == b""
    assert f"did you mean {meant}?" in result.stderr.decode().splitlines()[-1]


def test_help_says_it_speaks_mcp_and_how_sizes_read() -> None:
    """Issue 35: `--help` did not say the server speaks MCP."""
    text = " ".join(run([*PYTHON_M, "--help"]).stdout.decode().split())
    assert "MCP (Model Context Protocol) server" in text
    assert "K, M or G for KiB, MiB, GiB" in text


def test_version() -> None:
    result = run([*PYTHON_M, "--version"])
    assert result.returncode == 0
    assert result.stdout.decode().startswith("chorus-tools ")


def test_help_lists_every_option_of_the_spec() -> None:
    result = run([*PYTHON_M, "--help"])
    assert result.returncode == 0
    text = result.stdout.decode()
    assert [o for o in SPEC_OPTIONS if o not in text] == []


SESSION = lines(
    req(1, "file.read", path="a.txt"),
    req(2, "file.read", path="missing.txt"),
    {"jsonrpc": "2.0", "method": "file.info", "params": {"path": "a.txt"}},
    req(3, "file.write", path="b.txt", content="bravo\n"),
    req(4, "file.search", pattern="alpha"),
    req(5, "file.search", pattern="(?<=al)pha"),
    req(6, "file.list"),
    req(7, "nope"),
) + b'{"broken\n'


def check_session(result: subprocess.CompletedProcess) -> dict:
    """Every stdout line is a JSON-RPC response; one per request, nothing else."""
    assert result.returncode == 0, result.stderr.decode()
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(r["jsonrpc"] == "2.0" and ("result" in r) != ("error" in r) for r in replies)
    by_id = {r["id"]: r for r in replies}
    assert len(by_id) == len(replies) == 8
    assert by_id[1]["result"]["content"] == "     1\talpha\n     2\tbeta"
    assert by_id[2]["error"]["data"]["error"] == "file_not_found"
    assert by_id[4]["result"]["matches"][0]["path"] == "a.txt"
    assert by_id[5]["result"]["matches"][0]["line"] == 1
    assert by_id[7]["error"]["code"] == -32601
    assert by_id[None]["error"]["code"] == -32700
    return by_id


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_stdout_carries_protocol_messages_only_even_at_debug(ws: Path, engine: str) -> None:
    result = run([*PYTHON_M, "--workspace", str(ws), "--workers", "2", "--log-level", "debug",
                  "--search-engine", engine], SESSION)
    by_id = check_session(result)
    assert by_id[4]["result"]["engine"] == engine
    assert b"DEBUG" in result.stderr
    assert (ws / "b.txt").read_text() == "bravo\n"


def test_rg_beside_the_python_engine_is_no_refusal(ws: Path) -> None:
    """`--rg PATH --search-engine python` exited 2 saying "no usable ripgrep binary (PATH)"
    of a ripgrep that works: the engine asked for does not run it, so the server serves."""
    rg = find_ripgrep(None)[0]
    assert rg is not None, "ripgrep is a dependency of the package"
    by_id = check_session(run([*PYTHON_M, "--workspace", str(ws), "--workers", "2",
                               "--rg", rg, "--search-engine", "python"], SESSION))
    assert by_id[4]["result"]["engine"] == "python"


def test_console_script_runs_the_server(ws: Path) -> None:
    beside = Path(sys.executable).with_name("chorus-tools")  # a venv not on PATH
    script = str(beside) if beside.exists() else shutil.which("chorus-tools")
    assert script, "the chorus-tools console script is not installed (pip install -e .)"
    assert run([script, "--version"]).stdout == run([*PYTHON_M, "--version"]).stdout
    check_session(run([script, "--workspace", str(ws), "--workers", "2"], SESSION))


def test_python_m_rpc_serves_in_a_source_checkout(ws: Path) -> None:
    """docs/protocol.md (Starting the server) names `python -m rpc`: from the repository's
    root the source folder serves the same server as the installed package."""
    check_session(run([sys.executable, "-m", "rpc", "--workspace", str(ws), "--workers", "2"],
                      SESSION))


def test_stdin_and_stdout_may_be_regular_files(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(SESSION)
    with open(tmp_path / "in.jsonl", "rb") as stdin, open(tmp_path / "out", "wb") as out:
        code = subprocess.run([*PYTHON_M, "--workspace", str(ws), "--workers", "2"],
                              stdin=stdin, stdout=out, stderr=subprocess.PIPE, cwd=REPO,
                              timeout=60).returncode
    check_session(subprocess.CompletedProcess([], code, (tmp_path / "out").read_bytes(), b""))


def test_stdin_from_dev_null_is_an_empty_session_and_exits_0(ws: Path) -> None:
    """Regression: /dev/null cannot be polled, so the server hung after an asyncio
    traceback instead of seeing the end of its input."""
    with open(os.devnull, "rb") as stdin, open(os.devnull, "wb") as out:
        result = subprocess.run([*PYTHON_M, "--workspace", str(ws), "--workers", "1"],
                                stdin=stdin, stdout=out, stderr=subprocess.PIPE, cwd=REPO,
                                timeout=60)
    assert result.returncode == 0 and b"Traceback" not in result.stderr


def test_last_line_without_a_newline_is_answered(ws: Path) -> None:
    result = run([*PYTHON_M, "--workspace", str(ws), "--workers", "1"],
                 json.dumps(req(1, "file.info", path="a.txt")).encode())
    assert result.returncode == 0
    assert json.loads(result.stdout)["result"]["size"] == 11


@pytest.mark.parametrize("sets, names", [
    ("claude,shadow", ["Read", "Write", "Edit", "Glob", "Grep"]),
    ("shadow,native,claude", ["Read", "Edit"]),
])
def test_clashing_tool_sets_exit_2_with_one_line(ws: Path, sets: str, names: list[str]) -> None:
    refused(run([*PYTHON_M, "--workspace", str(ws), "--tools", sets]), "--tools", "claude",
            "shadow", *names)


@pytest.mark.parametrize("sets, present, absent", [
    ("native", ["file.read"], ["Read", "read_file"]),
    ("claude,scope", ["file.read", "Read", "MultiEdit", "read_file", "get_file_info"],
     ["ListDir"]),
    ("shadow", ["file.search", "Read", "ListDir", "Grep"], ["MultiEdit", "read_file"]),
])
def test_tool_sets_are_served_and_documented_together(ws: Path, sets: str,
                                                      present: list[str],
                                                      absent: list[str]) -> None:
    result = run([*PYTHON_M, "--workspace", str(ws), "--workers", "1", "--tools", sets],
                 stdin=lines(req(1, "rpc.discover"),
                             *(req(i, name) for i, name in enumerate(present + absent, 2))))
    assert result.returncode == 0, result.stderr
    replies = {r["id"]: r for r in map(json.loads, result.stdout.splitlines())}
    documented = {m["name"] for m in replies[1]["result"]["methods"]}
    assert set(present) <= documented and not set(absent) & documented
    for i, name in enumerate(present + absent, 2):
        code = replies[i].get("error", {}).get("code")
        assert (code == -32601) == (name in absent), (name, replies[i])


@pytest.mark.parametrize("argv", [["--workspace", "/nonexistent/nope"],
                                  ["--http", "0.0.0.0:0"]])
def test_regression_a_refusal_under_json_logs_is_one_json_object(ws: Path,
                                                                 argv: list[str]) -> None:
    """Regression: under --log-format json, a start-up refusal was the text line alone on
    stderr, so a log pipeline reading one object per line lost the one line that says why
    the server did not start."""
    result = run([*PYTHON_M, "--workspace", str(ws), *argv, "--log-format", "json"])
    assert result.returncode == 2 and result.stdout == b""
    [line] = result.stderr.decode().splitlines()
    entry = json.loads(line)
    assert entry["level"] == "critical" and entry["time"].endswith("Z")
    assert argv[-1] in entry["event"] and argv[0] in entry["event"]


SECONDS_OPTIONS = [o for action in parser()._actions for o in action.option_strings
                   if action.type is seconds]


@pytest.mark.parametrize("value", ["inf", "1e300"])
def test_regression_a_time_option_past_any_clock_exits_2(ws: Path, value: str) -> None:
    """Regression: `inf` (or 1e300) passed for a number of seconds: --shutdown-timeout
    inf made every refusal of the drain raise (Retry-After is whole seconds), so a request
    sent during it never got its answer and HTTP connections were reset;
    --search-file-timeout 1e300 made every python-engine search answer timeout."""
    assert len(SECONDS_OPTIONS) >= 7
    for option in SECONDS_OPTIONS:
        result = run([*PYTHON_M, "--workspace", str(ws), option, value], stdin=b"")
        assert result.returncode == 2 and result.stdout == b"", (option, result)
        last = result.stderr.decode().splitlines()[-1]
        assert f"argument {option}" in last and value in last, last
