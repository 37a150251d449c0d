"""Rounds' spread, detectable_pct and samples a round, by group: the default filtered runs against one run at
--benchmark_min_time=0.25 (20 to 60 times the samples a round).

Usage: python3 rounds.py (from this folder). Writes the table to standard output (rounds.txt)."""
import statistics
import sys

sys.path.insert(0, "../link_rounds_h200")
from rounds import GROUPS, cases  # noqa: E402  (the filtered runs' reader and groups, beside those runs)

SETS = {
    "default, 3 runs (GPU-19b24f32)": [f"../link_rounds_h200/filtered_lr5_{k}.json.gz" for k in (1, 2, 3)],
    "default, 1 run (GPU-ed6fff9b)": ["filtered_default.json.gz"],
    "min_time 0.25, 1 run (GPU-74047222)": ["filtered_min_time_0.25.json.gz"],
}


def relative_sd(values):
    return statistics.stdev(values) / statistics.mean(values) * 100


print(f"{'set':<36} {'group':<28} {'rounds sd %':>11} {'det p50 %':>9} {'samples':>7} {'cases':>5}")
for label, files in SETS.items():
    runs = [cases(f) for f in files]
    for group, wanted in GROUPS.items():
        names = [n for n in runs[0] if wanted(n)]
        within = statistics.median(relative_sd(r[n]["round_times_s"]) for n in names for r in runs)
        detectable = statistics.median(r[n]["detectable_pct"] for n in names for r in runs)
        samples = statistics.median(r[n]["samples"] for n in names for r in runs)
        print(f"{label:<36} {group:<28} {within:>11.2f} {detectable:>9.2f} {samples:>7.0f} {len(names):>5}")
