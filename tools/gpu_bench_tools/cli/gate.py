"""gpu-bench-gate: pass, degraded or errored for one gpu_bench run, against expectations per GPU model, host link
and node shape."""

from __future__ import annotations

import sys
from typing import Sequence

from .common import ArgumentParser, run
from ..fleet.expectations import load_expectations
from ..fleet.gate import judge
from ..reading.load import load_file

PROG = "gpu-bench-gate"


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog=PROG,
        description="Judge a gpu_bench run (gpu_bench --preset=gate) against the expectations for its GPU "
        "model, host link and node shape (a host of one GPU or a node of several). Exit status 0: pass; 1: "
        "degraded (a figure beyond its expectation); 2: errored (a case failed, a figure is missing, or the input "
        "cannot be used). The first line (at most 80 characters) names the verdict, the figure and the GPU; the "
        "details follow, and the last line names the expectations used.",
    )
    p.add_argument("results", metavar="RESULTS.json", help="gpu_bench --benchmark_out file")
    p.add_argument("--expect", metavar="FILE", help="expectations file (TOML; default: the one shipped with "
                   "the tools). A model it has no entry for is an error")
    p.add_argument("--quiet", action="store_true", help="print the first line only")
    return p


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    expect = load_expectations(args.expect)
    verdict = judge(load_file(args.results, require_figures=False), expect)
    lines = verdict.lines()
    sys.stdout.write("\n".join(lines[:1] if args.quiet else lines) + "\n")
    sys.stdout.flush()
    return verdict.status


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
