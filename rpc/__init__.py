"""chorus-tools, installed as one package: this is the server (source folder `rpc/`: framing,
envelopes, dispatch, the worker pool; it never touches the workspace's files), and
`chorus_tools.tools` holds the file logic (source folder `tools/`; it never speaks JSON-RPC).
"""

# The one place the version is written: pyproject reads it (setuptools' dynamic version),
# and the server states it without reading package metadata (tens of ms at every spawn,
# on the path to MCP's initialize answer).
__version__ = "0.1.0"
