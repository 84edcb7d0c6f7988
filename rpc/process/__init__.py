"""Processes: the worker pool, its pipes, the worker loop, the privilege drop and the
watcher process."""
