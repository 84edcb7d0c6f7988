"""Deterministic benchmark corpora, built once and cached.

Every tree is a pure function of its parameters (seed, file count, generator version), so
two machines benchmark the same bytes. Trees are built in a temporary directory and renamed
into place, so an interrupted or concurrent build never leaves a half tree that looks done.
"""

from __future__ import annotations

import os
import random
import shutil
import sysconfig
import tempfile
from pathlib import Path
from typing import Callable

GENERATOR_VERSION = 1
TREE_VERSION = 2  # 2: RARE_IDENT added (the selective search of the warm scale series)
MIB = 1 << 20
# An identifier in one file in RARE_EVERY (0.5 %), with trigrams (quo, okk, kka) no other
# generated text has: what a selective search looks for, and what an index can narrow.
RARE_IDENT = "quokka_vortex"
RARE_EVERY = 200

_WORDS = ("request response worker buffer offset limit handle config parser token "
          "record window stream cache index value result error state entry path "
          "client server socket queue batch frame match pattern engine module").split()
_TYPES = ("int", "str", "bytes", "float", "bool", "list[str]", "dict[str, int]")

# extension, share of the tree (the remainder is .py)
_MIX = ((".md", 0.10), (".ts", 0.20), (".json", 0.08), (".rs", 0.10), (".txt", 0.05))


def _ident(rng: random.Random) -> str:
    return "_".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))


def _py(rng: random.Random, lines: int) -> str:
    out = [f'"""{_ident(rng)}: generated module."""', "", "import os", "import re", ""]
    while len(out) < lines:
        name = _ident(rng)
        out.append(f"def {name}({_ident(rng)}: {rng.choice(_TYPES)}) -> {rng.choice(_TYPES)}:")
        for _ in range(rng.randint(2, 8)):
            out.append(f"    {_ident(rng)} = {_ident(rng)}({rng.randint(0, 9999)})")
        if rng.random() < 0.2:
            out.append("    # TODO: handle the empty case")
        if rng.random() < 0.3:
            out.append(f"    raise ValueError(\"bad {rng.choice(_WORDS)}\")")
        out.append(f"    return {_ident(rng)}")
        out.append("")
    return "\n".join(out) + "\n"


def _ts(rng: random.Random, lines: int) -> str:
    out = [f"import {{ {_ident(rng)} }} from './{rng.choice(_WORDS)}';", ""]
    while len(out) < lines:
        out.append(f"export function {_ident(rng)}(x: number): string {{")
        for _ in range(rng.randint(2, 6)):
            out.append(f"  const {_ident(rng)} = x * {rng.randint(1, 99)};")
        out.append(f"  return `{rng.choice(_WORDS)}-${{x}}`;")
        out.append("}")
        out.append("")
    return "\n".join(out) + "\n"


def _rs(rng: random.Random, lines: int) -> str:
    out = ["use std::io;", ""]
    while len(out) < lines:
        out.append(f"pub fn {_ident(rng)}(n: usize) -> io::Result<usize> {{")
        for _ in range(rng.randint(2, 6)):
            out.append(f"    let {_ident(rng)} = n + {rng.randint(0, 999)};")
        out.append("    Ok(n)")
        out.append("}")
        out.append("")
    return "\n".join(out) + "\n"


def _md(rng: random.Random, lines: int) -> str:
    out = [f"# {rng.choice(_WORDS).title()} {rng.choice(_WORDS)}", ""]
    while len(out) < lines:
        out.append(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 14))) + ".")
        if rng.random() < 0.15:
            out.extend(["", f"## {rng.choice(_WORDS).title()}", ""])
    return "\n".join(out) + "\n"


def _json(rng: random.Random, lines: int) -> str:
    items = [f'  "{_ident(rng)}": {rng.randint(0, 10**6)}' for _ in range(max(1, lines - 2))]
    return "{\n" + ",\n".join(items) + "\n}\n"


def _txt(rng: random.Random, lines: int) -> str:
    return "".join(f"{i} {rng.choice(_WORDS)} {rng.random():.6f}\n" for i in range(lines))


_WRITERS: dict[str, Callable[[random.Random, int], str]] = {
    ".py": _py, ".ts": _ts, ".rs": _rs, ".md": _md, ".json": _json, ".txt": _txt}


def _extension(rng: random.Random) -> str:
    roll = rng.random()
    for ext, share in _MIX:
        if roll < share:
            return ext
        roll -= share
    return ".py"


def _write_files(root: Path, rng: random.Random, count: int, prefix: str) -> None:
    """`count` source-like files, about 20 per directory, three levels deep."""
    for i in range(count):
        folder = root / prefix / f"pkg{i // 400:03d}" / f"mod{(i // 20) % 20:02d}"
        if i % 20 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        ext = _extension(rng)
        text = _WRITERS[ext](rng, rng.randint(10, 120))
        if i % RARE_EVERY == RARE_EVERY // 2:  # by index: the seeded content stays the same
            text += f"# {RARE_IDENT}: {i}\n"
        (folder / f"{_ident(rng)}_{i}{ext}").write_text(text)


def _write_big(path: Path, rng: random.Random, size: int) -> None:
    """A source-like file of exactly `size` bytes (cut at the end of a line)."""
    block = _py(rng, 20000).encode()
    with open(path, "wb") as out:
        written = 0
        while written + len(block) <= size:
            out.write(block)
            written += len(block)
        tail = block[: size - written]
        out.write(tail[: tail.rfind(b"\n") + 1] if b"\n" in tail else b"")


def _build(final: Path, fill: Callable[[Path], None]) -> Path:
    """Build into a sibling temp dir, then rename: a tree that exists is complete."""
    if final.is_dir():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        fill(tmp)
        os.rename(tmp, final)
    except OSError:
        if not final.is_dir():
            raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return final


def source_tree(cache: Path, files: int = 20000, seed: int = 5,
                big_file_bytes: int = 10 * MIB) -> Path:
    """The seeded workspace: `files` source-like files under src/, a .gitignored
    node_modules/ of a quarter as many, a hidden folder, and one `big_file_bytes` file
    (none when 0: the scale trees differ only in their file count). One file in
    RARE_EVERY holds RARE_IDENT."""
    name = f"tree-v{TREE_VERSION}-s{seed}-n{files}-b{big_file_bytes}"

    def fill(root: Path) -> None:
        rng = random.Random(seed)
        (root / ".gitignore").write_text("node_modules/\n*.log\nbuild/\n")
        _write_files(root, rng, files, "src")
        _write_files(root, rng, max(1, files // 4), "node_modules")
        _write_files(root, rng, max(1, files // 100), ".hidden")
        if big_file_bytes:
            (root / "data").mkdir()
            _write_big(root / "data" / "big_module.py", rng, big_file_bytes)

    return _build(cache / name, fill)


def huge_file(cache: Path, size: int) -> Path:
    """A workspace holding one text file of about `size` bytes made of real lines (not
    sparse: NUL bytes would make it binary), written by repeating a block of lines."""
    name = f"huge-v{GENERATOR_VERSION}-{size}"

    def fill(root: Path) -> None:
        line = b"%08d the quick brown fox jumps over the lazy dog, again and again\n"
        block = b"".join(line % i for i in range(MIB // len(line % 0)))
        with open(root / "huge.txt", "wb") as out:
            for _ in range(max(1, size // len(block))):
                out.write(block)

    return _build(cache / name, fill)


_STDLIB_SKIP = {"site-packages", "__pycache__", "lib-dynload", "dist-packages"}


def stdlib_tree(cache: Path, top_level_only: bool = False) -> Path:
    """A copy of this Python's standard library source (a real corpus found offline on
    every machine), without site-packages, bytecode and build products."""
    src = Path(sysconfig.get_paths()["stdlib"])
    name = f"stdlib-{sysconfig.get_python_version()}{'-top' if top_level_only else ''}"

    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in _STDLIB_SKIP or n.startswith("config-")
                or (top_level_only and os.path.isdir(os.path.join(folder, n)))}

    def fill(root: Path) -> None:
        shutil.copytree(src, root / "Lib", ignore=ignore, symlinks=True)

    return _build(cache / name, fill)
