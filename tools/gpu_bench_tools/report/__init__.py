"""The HTML report: machine configurations side by side, the comparison and the plots on one page."""
