"""docs/deploy.md's container recipe works as written (issue 35: a container recipe with a
non-root user, the history in a volume, HTTP with a token from a secret).

There is no container engine here, so the recipe's `Dockerfile` is taken apart (`USER`,
`VOLUME`, `ENTRYPOINT`, `CMD`) and its entry command is run for real: as a user who is not
root and whose home does not exist, with stdin from /dev/null (a detached container),
the volume, the workspace and the token file in the places the command names. The
program is this checkout's `chorus-tools`.

The user keeps one capability, CAP_DAC_READ_SEARCH: this machine's Python lies under
/root (mode 0700), where the image's lies under /opt, readable by all. It lets the
process read and look up paths; every write is still checked against the user's own
permission bits, which is what the recipe depends on.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sysconfig
import tarfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from http_server import HttpServer
from rpc_client import REPO

TOKEN = "a-token-from-the-secret"
SERVING = re.compile(r"serving HTTP on http://([^/\s]+)/mcp")
AS_IMAGE_USER = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="running the entry command as another user needs root and setpriv")


def dockerfile() -> dict[str, list[str]]:
    """The recipe's Dockerfile: each instruction's arguments, in order, by keyword."""
    text = (REPO / "docs" / "deploy.md").read_text()
    found = re.search(r"```dockerfile\n(.*?)```", text, re.S)
    assert found, "docs/deploy.md shows no Dockerfile"
    found_lines = re.sub(r"\\\n\s*", " ", found.group(1)).splitlines()
    instructions: dict[str, list[str]] = {}
    for line in found_lines:
        if line.strip() and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            instructions.setdefault(keyword.upper(), []).append(rest.strip())
    return instructions


def test_the_image_runs_as_a_user_with_no_home_and_keeps_its_data_in_a_volume() -> None:
    docker = dockerfile()
    [user] = docker["USER"]
    assert user not in ("root", "0")
    useradd = next(r for r in docker["RUN"] if "useradd" in r)
    assert re.search(rf"useradd .*\b{user}\b", useradd)
    assert "--no-create-home" in useradd and "--home-dir /nonexistent" in useradd
    argv = json.loads(docker["ENTRYPOINT"][-1]) + json.loads(docker["CMD"][-1])
    [volume] = json.loads(docker["VOLUME"][-1])
    for option in ("--history", "--state"):
        assert argv[argv.index(option) + 1].startswith(volume + "/"), option
    assert argv[argv.index("--http-token-file") + 1].startswith("/run/secrets/")
    assert argv[argv.index("--http") + 1].startswith("0.0.0.0:")


@AS_IMAGE_USER
def test_the_entry_command_serves_http_with_the_token_as_that_user(tmp_path: Path) -> None:
    nobody = pwd.getpwnam("nobody")
    command, places = _entry_command(tmp_path)
    proc = _as_image_user(command, places)
    try:
        address, stderr = _address(proc)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        uid = int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))  # type: ignore[union-attr]
        assert uid == nobody.pw_uid != 0
        _serves_with_the_token_only(f"http://127.0.0.1:{address.rpartition(':')[2]}")
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
    assert code == 0, stderr
    assert (places["work"] / "notes.txt").stat().st_uid == nobody.pw_uid
    history = places["data"] / "history"
    assert history.is_dir() and history.stat().st_uid == nobody.pw_uid
    assert any(p.is_file() and p.stat().st_size for p in history.rglob("*"))
    assert "Traceback" not in "".join(stderr), stderr


def _as_image_user(command: list[str], places: dict[str, Path]) -> subprocess.Popen:
    """`command` started as `nobody` (not root, no home), owning the places it writes,
    the token readable by it alone, stdin from /dev/null as in a detached container."""
    nobody = pwd.getpwnam("nobody")
    assert not os.path.exists(nobody.pw_dir) or not os.access(nobody.pw_dir, os.W_OK)
    for place in places.values():
        os.chown(place, nobody.pw_uid, nobody.pw_gid)
    os.chmod(places["token"], 0o400)
    return subprocess.Popen(
        ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
         "--clear-groups", "--inh-caps=+dac_read_search",
         "--ambient-caps=+dac_read_search", "env", "-i", "HOME=/nonexistent",
         "PATH=/usr/bin:/bin", f"PYTHONPATH={REPO}", *command],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/")


def _entry_command(tmp_path: Path, args: list[str] | None = None
                   ) -> tuple[list[str], dict[str, Path]]:
    """ENTRYPOINT + CMD (or the `args` that replace it, as a pod's do) with this
    checkout's program, the container's paths moved under `tmp_path`, and a free port."""
    docker = dockerfile()
    argv = json.loads(docker["ENTRYPOINT"][-1]) + (
        json.loads(docker["CMD"][-1]) if args is None else args)
    [volume] = json.loads(docker["VOLUME"][-1])
    places = {"work": tmp_path / "work", "data": tmp_path / "data",
              "token": tmp_path / "secrets" / "chorus_token"}
    moved = {argv[argv.index("--workspace") + 1]: places["work"], volume: places["data"],
             argv[argv.index("--http-token-file") + 1]: places["token"]}
    places["work"].mkdir()
    places["data"].mkdir()
    places["token"].parent.mkdir()
    places["token"].write_text(TOKEN + "\n")
    program = Path(sysconfig.get_paths()["scripts"]) / "chorus-tools"
    assert Path(argv[0]).name == program.name
    command = [str(program)]
    for arg in argv[1:]:
        for inside, outside in moved.items():
            if arg == inside or arg.startswith(inside + "/"):
                arg = str(outside) + arg[len(inside):]
        command.append(arg)
    at = command.index("--http") + 1
    command[at] = command[at].rpartition(":")[0] + ":0"
    return command, places


def _address(proc: subprocess.Popen) -> tuple[str, list[str]]:
    """The HOST:PORT the server printed, and its stderr (read on until it exits)."""
    lines: list[str] = []
    found = threading.Event()
    address: list[str] = []

    def drain() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            lines.append(raw.decode(errors="replace"))
            match = SERVING.search(lines[-1])
            if match and not address:
                address.append(match.group(1))
                found.set()
        found.set()
    threading.Thread(target=drain, daemon=True).start()
    assert found.wait(60) and address, lines
    return address[0], lines


def _serves_with_the_token_only(base: str) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    write = {"jsonrpc": "2.0", "id": 1, "method": "file.write",
             "params": {"path": "notes.txt", "content": "one\n"}}
    assert httpx.post(f"{base}/rpc", json=write, timeout=30).status_code == 401
    wrong = {"authorization": "Bearer not-the-token"}
    assert httpx.post(f"{base}/rpc", json=write, headers=wrong, timeout=30).status_code == 401
    assert _rpc(base, auth, write)["created"] is True
    _rpc(base, auth, {**write, "params": {"path": "notes.txt", "content": "two\n"}})
    versions = _rpc(base, auth, {"jsonrpc": "2.0", "id": 2, "method": "file.history",
                                 "params": {"path": "notes.txt"}})["versions"]
    assert versions and versions[0]["method"] == "file.write"
    headers = {**auth, "accept": "application/json, text/event-stream"}
    init = httpx.post(f"{base}/mcp", headers=headers, timeout=30, json={
        "jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "deploy", "version": "1"}}})
    assert init.status_code == 200, init.text
    session = {"mcp-session-id": init.headers["mcp-session-id"]}
    read = httpx.post(f"{base}/mcp", headers={**headers, **session}, timeout=30, json={
        "jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "file_read", "arguments": {"path": "notes.txt"}}})
    assert read.json()["result"]["content"][0]["text"] == "     1\ttwo"


def _rpc(base: str, headers: dict[str, str], message: dict[str, Any]) -> Any:
    reply = httpx.post(f"{base}/rpc", json=message, headers=headers, timeout=30)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert "result" in body, body
    return body["result"]


def deployment() -> dict[str, Any]:
    """The Kubernetes Deployment in docs/deploy.md, parsed."""
    import yaml

    text = (REPO / "docs" / "deploy.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]
    [found] = [b for b in blocks if isinstance(b, dict) and b.get("kind") == "Deployment"]
    return found


def test_the_kubernetes_deployment_agrees_with_the_image() -> None:
    """Issue 42: the fleet recipe's user, port and paths are the container recipe's, its
    root filesystem read-only, its probes on /healthz and /readyz, scraped by annotation."""
    docker, pod = dockerfile(), deployment()["spec"]["template"]
    argv = json.loads(docker["ENTRYPOINT"][-1])
    [container] = pod["spec"]["containers"]
    uid = int(re.search(r"--uid (\d+)", next(r for r in docker["RUN"] if "useradd" in r))
              .group(1))  # type: ignore[union-attr]
    security = pod["spec"]["securityContext"]
    assert security["runAsNonRoot"] is True and security["runAsUser"] == uid != 0
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    port = int(argv[argv.index("--http") + 1].rpartition(":")[2])
    assert [int(p) for p in docker["EXPOSE"]] == [port]
    assert [p["containerPort"] for p in container["ports"]] == [port]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port}
    annotations = pod["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == port
    assert annotations["prometheus.io/path"] == "/metrics"
    # the args replace CMD, keep the ENTRYPOINT, and parse as this server's options
    assert "--metrics-public" in container["args"]  # annotations carry no token
    from chorus_tools.rpc.cli import parser
    options = parser().parse_args([*argv[1:], *container["args"]])
    # the workspace, the volume and the token's directory are mounted where argv names them
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    [volume] = json.loads(docker["VOLUME"][-1])
    workspace = argv[argv.index("--workspace") + 1]
    token = argv[argv.index("--http-token-file") + 1]
    assert "persistentVolumeClaim" in volumes[mounts[workspace]]
    assert "persistentVolumeClaim" in volumes[mounts[volume]]
    secret = volumes[mounts[os.path.dirname(token)]]["secret"]
    assert [i["path"] for i in secret["items"]] == [os.path.basename(token)]
    assert "emptyDir" in volumes[mounts["/tmp"]]  # the root filesystem is read-only
    # the grace period covers the drain: in flight, then a running change, each bounded
    assert pod["spec"]["terminationGracePeriodSeconds"] > \
        options.shutdown_timeout + options.request_timeout


@AS_IMAGE_USER
def test_the_pods_command_answers_its_probes_and_scrape_and_logs_json(tmp_path: Path) -> None:
    """The Deployment's container run as the kubelet would start it (the image's
    ENTRYPOINT with the pod's `args`, as the image's user): the probes and the scrape the
    manifest names answer without the token, every other request still needs it, the log
    lines are JSON, and a SIGTERM drains to exit 0."""
    [container] = deployment()["spec"]["template"]["spec"]["containers"]
    command, places = _entry_command(tmp_path, container["args"])
    proc = _as_image_user(command, places)
    try:
        address, stderr = _address(proc)
        base = f"http://127.0.0.1:{address.rpartition(':')[2]}"
        for probe in ("livenessProbe", "readinessProbe"):
            path = container[probe]["httpGet"]["path"]
            end = time.monotonic() + 30
            while (reply := httpx.get(base + path, timeout=30)).status_code != 200:
                assert time.monotonic() < end, (path, reply.status_code, reply.text)
                time.sleep(0.05)
        annotations = deployment()["spec"]["template"]["metadata"]["annotations"]
        scrape = httpx.get(base + annotations["prometheus.io/path"], timeout=30)
        assert scrape.status_code == 200 and "chorus_requests_total" in scrape.text
        assert httpx.post(f"{base}/rpc", timeout=30, json={
            "jsonrpc": "2.0", "id": 1, "method": "rpc.discover"}).status_code == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
    assert code == 0, stderr
    logged = [line for line in stderr if line.strip()]
    assert logged and all(json.loads(line)["level"] for line in logged[1:]), logged
    assert TOKEN not in "".join(stderr)


def _shell_blocks(after: str) -> list[str]:
    """The ```sh blocks of docs/deploy.md from the heading `after` on."""
    text = (REPO / "docs" / "deploy.md").read_text()
    return re.findall(r"```sh\n(.*?)```", text[text.index(after):], re.S)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving the file to the image's user needs root")
def test_the_token_recipe_makes_a_secret_only_the_images_user_reads(tmp_path: Path) -> None:
    """The token block, as written, run by bash as root (its `sudo` a function that runs
    the command: no password to ask for)."""
    block = _shell_blocks("## The token file")[0]
    subprocess.run(["bash", "-e", "-c", 'sudo() { "$@"; }\n' + block], cwd=tmp_path,
                   check=True, timeout=60)
    token = tmp_path / "chorus_token"
    uid = int(re.search(r"--uid (\d+)", next(r for r in dockerfile()["RUN"]  # type: ignore[union-attr]
                                              if "useradd" in r)).group(1))
    assert token.stat().st_uid == uid
    assert token.stat().st_mode & 0o777 == 0o600
    assert len(token.read_text().strip()) >= 32


def test_the_transfer_commands_run_as_written(tmp_path: Path) -> None:
    """"Putting files in and taking them out" over HTTP: each curl line of the two blocks
    run by bash as written, against a server with the recipe's token on the recipe's
    address (its port the one the server got); what landed and what came out are checked."""
    work, here, home = tmp_path / "work", tmp_path / "client", tmp_path / "home"
    for place in (work / "build", here, home / "src" / "myproject" / "build"):
        place.mkdir(parents=True)
    (work / "build" / "app.bin").write_bytes(bytes(range(256)) * 64)
    (here / "model.bin").write_bytes(os.urandom(100_000))
    (here / "chorus_token").write_text(TOKEN + "\n")
    (home / "src" / "myproject" / "README.md").write_text("my project\n")
    (home / "src" / "myproject" / "build" / "out.o").write_bytes(b"\x7fELF" + bytes(60))
    blocks = _shell_blocks("## Putting files in and taking them out")
    assert len(blocks) == 2 and "curl -T model.bin" in blocks[0]
    with HttpServer(work, "--workers", "1", token=TOKEN, tmp=tmp_path) as server:
        port = server.base.rpartition(":")[2]
        for block in blocks:
            script = block.replace("127.0.0.1:8765", f"127.0.0.1:{port}")
            done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=here,
                                  env={**os.environ, "HOME": str(home)},
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, (script, done.stdout, done.stderr)
    assert (work / "inputs" / "model.bin").read_bytes() == (here / "model.bin").read_bytes()
    assert (here / "app.bin").read_bytes() == (work / "build" / "app.bin").read_bytes()
    assert (work / "repo" / "README.md").read_text() == "my project\n"
    with tarfile.open(here / "build.tar.gz") as tar:
        names = [m.name.removeprefix("./") for m in tar.getmembers() if m.isfile()]
        assert names == ["out.o"], names
