"""The single-process Python floor: a minimal stdio JSON-RPC loop that answers file.read
by reading the file and numbering its lines as fast as Python can, and file.write by the
least an atomic, durable write needs (temp file, fsync, rename, fsync of the directory).

No sandbox, no validation, no pool, no concurrency: the throughput one Python process gets
for this work. A pool of Python workers behind a dispatcher can approach it (or pass it, with
more cores), never far beyond it per core. Run as `python -m benchmarks.floor --workspace DIR`.
"""

from __future__ import annotations

import argparse
import os
import sys

import orjson


def numbered(path: str) -> dict:
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.read().splitlines()
    content = "\n".join([f"{n:>6}\t{line}" for n, line in enumerate(lines, 1)])
    return {"content": content, "total_lines": len(lines), "truncated": False,
            "start_line": 1, "end_line": len(lines), "encoding": "utf-8"}


def durable_write(path: str, content: str) -> dict:
    data = content.encode()
    tmp = f"{path}.floor-tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, path)
    folder = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
    return {"success": True, "bytes_written": len(data)}


def serve(workspace: str) -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        request = orjson.loads(line)
        params = request["params"]
        path = os.path.join(workspace, params["path"])
        try:
            if request["method"] == "file.write":
                result = durable_write(path, params["content"])
            else:
                result = numbered(path)
            reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        except OSError as exc:
            reply = {"jsonrpc": "2.0", "id": request["id"],
                     "error": {"code": -32002, "message": str(exc)}}
        out.write(orjson.dumps(reply) + b"\n")
        out.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--workspace", required=True)
    serve(parser.parse_args().workspace)


if __name__ == "__main__":
    main()
