"""gpu-bench-gate: pass, degraded or errored for one gpu_bench run, against expectations per GPU model, host link
and node shape."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .common import ArgumentParser, run
from ..fleet.expectations import load_expectations
from ..fleet.gate import MAX_MEASUREMENTS, ORDINALS, Verdict, judge, judge_again, names_to_measure_again
from ..reading.errors import InputError
from ..reading.load import load_file

PROG = "gpu-bench-gate"
DEFAULT_RETRIES = 1


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog=PROG,
        description="Judge a gpu_bench run (gpu_bench --preset=gate) against the expectations for its GPU "
        "model, host link and node shape (a host of one GPU or a node of several). Exit status 0: pass; 1: "
        "degraded (a figure beyond its expectation on every measurement, or a GPU's error counter rose during the "
        "run); 2: errored (a case failed, a figure is missing, or the input cannot be used). A figure beyond its "
        "expectation is measured again with gpu_bench (--retries). The first line (at most 80 characters) names "
        "the verdict, the figure and the GPU; the details follow, and the last line names the expectations used.",
    )
    p.add_argument("results", metavar="RESULTS.json", help="gpu_bench --benchmark_out file")
    p.add_argument("--expect", metavar="FILE", help="expectations file (TOML; default: the one shipped with "
                   "the tools). A model it has no entry for is an error")
    p.add_argument("--retries", type=_retries, default=DEFAULT_RETRIES, metavar="N",
                   help="measure a figure beyond its expectation up to N more times before calling the node "
                   f"degraded (default {DEFAULT_RETRIES}; 0: judge the one measurement). Each is kept beside "
                   "the run as RESULTS.retryN.json")
    p.add_argument("--gpu-bench", metavar="PATH", help="the gpu_bench that measures again (default: the run's "
                   "own executable where it is here, else gpu_bench on PATH)")
    p.add_argument("--quiet", action="store_true", help="print the first line only")
    return p


def _retries(text: str) -> int:
    if not text.isdigit() or int(text) >= MAX_MEASUREMENTS:
        raise argparse.ArgumentTypeError(f"--retries takes 0 to {MAX_MEASUREMENTS - 1}, not {text!r}")
    return int(text)


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    expect = load_expectations(args.expect)
    f = load_file(args.results, require_figures=False)
    verdict = judge(f, expect)
    _measure_again(verdict, f, args.retries, args.gpu_bench)
    lines = verdict.lines()
    sys.stdout.write("\n".join(lines[:1] if args.quiet else lines) + "\n")
    sys.stdout.flush()
    return verdict.status


def _measure_again(verdict: Verdict, f, retries: int, gpu_bench: str | None) -> None:
    """Measure the figures beyond their expectations again, up to `retries` times, until each is within its
    expectation. Where that cannot be done, one line on stderr says why and the verdict stands on the
    measurements made."""
    from ..fleet.measure_again import CannotMeasure, find_gpu_bench, measure

    for n in range(2, retries + 2):
        names = names_to_measure_again(verdict, f)
        if not names:
            return
        try:
            exe = find_gpu_bench(gpu_bench, f)
            kept = measure(f, names, exe, n - 1)
            why = judge_again(verdict, f, load_file(kept, require_figures=False), n)
        except (CannotMeasure, InputError) as e:
            why = str(e)
        except OSError as e:  # no temporary folder anywhere: the verdict on what was measured still stands
            why = f"{e.filename or 'a temporary folder'}: {e.strerror or e}"
        if why:
            made = "one measurement" if n == 2 else f"{n - 1} measurements"
            print(f"{PROG}: could not measure again: {why}; the verdict rests on {made}", file=sys.stderr)
            return
        verdict.notes.append(f"the {ORDINALS[n - 1]} measurement is kept in {kept}")


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
