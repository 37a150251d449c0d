"""How often a case's figure moved between the two runs of a committed default A/A pair by more than its
detectable_pct (the mean of the two runs'), by family; which cases did; and how the misses gather by pair.

Reads every H200 default set in ../ whose runs combine rounds by their fastest half (gpu_bench.round_center),
each pair of consecutive runs of a set. Usage: python3 calibration.py (from this folder; scipy, as the tools).
Writes the tables to standard output (calibration.txt)."""
import glob
import gzip
import json
import math
import os
import re
import statistics
from collections import defaultdict

from scipy.stats import spearmanr

HOST_DRIVEN = ("Transfer/pageable", "HostBlocking", "Events", "SyncPlacement", "Launch", "SmallCopy", "Batch")


def load(path):
    with gzip.open(path) as f:
        doc = json.load(f)
    cases = {b["name"].replace("/manual_time", ""): b for b in doc["benchmarks"]
             if b.get("run_type", "iteration") == "iteration" and not b.get("error_occurred")}
    return doc["context"], cases


def family(name):
    head = name.split("/")[0]
    return f"Transfer/{re.search(r'mem:([a-z_]+)', name).group(1)}" if head == "Transfer" else head


def pairs():
    """(set, pair number, [(case, signed move %, mean detectable_pct)], (earlier context, later context)) for
    every pair of consecutive runs."""
    for folder in sorted(glob.glob("../h200*default_*/")):
        files = sorted(f for f in glob.glob(folder + "*.json.gz") if "run" in os.path.basename(f))
        runs = [load(f) for f in files]
        if len(runs) < 2 or any(c.get("gpu_bench.round_center") != "fastest_half" for c, _ in runs):
            continue
        for k, ((ca, a), (cb, b)) in enumerate(zip(runs, runs[1:]), 1):
            moves = [(n, math.log(b[n]["real_time"] / x["real_time"]) * 100,
                      (x["detectable_pct"] + b[n]["detectable_pct"]) / 2)
                     for n, x in a.items() if n in b and "detectable_pct" in x and "detectable_pct" in b[n]]
            yield os.path.basename(folder.rstrip("/")), k, moves, (ca, cb)


def context_move(contexts, key):
    """How far a number at the head of a context value moved between the two runs, percent of its logarithm;
    None where either run lacks it."""
    try:
        a, b = (float(str(c.get(key)).split()[0]) for c in contexts)
    except (TypeError, ValueError):
        return None
    return math.log(b / a) * 100 if a > 0 and b > 0 else None


def load_move(contexts):
    """How much higher the host's one-minute load average stood when the later run started; None where a run
    lacks it. A difference, not a ratio: a quiet host's load is near 0."""
    try:
        a, b = (float(c["load_avg"][0]) for c in contexts)
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return b - a


def quantile(values, p):
    return statistics.quantiles(values, n=100, method="inclusive")[round(p * 100) - 1]


def main():
    every = list(pairs())
    sets = sorted({s for s, *_ in every})
    print(f"{len(every)} pairs from {len(sets)} sets: " + " ".join(sets))
    by_family = defaultdict(list)
    for _, _, moves, _ in every:
        for n, move, det in moves:
            by_family[family(n)].append((abs(move), det))
    print("\nfamily                          case-pairs  det p50  |move| p50  |move| p95  moved beyond det")
    for fam, rows in sorted(by_family.items(), key=lambda kv: -statistics.median(d for _, d in kv[1])):
        moves = [m for m, _ in rows]
        beyond = sum(m > d for m, d in rows) / len(rows) * 100
        print(f"{fam:<31} {len(rows):>10} {statistics.median(d for _, d in rows):>8.2f} "
              f"{statistics.median(moves):>10.2f} {quantile(moves, 0.95):>11.2f} {beyond:>16.1f}%")
    print("\nper pair, the host-driven families' cases: the share that moved beyond their detectable_pct, and their "
          "median signed move (+ slower in the later run)")
    shares, shifts, signed, contexts = [], [], [], []
    for name, k, moves, both in every:
        host = [(m, d) for n, m, d in moves if family(n) in HOST_DRIVEN]
        share = sum(abs(m) > d for m, d in host) / len(host) * 100
        shift = statistics.median(m for m, _ in host)
        shares.append(share)
        shifts.append(abs(shift))
        signed.append(shift)
        contexts.append((both, statistics.median(m for n, m, _ in moves if family(n) == "Transfer/pinned")))
        print(f"  {name:<30} pair {k}: {share:5.1f}% of {len(host)}, median move {shift:+5.2f}%")
    rho, p = spearmanr(shifts, shares)
    print(f"Spearman's rho of a pair's |median move| and its share beyond: {rho:.2f} (p {p:.2g}, {len(shares)} pairs)")
    print("\nwhat moves with a pair's median host-driven move (Spearman's rho over the pairs that have it):")
    candidates = {"the pinned copies' median move": [pinned for _, pinned in contexts],
                  "load_avg (1 min) at the start, later - earlier": [load_move(both) for both, _ in contexts]}
    for key in ("gpu_bench.elapsed_s", "gpu_bench.timed_s", "gpu_bench.start_s", "host.clock_read_ns"):
        candidates[key] = [context_move(both, key) for both, _ in contexts]
    for what, values in candidates.items():
        have = [(m, v) for m, v in zip(signed, values) if v is not None]
        rho, p = spearmanr([m for m, _ in have], [v for _, v in have])
        print(f"  {what:<48} rho {rho:+.2f} (p {p:.2g}, {len(have)} pairs)")


if __name__ == "__main__":
    main()
