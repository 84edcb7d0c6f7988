"""`python -m rpc` is the same as the `chorus-tools` script."""

from rpc.cli import main

main()
