"""File logic for agents, confined to one workspace; knows nothing of JSON-RPC."""
