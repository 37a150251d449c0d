#!/usr/bin/env python3
"""What probe_p6.sh's (or probe_p7.sh's) files say: per case and way, each process's median over its buffers, how far
processes spread, and how far one process's buffers spread. usage: summarize_p6.py DIR"""
import gzip
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def spread_pct(values):
    return 100.0 * (max(values) - min(values)) / statistics.median(values)


def bare(folder, mode):
    by_case = defaultdict(lambda: defaultdict(list))  # case_way -> process -> p50 of each buffer
    files = sorted(folder.glob(f"bare_{mode}_*.jsonl"))
    if not files:
        return
    for f in files:
        for line in f.read_text().splitlines():
            r = json.loads(line)
            by_case[r["case"]][f.stem].append(r["p50_us"])
    print(f"bare managed_probe, {mode}: each process's median of its buffers' p50, us; spread between processes; "
          "median spread among one process's buffers")
    for case, procs in by_case.items():
        medians = [statistics.median(v) for v in procs.values()]
        within = statistics.median(spread_pct(v) for v in procs.values())
        row = " ".join(f"{m:6.1f}" for m in medians)
        print(f"  {case:22s} {row}   between {spread_pct(medians):5.1f}%   within {within:5.1f}%")


def gpu_bench(folder):
    by_case = defaultdict(list)
    files = sorted(folder.glob("gb_*.json.gz"))
    if not files:
        return
    for f in files:
        for b in json.load(gzip.open(f))["benchmarks"]:
            by_case[b["name"].replace("/manual_time", "")].append((b["real_time"], b["noise_pct"]))
    print("gpu_bench, one round a process: real_time us (noise_pct); spread between processes")
    for case, v in by_case.items():
        row = " ".join(f"{t:6.1f}" for t, _ in v)
        noise = statistics.median(n for _, n in v)
        print(f"  {case:52s} {row}   between {spread_pct([t for t, _ in v]):5.1f}%   median noise {noise:.2f}%")


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    bare(folder, "free")
    bare(folder, "cpu3")
    gpu_bench(folder)
