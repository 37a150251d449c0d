"""A/A: runs of one command on one machine (run), and how far they agree (analysis, rendered by render and
written by report_files)."""
