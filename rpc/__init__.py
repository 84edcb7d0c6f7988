"""The server, imported as `chorus_tools.rpc`: the wire (bytes and envelopes), the
dispatcher (ids, order, records), the MCP face and the processes (pool, workers, watcher).
It never touches the workspace's files: that is `chorus_tools.tools`.
"""
