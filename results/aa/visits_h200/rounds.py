"""Each round's spread within a run, and each case's spread between runs, of the filtered runs here.

Usage: python3 rounds.py (from this folder). Writes the table to standard output (rounds.txt)."""
import gzip
import json
import re
import statistics


def cases(path):
    with gzip.open(path) as f:
        return {b["name"]: b for b in json.load(f)["benchmarks"] if b.get("run_type") == "iteration"}


def size(name):
    return int(re.search(r"bytes:(\d+)", name).group(1))


GROUPS = {
    "pageable copies from 1 MiB": lambda n: "mem:pageable" in n and size(n) >= 1 << 20,
    "pageable copies under 1 MiB": lambda n: "mem:pageable" in n and size(n) < 1 << 20,
    "Events": lambda n: n.startswith("Events/"),
    "HostBlocking": lambda n: n.startswith("HostBlocking/"),
}


def relative_sd(values):
    return statistics.stdev(values) / statistics.mean(values) * 100


print("visits  group                          rounds' sd (median, %)  runs' sd (median, %)  cases")
for visits in (1, 4):
    runs = [cases(f"filtered_pageable_v{visits}_{k}.json.gz") for k in (1, 2, 3)]
    for group, wanted in GROUPS.items():
        names = [n for n in runs[0] if wanted(n) and all(n in r for r in runs)]
        within = [relative_sd(r[n]["round_times_s"]) for n in names for r in runs if len(r[n]["round_times_s"]) > 1]
        between = [relative_sd([r[n]["real_time"] for r in runs]) for n in names]
        print(f"{visits:>6}  {group:<30} {statistics.median(within):>22.2f}  {statistics.median(between):>20.2f}  {len(names):>5}")
