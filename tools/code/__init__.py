"""Code by structure: the language table, parsing, and what is built on them."""
