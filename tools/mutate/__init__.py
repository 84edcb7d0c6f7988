"""Every way a file changes: atomic replace, write, delete, move, directories, and what
records say of them."""
