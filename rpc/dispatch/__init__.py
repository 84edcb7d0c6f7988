"""The dispatcher and what it owns: ids, order per path, records, sessions, validation, rpc.discover."""
