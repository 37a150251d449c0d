#!/usr/bin/env python3
"""What an A/A pair's cases would show with fewer of their rounds: each case whose name matches CASES and has
ROUNDS rounds is judged on all of them and on the rounds at KEEP alone, in both runs of the pair. Every other
case keeps all its rounds, and each file's priors are fitted again each way, as the tools fit a file's.

It prints, per way, the cases' median and 90th percentile detectable_pct, the share at 5% or less, and how
often each run's interval holds the other run's figure (both ways).

usage: aa_fewer_rounds.py --cases REGEX --rounds N --keep I,J,... RUN1.json[.gz] RUN2.json[.gz]
Exit status: 0, or 2 when a file cannot be read or no case matches.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from gpu_bench_tools.aa.figures import round_times  # noqa: E402
from gpu_bench_tools.reading.benchmark_json import load_file  # noqa: E402
from gpu_bench_tools.reading.errors import InputError  # noqa: E402
from gpu_bench_tools.stats import rounds as model  # noqa: E402


def load(path: str) -> dict[str, list[float]]:
    """Each case's round times, by the tools' own reading of the file."""
    f = load_file(path)
    return {key: round_times(f, key) for key in f.cases}


def figures(run: dict[str, list[float]], pick) -> dict[str, model.RoundFigure]:
    rounds = {n: pick(n, t) for n, t in run.items() if len(t) >= 2}
    priors = model.fit_file_priors(rounds)
    return {n: model.combine(t, 0.0, priors[n]) for n, t in rounds.items()}


def summary(names: list[str], pair: list[dict[str, model.RoundFigure]]) -> str:
    dets = sorted(f[n].detectable * 100 for f in pair for n in names)
    held = [abs(math.log(b[n].center / a[n].center)) <= math.log1p(a[n].half_width)
            for a, b in (pair, pair[::-1]) for n in names]
    p90 = dets[min(len(dets) - 1, int(0.9 * len(dets)))]
    at5 = 100 * sum(d <= 5 for d in dets) / len(dets)
    return (f"detectable_pct median {statistics.median(dets):.2f}%, p90 {p90:.2f}%, at 5% or less {at5:.1f}%; "
            f"coverage of the other run {100 * sum(held) / len(held):.1f}%")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", required=True, help="a regular expression the case names must match")
    p.add_argument("--rounds", type=int, required=True, help="how many rounds a case must have")
    p.add_argument("--keep", required=True, help="the positions of the rounds kept, from 0, comma-separated")
    p.add_argument("runs", nargs=2)
    a = p.parse_args(argv)
    keep = [int(k) for k in a.keep.split(",")]
    if any(k < 0 or k >= a.rounds for k in keep) or len(keep) < 2:
        print(f"aa_fewer_rounds: --keep {a.keep} must name two or more positions under {a.rounds}", file=sys.stderr)
        return 2
    try:
        runs = [load(path) for path in a.runs]
    except InputError as e:
        print(f"aa_fewer_rounds: cannot read the runs: {e}", file=sys.stderr)
        return 2
    pattern = re.compile(a.cases)
    names = [n for n in runs[0] if pattern.search(n) and n in runs[1] and len(runs[0][n]) == len(runs[1][n]) == a.rounds]
    if not names:
        print(f"aa_fewer_rounds: no case matches {a.cases} with {a.rounds} rounds in both runs", file=sys.stderr)
        return 2
    chosen = set(names)
    fewer = lambda n, t: [t[k] for k in keep] if n in chosen else t  # noqa: E731
    print(f"{len(names)} cases")
    print(f"  all {a.rounds} rounds: {summary(names, [figures(r, lambda n, t: t) for r in runs])}")
    print(f"  rounds {a.keep}: {summary(names, [figures(r, fewer) for r in runs])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
