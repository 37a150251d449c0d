#!/usr/bin/env python3
"""What --fail-on-regression does between two runs of one build, and what it still catches, with and without
its p-values adjusted over every case (Benjamini-Hochberg, gpu-bench-compare's q_value).

For each A/A set (a folder holding *run1.json[.gz] and *run2.json[.gz]) one line:
- A/A: whether the gate at PCT fires between the two runs, on p-values alone and on q-values (and on which
  cases: judged by q or, for a side of one round or a headline its rounds do not hold, on the floor);
- lone case P%: for each case, that case alone P% slower in the second run, the others as they are: the share
  of cases for which the gate fires on it (unadjusted: it is called slower beyond PCT; adjusted: and its
  p-value holds among the A/A pair's other p-values).

usage: gate_power.py [--gate PCT] [--alpha A] SET_DIR...
"""
import argparse
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from gpu_bench_tools.aa.altered import slowed  # noqa: E402
from gpu_bench_tools.compare.verdicts import compare  # noqa: E402
from gpu_bench_tools.reading.load import load_file  # noqa: E402
from gpu_bench_tools.stats.nonparametric import bh_adjusted  # noqa: E402

LONE_PCTS = (6.0, 10.0)


def rounds_tests(cmp):
    """Case -> (p, called slower, slowdown %) of every comparison judged on both sides' rounds."""
    return {r.key: (v.p_value, v.verdict == "slower", v.slowdown_pct) for r in cmp.rows
            for v in [r.versus[1]] if v is not None and v.method == "moderated-rounds" and v.p_value is not None}


def holds(p_values, key, alpha):
    keys = list(p_values)
    return bh_adjusted([p_values[k] for k in keys])[keys.index(key)] < alpha


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gate", type=float, default=5.0)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("sets", nargs="+")
    args = ap.parse_args(argv)
    for d in args.sets:
        paths = [sorted(glob.glob(os.path.join(d, f"*run{k}.json*"))) for k in (1, 2)]
        if not all(paths):
            print(f"gate_power: {d} holds no run1 and run2 JSON", file=sys.stderr)
            return 2
        first, second = load_file(paths[0][0]), load_file(paths[1][0])
        aa = compare([first, second])
        fired = [f"{r.key} {r.versus[i].slowdown_pct:.1f}% "
                 + ("on the floor" if r.versus[i].q_value is None else f"q={r.versus[i].q_value:.2g}")
                 for r, i in aa.regressions(args.gate)]
        line = [f"{os.path.basename(os.path.normpath(d))}: A/A fires "
                f"{'yes' if aa.slower_beyond(args.gate) else 'no'} unadjusted, "
                f"{'yes (' + ', '.join(fired) + ')' if fired else 'no'} adjusted"]
        base = {k: p for k, (p, _, _) in rounds_tests(aa).items()}
        for pct in LONE_PCTS:
            planted = rounds_tests(compare([first, slowed(second, pct)]))
            caught = [k for k, (_, slower, by) in planted.items() if slower and by > args.gate]
            adjusted = sum(holds({**base, k: planted[k][0]}, k, args.alpha) for k in caught)
            line.append(f"one case {pct:g}% slower: fires for {100 * len(caught) / len(planted):.1f}% unadjusted, "
                        f"{100 * adjusted / len(planted):.1f}% adjusted (of {len(planted)} cases)")
        print("; ".join(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
