"""Flipping workspace directories between a real directory and a symlink to the outside,
as fast as renames go, and checking that no reply shows what lies outside."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from rpc_client import error_code

CANARY = "SECRET-91d0e7-OUTSIDE-CONTENT"
OUTSIDE_NAME = "outside-only-name.txt"  # a name that exists only outside
# what a request may meet while its directory is mid-swap: gone, or a link leading out
EXPECTED_ERRORS = {"path_outside_workspace", "file_not_found", "write_failed"}


class Flipper:
    """Flips each `ws/NAME` between its real directory and a symlink, by renames."""

    def __init__(self, ws: Path, links: dict[str, str]) -> None:
        self.ws = ws
        self.links = links
        self.flips = 0
        self._stop = threading.Event()
        for name, target in links.items():
            os.symlink(target, ws / f".{name}-link")
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for name in self.links:
                live, real, link = (self.ws / name, self.ws / f".{name}-real",
                                    self.ws / f".{name}-link")
                os.rename(live, real)
                os.rename(link, live)
                os.rename(live, link)
                os.rename(real, live)
            self.flips += 1

    def __enter__(self) -> Flipper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def build(tmp: Path) -> tuple[Path, Path]:
    ws, out = tmp / "ws", tmp / "outside"
    out.mkdir()
    (out / "f.txt").write_text(CANARY + "\n")
    (out / OUTSIDE_NAME).write_text(CANARY + "\n")
    ws.mkdir()
    for name in ("d_abs", "d_rel"):
        (ws / name).mkdir()
        (ws / name / "f.txt").write_text("INSIDE\n")
    return ws, out


def requests(n: int) -> list[tuple[str, dict]]:
    calls = []
    for i in range(n):
        d = ("d_abs", "d_rel")[i % 2]
        calls += [
            ("file.read", {"path": f"{d}/f.txt"}),
            ("file.write", {"path": f"{d}/f.txt", "content": f"W{i}\n", "create_dirs": False}),
            ("file.write", {"path": f"{d}/new-{i}.txt", "content": "N\n",
                            "create_dirs": False}),
            ("file.info", {"path": f"{d}/f.txt"}),
            ("file.list", {"path": d}),
            ("file.search", {"pattern": "S.CRET|INSIDE|W[0-9]", "path": d}),
            ("file.list", {"path": d, "pattern": "*.txt"}),
        ]
    return calls


def check_replies(replies: list[dict]) -> dict[str, int]:
    outcomes: dict[str, int] = {}
    for reply in replies:
        text = json.dumps(reply)
        assert CANARY not in text and OUTSIDE_NAME not in text, reply
        code = error_code(reply) or "ok"
        assert code == "ok" or code in EXPECTED_ERRORS, reply
        outcomes[code] = outcomes.get(code, 0) + 1
    return outcomes
