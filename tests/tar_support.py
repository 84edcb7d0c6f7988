"""Archives for the tests, written by tarfile as a client's tar would write them: regular
files as (name, bytes), then symlinks as (name, target); gzipped or plain."""

from __future__ import annotations

import io
import tarfile
from typing import Iterable


def tar_of(files: Iterable[tuple[str, bytes]] = (), links: Iterable[tuple[str, str]] = (),
           gz: bool = False) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w") as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in links:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return buf.getvalue()
