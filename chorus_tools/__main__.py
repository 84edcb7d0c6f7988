"""`python -m chorus_tools` is the `chorus-tools` script (`python -m rpc` in a checkout)."""

from chorus_tools.rpc.cli import main

main()
