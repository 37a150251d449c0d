"""A/A: runs of one command on one machine (run), and how far they agree (aa)."""
