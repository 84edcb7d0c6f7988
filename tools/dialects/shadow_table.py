"""The `shadow` tool set's methods (SPEC §7); adapters in shadow.py."""

from __future__ import annotations

METHODS: tuple = ()
