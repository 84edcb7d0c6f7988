"""The dispatcher and what it owns: ids, cancels, the invoker (validation, order per path,
records, sessions), split calls, rpc.discover."""
