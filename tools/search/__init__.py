"""file.search: the method (search.py), its two engines (ripgrep.py, pyengine.py), the
pattern reading they share (syntax.py), result shaping (results.py), ripgrep's sandbox
(landlock.py) and how ripgrep is found (locate.py)."""
