"""chorus-tools: sandboxed file tools for agents over JSON-RPC 2.0 and MCP.

The import names follow the folders: `chorus_tools.rpc` is `rpc/` (the server: wire,
dispatch, MCP face, processes; it never touches the workspace's files) and
`chorus_tools.tools` is `tools/` (the file logic; it never speaks JSON-RPC). Both are
symlinks here, so a plain checkout imports, and every static tool resolves, with no
install hook.
"""
