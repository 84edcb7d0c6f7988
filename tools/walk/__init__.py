"""The tree: one walker, its split across workers, globs, ignore files, file.list."""
