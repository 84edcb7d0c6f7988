"""Random outside changes and random queries for the warm/cold race tests: a seeded
generator that creates, rewrites, deletes, renames, re-ignores, moves in and out, and
swaps kinds of entries under one folder of the workspace, as another process would."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any, Callable

from warm_matrix import Call

NAMES = ("a.py", "b.md", "c.txt", ".h.py", "x.log", "k.pem", "d", "d.py", "d-old",
         "e f.md", "ü.txt", "node_modules", ".env")
DIRS = ("p", "q", "d", "deep", ".hid", "node_modules", "build")
WORDS = ("alpha", "beta_gamma", "TODO", "\u212aelvin", "mi\u017f\u017f", "Kelvin", "class Foo:",
         "def bar():", "return 1", "caf\u00e9")
NEEDLES = tuple(f"needle_{k}" for k in range(8))
RULES = ("*.py", "!a.py", "*.md", "d/", "/c.txt", "deep", "!.h.py", "*.log", "q/", "!q/keep")


class Churn:
    """Seeded outside changes under `top`, using `outside` as the far side of moves."""

    def __init__(self, top: Path, outside: Path, rng: random.Random, seed: int = 0) -> None:
        self.top, self.outside, self.rng, self.seed = top, outside, rng, seed
        top.mkdir(parents=True, exist_ok=True)
        outside.mkdir(parents=True, exist_ok=True)
        self.moved = 0
        self.ops: list[Callable[[], str]] = [
            self.create, self.create, self.create, self.create, self.create, self.append,
            self.same_size, self.truncate, self.delete, self.rename, self.rename,
            self.make_tree, self.make_tree, self.remove_tree,
            self.ignore_edit, self.ignore_edit, self.move_out, self.move_in, self.swap_kind,
            self.symlink, self.chmod, self.binary]

    # -- picking ---------------------------------------------------------------------------
    def _entries(self, *, dirs: bool) -> list[Path]:
        found = [self.top] if dirs else []
        for dirpath, dirnames, filenames in os.walk(self.top):
            base = Path(dirpath)
            links = [n for n in dirnames if (base / n).is_symlink()]
            found += [base / n for n in (dirnames if dirs else filenames + links)
                      if not (dirs and n in links)]
        return found

    def _dir(self) -> Path:
        return self.rng.choice(self._entries(dirs=True))

    def _file(self) -> Path | None:
        files = [p for p in self._entries(dirs=False) if not p.is_symlink()]
        return self.rng.choice(files) if files else None

    def _text(self) -> str:
        words = [self.rng.choice(WORDS + NEEDLES) for _ in range(self.rng.randint(1, 12))]
        return "\n".join(" ".join(words[i:i + 3]) for i in range(0, len(words), 3)) + "\n"

    def _rel(self, path: Path) -> str:
        return str(path.relative_to(self.top.parent))

    # -- changes ---------------------------------------------------------------------------
    def step(self) -> str:
        """One random change; what it did, for the failure message."""
        return self.rng.choice(self.ops)()

    @staticmethod
    def _put(path: Path, data: bytes) -> bool:
        """Write a regular file, unless a directory or a link holds the name."""
        if path.is_dir() or path.is_symlink():
            return False
        path.write_bytes(data)
        return True

    def create(self) -> str:
        path = self._dir() / self.rng.choice(NAMES)
        return f"create {self._rel(path)}" if self._put(path, self._text().encode()) else "-"

    def append(self) -> str:
        path = self._file()
        if path is None:
            return self.create()
        with open(path, "a") as handle:
            handle.write(self._text())
        return f"append {self._rel(path)}"

    def same_size(self) -> str:
        """New bytes of the same length, the old mtime put back."""
        path = self._file()
        if path is None:
            return self.create()
        st = path.stat()
        data = bytearray(path.read_bytes())
        for i in range(len(data)):
            if data[i:i + 7] == b"needle_":
                data[i + 7:i + 8] = str(self.rng.randrange(8)).encode()
        path.write_bytes(bytes(data))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        return f"same size {self._rel(path)}"

    def truncate(self) -> str:
        path = self._file()
        if path is None:
            return self.create()
        os.truncate(path, 0)
        return f"truncate {self._rel(path)}"

    def binary(self) -> str:
        path = self._dir() / self.rng.choice(NAMES)
        data = (self._text().encode("utf-16") if self.rng.random() < 0.5
                else self._text().encode() + b"\x00" + self._text().encode())
        return f"binary or utf-16 {self._rel(path)}" if self._put(path, data) else "-"

    def delete(self) -> str:
        path = self._file()
        if path is None:
            return "delete: nothing"
        path.unlink()
        return f"delete {self._rel(path)}"

    def rename(self) -> str:
        source = self.rng.choice(self._entries(dirs=False) + self._entries(dirs=True)[1:]
                                 or [self.top / "none"])
        target = self._dir() / self.rng.choice(NAMES + DIRS)
        if not source.exists() and not source.is_symlink():
            return "rename: nothing"
        try:
            os.rename(source, target)
        except OSError as exc:  # into itself, onto a non-empty directory, file onto dir
            return f"rename {self._rel(source)} -> {self._rel(target)}: {exc.strerror}"
        return f"rename {self._rel(source)} -> {self._rel(target)}"

    def make_tree(self) -> str:
        """A deep tree made at once (mkdir -p and a file at every level), never through a
        symlink: one renamed to a directory's name may lead out (to /etc: issue 36)."""
        base = self._dir()
        names = [self.rng.choice(DIRS) for _ in range(self.rng.randint(2, 5))]
        level = base
        for name in names:
            if (level / name).is_symlink() or not (level / name).is_dir() and (
                    level / name).exists():
                return f"make tree under {self._rel(base)}: stops at {self._rel(level / name)}"
            level = level / name
            level.mkdir(exist_ok=True)
            self._put(level / self.rng.choice(NAMES[:5]), self._text().encode())
        return f"make tree {self._rel(level)}"

    def remove_tree(self) -> str:
        dirs = self._entries(dirs=True)[1:]
        if not dirs:
            return "remove tree: nothing"
        path = self.rng.choice(dirs)
        shutil.rmtree(path)
        return f"remove tree {self._rel(path)}"

    def ignore_edit(self) -> str:
        path = self._dir() / self.rng.choice((".gitignore", ".ignore", ".rgignore"))
        if self.rng.random() < 0.3:
            if path.is_file():
                path.unlink()
                return f"delete rules {self._rel(path)}"
        rules = self.rng.sample(RULES, self.rng.randint(1, 3))
        if not self._put(path, ("\n".join(rules) + "\n").encode()):
            return f"rules {self._rel(path)}: a directory or a link holds the name"
        return f"rules {self._rel(path)}: {rules}"

    def move_out(self) -> str:
        dirs = self._entries(dirs=True)[1:]
        if not dirs:
            return "move out: nothing"
        path = self.rng.choice(dirs)
        self.moved += 1
        os.rename(path, self.outside / f"away{self.moved}")
        return f"move out {self._rel(path)}"

    def move_in(self) -> str:
        """A tree from outside (moved out before, or new) renamed into the workspace."""
        away = sorted(self.outside.glob("away*"))
        if away and self.rng.random() < 0.6:
            source = self.rng.choice(away)
        else:
            self.moved += 1
            source = self.outside / f"new{self.moved}"
            (source / "inner").mkdir(parents=True)
            (source / "in.py").write_text(self._text())
            (source / "inner" / "deep.md").write_text(self._text())
        target = self._dir() / self.rng.choice(DIRS)
        try:
            os.rename(source, target)
        except OSError as exc:
            return f"move in -> {self._rel(target)}: {exc.strerror}"
        return f"move in {source.name} -> {self._rel(target)}"

    def swap_kind(self) -> str:
        """A file replaced by a directory, or a directory by a file."""
        dirs = self._entries(dirs=True)[1:]
        path = self._file()
        if dirs and (path is None or self.rng.random() < 0.5):
            path = self.rng.choice(dirs)
            shutil.rmtree(path)
            path.write_text(self._text())
            return f"dir to file {self._rel(path)}"
        if path is None:
            return "swap: nothing"
        path.unlink()
        path.mkdir()
        (path / "inner.py").write_text(self._text())
        return f"file to dir {self._rel(path)}"

    def symlink(self) -> str:
        base = self._dir()
        link = base / f"ln_{self.rng.choice(NAMES)}"
        targets = [os.path.relpath(p, base) for p in self._entries(dirs=False)[:20]]
        target = self.rng.choice(targets + ["dangling", "../" * 8 + "etc"])
        if link.is_dir() and not link.is_symlink():
            shutil.rmtree(link)
        elif link.exists() or link.is_symlink():
            link.unlink()
        os.symlink(target, link)
        return f"symlink {self._rel(link)} -> {target}"

    def chmod(self) -> str:
        path = self._file()
        if path is None:
            return "chmod: nothing"
        os.chmod(path, self.rng.choice((0o644, 0o600, 0o000, 0o755)))
        return f"chmod {self._rel(path)}"

    # -- queries ---------------------------------------------------------------------------
    def query(self) -> Call:
        """A random list or search, over the churned folder or the whole workspace."""
        rng = self.rng
        folder = self.top.name
        flags: dict[str, Any] = {k: True for k in ("include_hidden", "include_ignored")
                                 if rng.random() < 0.3}
        if rng.random() < 0.1:
            return rng.choice([("Glob", {"pattern": "**/*.py"}), ("LS", {"path": folder}),
                               ("glob", {"pattern": "**/*", "dir_path": folder}),
                               ("grep_search", {"pattern": rng.choice(NEEDLES)})])
        if rng.random() < 0.4:
            params: dict[str, Any] = rng.choice([
                {"path": folder}, {"path": folder, "recursive": True},
                {"pattern": "**/*.py"}, {"pattern": f"{folder}/**"}, {"pattern": "**/d*"},
                {"path": folder, "depth": 2}, {"recursive": True, "sort": "modified"},
                {"path": folder, "recursive": True, "sort": "size", "max_results": 5},
                {"path": f"{folder}/{rng.choice(DIRS)}", "recursive": True}])
            return "file.list", {**params, **flags}
        params = rng.choice([
            {"pattern": rng.choice(NEEDLES)}, {"pattern": "needle_[0-3]"},
            {"pattern": "TODO", "output_mode": "count"},
            {"pattern": "kelvin", "case_sensitive": False},
            {"pattern": rng.choice(NEEDLES), "output_mode": "files_with_matches"},
            {"pattern": rng.choice(WORDS), "literal": True, "path": folder},
            {"pattern": "class \\w+:\\n\\s*def", "multiline": True},
            {"pattern": rng.choice(NEEDLES), "glob": "*.py", "context_lines": 1},
            {"pattern": "MISS", "case_sensitive": False, "max_results": 3},
            {"pattern": rng.choice(NEEDLES), "path": f"{folder}/{rng.choice(DIRS)}"}])
        return "file.search", {**params, **flags}
