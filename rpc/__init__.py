"""The JSON-RPC face of chorus-tools: framing, envelopes, dispatch, the worker pool.
Knows processes and pipes; never touches the workspace's files."""
