"""The command lines, each a thin main(argv) -> int over the subpackages below; common: what they share.
`python3 -m gpu_bench_tools.cli.NAME` runs one where the console scripts are not installed."""
