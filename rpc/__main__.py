"""`python -m rpc` in a source checkout is the `chorus-tools` script."""

from chorus_tools.rpc.cli import main

main()
