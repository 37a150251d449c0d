"""Do a run's rounds share a state through the process that starts them, and do a process's cases move together?

Reads five_P.json.gz (a run at --rounds=5: rounds 1 to 4 children of one parent, the last in it) and one_P_K.json.gz
(five runs at --rounds=1 right after it, each a process of its own), P = 1 to 3, in this folder.
Usage: python3 rounds_and_processes.py (from this folder; scipy, as the tools). Writes rounds_and_processes.txt's text.
"""
import collections
import gzip
import json
import math
import re
import statistics

from scipy.stats import spearmanr

UNIT_S = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
FAMILIES = ["HostBlocking", "Events", "SyncPlacement", "Launch", "pageable >=1MiB", "pageable <1MiB",
            "managed_prefetch >=1MiB", "managed_prefetch <1MiB", "pinned"]


def family(name):
    head = name.split("/")[0]
    if head != "Transfer":
        return head
    mem = re.search(r"mem:([a-z_]+)", name).group(1)
    if mem == "pinned":
        return mem
    return mem + (" >=1MiB" if int(re.search(r"bytes:(\d+)", name).group(1)) >= 1 << 20 else " <1MiB")


def load(path):
    with gzip.open(path) as f:
        return {b["name"]: b for b in json.load(f)["benchmarks"] if b.get("run_type") == "iteration"}


# Every process in the order it ran: {case: its time in seconds in that process (a round's median)}.
processes, labels = [], []
for p in (1, 2, 3):
    five = load(f"five_{p}.json.gz")
    for i in range(5):
        processes.append({n: b["round_times_s"][i] for n, b in five.items() if len(b.get("round_times_s", [])) >= 5})
        labels.append(f"five_{p} round {i + 1}")
    for k in range(1, 6):
        one = load(f"one_{p}_{k}.json.gz")
        processes.append({n: b["real_time"] * UNIT_S[b["time_unit"]] for n, b in one.items()})
        labels.append(f"one_{p}_{k}")
names = [n for n in processes[0] if all(n in p for p in processes)]
logs = {n: [math.log(p[n]) for p in processes] for n in names}

print("1. The spread within five rounds of one run (one parent) and within the five one-round runs after it")
print("   (each its own process), of each case's log time: the median over the family's cases and the 3 groups")
print(f"   {'family':24s} {'rounds of one run':>18s} {'one-round runs':>16s}")
for f in FAMILIES:
    within_run, across = [], []
    for n in names:
        if family(n) != f:
            continue
        for g in range(3):
            within_run.append(100 * statistics.stdev(logs[n][10 * g:10 * g + 5]))
            across.append(100 * statistics.stdev(logs[n][10 * g + 5:10 * g + 10]))
    print(f"   {f:24s} {statistics.median(within_run):17.2f}% {statistics.median(across):15.2f}%")

center = {n: statistics.median(v) for n, v in logs.items()}
dev = {f: [statistics.median(100 * (logs[n][i] - center[n]) for n in names if family(n) == f)
           for i in range(len(processes))] for f in FAMILIES}
print("\n2. Each process in the order they ran: the median over the family's cases of its time over the case's")
print("   median over all 30 processes (+ slower)")
print(f"   {'process':18s}" + "".join(f"{f[:12]:>13s}" for f in FAMILIES))
for i, label in enumerate(labels):
    print(f"   {label:18s}" + "".join(f"{dev[f][i]:+12.2f}%" for f in FAMILIES))

print("\n3. Spearman's rho between the families' columns above, over the 30 processes")
print(f"   {'':24s}" + "".join(f"{f[:10]:>11s}" for f in FAMILIES))
for f in FAMILIES:
    print(f"   {f:24s}" + "".join(f"{spearmanr(dev[f], dev[g])[0]:11.2f}" for g in FAMILIES))

print("\n4. The sd of a case's log time over the 30 processes, as measured and less the median move of the other")
print("   families' cases in the same process (the process's common mode): the median over the family's cases")
host_driven = [n for n in names if family(n) != "pinned"]
kept = collections.defaultdict(lambda: ([], []))
for n in host_driven:
    raw = [100 * (x - center[n]) for x in logs[n]]
    common = [statistics.median(100 * (logs[m][i] - center[m]) for m in host_driven if family(m) != family(n))
              for i in range(len(processes))]
    kept[family(n)][0].append(statistics.stdev(raw))
    kept[family(n)][1].append(statistics.stdev([r - c for r, c in zip(raw, common)]))
print(f"   {'family':24s} {'measured':>9s} {'less common':>12s}")
for f in FAMILIES:
    if f in kept:
        print(f"   {f:24s} {statistics.median(kept[f][0]):8.2f}% {statistics.median(kept[f][1]):11.2f}%")
