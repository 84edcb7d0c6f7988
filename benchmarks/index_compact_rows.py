"""What the symbol index costs a file (issue 45): at 200k generated files it must fit the
room --index-memory 1 GiB leaves beside the tree and the content index (~560 MiB), so
~2.5 KiB a file at most, identifier uses included. Measured on the 20k-file tree in a
process of its own: the index built there (no helpers: every record made and kept in that
process, freed memory given back as the warm process does), its resident memory before
and after over the code files parsed; the second half's figure is what each further file
adds once the vocabulary has stopped growing (what 200k files cost a file).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.env import REPO, Env
from benchmarks.loadclient import ProtocolError
from benchmarks.report import Measure, Target
from benchmarks.scenarios import Scenario

FILES = 20000

_BUILD = """
import gc, json, os, sys, time
from chorus_tools.tools.code.parse import give_back
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.warm.symbol_helpers import Helpers
from chorus_tools.tools.warm.symbol_index import SymbolIndex

def rss():
    gc.collect()
    give_back()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

root = sys.argv[1]
Helpers.wanted = staticmethod(lambda: 0)
index = SymbolIndex(ToolContext(ws=Workspace(root)), 1 << 30)
for folder, dirs, names in os.walk(root):
    dirs.sort()
    for name in sorted(names):
        path = os.path.join(folder, name)
        index.changed(os.path.relpath(path, root), os.lstat(path))
index.start()
for _ in range(50):  # grammars and queries made before the baseline
    path = next(iter(index.queue)); del index.queue[path]; index.parse(path)
start, begun, half = rss(), len(index.files), None
cpu = time.process_time()
middle = (len(index.queue) + begun) // 2
while index.queue:
    path = next(iter(index.queue)); del index.queue[path]; index.parse(path)
    if half is None and len(index.files) + len(index.not_code) >= middle:
        half = (rss(), len(index.files))
cpu = time.process_time() - cpu
end = rss()
files = len(index.files) - begun
print(json.dumps({"files": files, "bytes": end - start, "cpu": cpu,
                  "second_half": (end - half[0]) / max(1, len(index.files) - half[1]),
                  "records": sum(len(r.data) for r in index.files.values()) / len(index.files),
                  "vocabulary": len(index.word_list)}))
"""


def bytes_per_file(env: Env) -> Measure:
    tree: Path = env.tree_of(FILES)
    done = subprocess.run([sys.executable, "-c", _BUILD, str(tree)], cwd=REPO,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise ProtocolError(f"the index build failed: {done.stderr[-400:]}")
    found = json.loads(done.stdout)
    return Measure("bytes", found["bytes"] / found["files"], {
        "code_files": found["files"], "second_half_bytes": round(found["second_half"]),
        "record_bytes": round(found["records"]), "vocabulary": found["vocabulary"],
        "files_per_cpu_second": round(found["files"] / found["cpu"])})


SCENARIOS = [
    Scenario("code_index_bytes_per_file", "symbol index: resident bytes a code file, uses "
             "included (20k generated files, in process)", "—",
             Target("≤", 2560, absolute=True, unit="bytes"), bytes_per_file, None),
]
