"""The round times of SyncPlacement's copy cases over every filtered run here: is sync:before two states?

Usage: python3 sync_before.py (from this folder). Writes the table to standard output (sync_before.txt)."""
import collections
import gzip
import json
import statistics

times = collections.defaultdict(list)
for rounds in (5, 10, 15):
    for run in (1, 2, 3):
        with gzip.open(f"filtered_lr{rounds}_{run}.json.gz") as f:
            for b in json.load(f)["benchmarks"]:
                if b["name"].startswith("SyncPlacement/op:copy/") and b.get("run_type") == "iteration":
                    times[b["name"].split("/")[2]] += [t * 1e6 for t in b["round_times_s"]]
print("case       rounds   min    p10    p50    p90    max  (us)")
for sync, values in times.items():
    tenths = statistics.quantiles(values, n=10)
    print(f"{sync:<10} {len(values):>6} {min(values):>6.1f} {tenths[0]:>6.1f} {statistics.median(values):>6.1f}"
          f" {tenths[-1]:>6.1f} {max(values):>6.1f}")
before = times["sync:before"]
bins = collections.Counter(int(v // 2.5) for v in before)
print("sync:before, rounds per 2.5 us bin:", ", ".join(f"{k * 2.5:g}: {bins[k]}" for k in sorted(bins)))
