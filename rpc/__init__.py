"""chorus-tools, installed as one package: this is the server (source folder `rpc/`: framing,
envelopes, dispatch, the worker pool; it never touches the workspace's files), and
`chorus_tools.tools` holds the file logic (source folder `tools/`; it never speaks JSON-RPC).
"""
