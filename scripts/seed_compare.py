#!/usr/bin/env python3
"""Overlap's speedups beside the seed material's overlap demo (tests/gpu/seed_overlap.cu), run on the same
machine right after the gpu_bench run: pinned 512 MiB (the demo's kernel is Overlap's work 1), 4, 8, 16 and
32 streams. Overlap's speedup at S streams is the larger of its depth_first and breadth_first cases' (sync
end) `speedup`; the demo's is its sequential time over the faster of its V1 and V2, per repetition, and its
figure the median of those with the 95% confidence interval of that median (the tools' statistics). Writes
every figure to OUT.json, prints a table and exits 1 where an Overlap speedup falls below the low end of the
demo's interval (0 where every one is at or above it).

usage: seed_compare.py GPU_BENCH.json SEED_OVERLAP OUT.json [REPETITIONS] [DEVICE]
"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
from gpu_common import iteration_runs, median_interval  # noqa: E402

BYTES = 512 << 20
STREAMS = (4, 8, 16, 32)
CASE = "Overlap/schedule:{}/mem:pinned/streams:{}/bytes:%d/work:1/sync:end" % BYTES


def overlap_speedups(path):
    """The best schedule's speedup per stream count, with the schedule: {S: (speedup, case name)}."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"seed_compare: cannot read {path}: {e}")
    runs = {}
    for b in iteration_runs(doc):
        if not b.get("error_occurred") and "speedup" in b:
            runs.setdefault(b["run_name"].replace("/manual_time", ""), []).append(b["speedup"])
    best = {}
    for s in STREAMS:
        found = [(statistics.median(runs[n]), n) for n in (CASE.format(sc, s) for sc in ("depth_first", "breadth_first"))
                 if n in runs]
        if found:
            best[s] = max(found)
    return best


def seed(exe, repetitions, device):
    r = subprocess.run([exe, str(BYTES), ",".join(map(str, STREAMS)), str(repetitions), device], capture_output=True,
                       text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"seed_overlap failed (exit {r.returncode}): {r.stderr.strip()}")
    return {row["streams"]: row for row in map(json.loads, r.stdout.splitlines())}


def main(results, seed_exe, out, repetitions="5", device="0"):
    ours = overlap_speedups(results)
    theirs = seed(seed_exe, int(repetitions), device)
    rows, below = [], []
    print(f"{'streams':>7}  {'gpu_bench':>9}  {'seed demo (95% interval)':>28}  verdict")
    for s in STREAMS:
        d = theirs[s]
        per_rep = [q / min(a, b) for q, a, b in zip(d["sequential_ms"], d["v1_ms"], d["v2_ms"])]
        med, (lo, hi) = median_interval(per_rep)
        mine, case = ours.get(s, (None, None))
        if mine is None:
            verdict = "missing"
            below.append(s)
        elif mine >= med:
            verdict = "at or above"
        elif mine >= lo:
            verdict = "within the demo's interval"
        else:
            verdict = "below"
            below.append(s)
        rows.append({"streams": s, "gpu_bench_speedup": mine, "gpu_bench_case": case, "seed_speedup": med,
                     "seed_interval": [lo, hi], "seed_per_repetition": per_rep, "seed": d, "verdict": verdict})
        shown = f"{mine:9.3f}" if mine is not None else f"{'-':>9}"
        print(f"{s:7d}  {shown}  {med:9.3f} ({lo:7.3f} to {hi:7.3f})  {verdict}")
    with open(out, "w") as f:
        json.dump({"gpu_bench_file": results, "bytes": BYTES, "rows": rows}, f, indent=1)
    return 1 if below else 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    sys.exit(main(*sys.argv[1:6]))
