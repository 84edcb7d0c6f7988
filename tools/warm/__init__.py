"""The warm tree and the content index: what a long-lived server keeps between calls."""
