#!/usr/bin/env python3
"""What probe_p9.sh's files say: per case and way, the spread of a process's samples over its contexts and
streams. Each process ran four contexts one after the other (cudaDeviceReset between), each with two buffers on
streams of their own. usage: summarize_p9.py DIR"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def spread_pct(values):
    return 100.0 * (max(values) - min(values)) / statistics.median(values)


def main(folder):
    by_case = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))  # case -> process -> context -> p50s
    for f in sorted(Path(folder).glob("bare_ctx_*.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            by_case[r["case"]][f.stem][r["context"]].append(r["p50_us"])
    print("per case: each process's mean p50 over its 4 contexts x 2 streams (us); the spread of those means "
          "between processes; and, as medians over processes, the spread among one process's contexts (each "
          "context's mean) and between one context's two streams")
    for case in sorted(by_case):
        procs = by_case[case]
        means = [statistics.mean(x for c in p.values() for x in c) for p in procs.values()]
        contexts = statistics.median(spread_pct([statistics.mean(c) for c in p.values()]) for p in procs.values())
        streams = statistics.median(spread_pct(c) for p in procs.values() for c in p.values())
        row = " ".join(f"{m:6.1f}" for m in means)
        print(f"  {case:28s} {row}   processes {spread_pct(means):5.1f}%   contexts {contexts:5.1f}%   "
              f"streams {streams:5.1f}%")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
