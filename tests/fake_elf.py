"""Tiny static x86-64 ELF programs that stand in for a checker binary gone wrong: one
that hangs, one that crashes, one that prints what cannot be parsed. A binary we spawn
must be ELF (a wrapper script cannot run under its Landlock domain), so the fakes are
real machine code, a few bytes each, with no libraries to load."""

from __future__ import annotations

import os
import struct
from pathlib import Path

_BASE = 0x400000
_HEADERS = 64 + 56

HANG = b"\xeb\xfe"  # jmp $
CRASH = b"\x0f\x0b"  # ud2: SIGILL


def prints(text: bytes, status: int = 1) -> bytes:
    """Code that writes `text` to stdout and exits with `status`."""
    code = (b"\xb8\x01\x00\x00\x00"  # mov eax, 1 (write)
            b"\xbf\x01\x00\x00\x00"  # mov edi, 1
            b"\x48\x8d\x35" + struct.pack("<i", 19)  # lea rsi, [rip + 19]: the text
            + b"\xba" + struct.pack("<I", len(text))  # mov edx, len
            + b"\x0f\x05"  # syscall
            b"\xb8\x3c\x00\x00\x00"  # mov eax, 60 (exit)
            + b"\xbf" + struct.pack("<I", status)  # mov edi, status
            + b"\x0f\x05")  # syscall
    return code + text


def write_elf(path: Path, code: bytes) -> Path:
    """An executable at `path` running `code` from its entry point."""
    size = _HEADERS + len(code)
    header = (b"\x7fELF\x02\x01\x01" + b"\0" * 9
              + struct.pack("<HHIQQQIHHHHHH", 2, 0x3E, 1, _BASE + _HEADERS, 64, 0, 0, 64,
                            56, 1, 0, 0, 0))
    program = struct.pack("<IIQQQQQQ", 1, 5, 0, _BASE, _BASE, size, size, 0x1000)
    path.write_bytes(header + program + code)
    os.chmod(path, 0o755)
    return path


def opens(path: bytes) -> bytes:
    """Code that opens `path` for reading and exits with 3 when it could, 4 when refused."""
    return (b"\x48\x8d\x3d" + struct.pack("<i", 23)  # lea rdi, [rip + 23]: the path
            + b"\x31\xf6"  # xor esi, esi (O_RDONLY)
            b"\xb8\x02\x00\x00\x00"  # mov eax, 2 (open)
            b"\x0f\x05"  # syscall
            b"\x48\xc1\xe8\x3f"  # shr rax, 63: 1 when it failed
            b"\x8d\x78\x03"  # lea edi, [rax + 3]
            b"\xb8\x3c\x00\x00\x00"  # mov eax, 60 (exit)
            b"\x0f\x05"  # syscall
            + path + b"\0")
