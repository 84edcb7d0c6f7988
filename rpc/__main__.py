"""`python -m chorus_tools` is the same as the `chorus-tools` script (and, in a source
checkout, so is `python -m rpc`)."""

from chorus_tools.cli import main

main()
