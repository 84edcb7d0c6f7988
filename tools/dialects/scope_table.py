"""The `scope` tool set's methods (SPEC §7); adapters in scope.py."""

from __future__ import annotations

METHODS: tuple = ()
