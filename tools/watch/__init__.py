"""workspace.watch: checking a watch in a worker, and the watcher itself."""
