"""The warm tree and the content index: the workspace known in memory, kept exact by inotify."""
