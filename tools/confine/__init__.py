"""Confinement: the workspace's only door (openat2 beneath the root fd), Landlock, deny
rules, the worker policy."""
