"""Tools that turn gpu_bench JSON into comparisons, plots, reports and nightly history."""

__version__ = "0.1.0"
