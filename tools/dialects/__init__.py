"""The seed dialects (SPEC §7): each a table of methods (`*_table.py`, read by the
registry) and thin adapters over the core tools (`claude.py`, `scope.py`, `shadow.py`),
run in the workers like any tool."""
