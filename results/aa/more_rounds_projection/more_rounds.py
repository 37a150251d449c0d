"""What more rounds would give the host-driven cases, projected from committed A/A triples.

Rounds are processes of their own, so the rounds of two or three runs on one GPU stand for a run with two or
three times as many. Each case's rounds from runs 1 and 2 (then 1 to 3) are pooled, the file's priors fitted
again, and its detectable_pct computed as the tools compute it. This projects the figure's width only: a
pooled run's coverage of a later run needs runs made that way (gpu_bench --host_rounds).

usage: python3 more_rounds.py (from this folder; numpy and scipy, as the tools). Writes the table to stdout.
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent.parent
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "tools"))
from aa_fewer_rounds import figures, load  # noqa: E402

SETS = {
    "default runs, adf3da8, GPU-65decab1": [HERE.parent / "h200_default_adf3da8" / f"default_run{k}.json.gz"
                                            for k in (1, 2, 3)],
    "filtered runs, --visits=1, GPU-7d7159c7": [HERE.parent / "visits_h200" / f"filtered_pageable_v1_{k}.json.gz"
                                                for k in (1, 2, 3)],
}


def size(name: str) -> int:
    m = re.search(r"bytes:(\d+)", name)
    return int(m.group(1)) if m else 0


GROUPS = {
    "pageable copies from 1 MiB": lambda n: "/mem:pageable/" in n and size(n) >= 1 << 20,
    "pageable copies under 1 MiB": lambda n: "/mem:pageable/" in n and size(n) < 1 << 20,
    "Events": lambda n: n.startswith("Events/"),
    "HostBlocking": lambda n: n.startswith("HostBlocking/"),
    "SyncPlacement": lambda n: n.startswith("SyncPlacement/"),
    "Alloc": lambda n: n.startswith("Alloc/"),
    "managed prefetch": lambda n: "/mem:managed_prefetch/" in n,
}


def pooled(runs: list[dict[str, list[float]]]) -> dict[str, list[float]]:
    names = set.intersection(*(set(r) for r in runs))
    return {n: [t for r in runs for t in r[n]] for n in names}


def row(label: str, dets: list[float]) -> str:
    at5 = 100 * sum(d <= 5 for d in dets) / len(dets)
    at3 = 100 * sum(d <= 3 for d in dets) / len(dets)
    return f"{label:>10}  median {statistics.median(dets):6.2f}%  at 5% or less {at5:5.1f}%  at 3% or less {at3:5.1f}%"


def main() -> int:
    for title, paths in SETS.items():
        runs = [load(str(p)) for p in paths]
        ways = {"one run": [figures(r, lambda n, t: t) for r in runs],
                "two runs": [figures(pooled([runs[a], runs[b]]), lambda n, t: t) for a, b in ((0, 1), (0, 2), (1, 2))],
                "three": [figures(pooled(runs), lambda n, t: t)]}
        print(title)
        for group, wanted in GROUPS.items():
            names = [n for n in runs[0] if wanted(n) and all(len(r.get(n, [])) >= 2 for r in runs)]
            if not names:
                continue
            rounds = statistics.median(len(runs[0][n]) for n in names)
            print(f"  {group}: {len(names)} cases, {rounds:g} rounds a run")
            for way, figs in ways.items():
                print("  " + row(way, [f[n].detectable * 100 for f in figs for n in names if n in f]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
