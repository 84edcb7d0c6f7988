"""The MCP face: initialize, tools/list, tools/call, content blocks and progress."""
