"""file.patch: the matching tiers, re-indentation, hints for failed finds, the diff."""
