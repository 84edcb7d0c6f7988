"""The seed dialects (`--tools` in docs/protocol.md, Starting the server): each a table of
methods (`*_table.py`, read by the registry) and thin adapters over the core tools
(`claude.py`, `scope.py`, `shadow.py`), run in the workers like any tool."""
