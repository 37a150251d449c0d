"""The host-driven cases under 256 MiB, run alone, each round a short process: their spread between rounds and
between runs at --rounds=5 and 15, beside the same cases in ../link_rounds_h200's filtered runs, where they
took --link_rounds=5 and 15 among the full rounds of larger cases.

Usage: python3 rounds.py (from this folder). Writes the table to standard output (rounds.txt)."""
import statistics
import sys

sys.path.insert(0, "../link_rounds_h200")
from rounds import GROUPS, cases, relative_sd, size  # noqa: E402  (the filtered runs' reader and groups)

SETS = {
    "alone, --rounds=5": [f"r5_{k}.json.gz" for k in (1, 2, 3)],
    "alone, --rounds=15": [f"r15_{k}.json.gz" for k in (1, 2, 3)],
    "among others, --link_rounds=5": [f"../link_rounds_h200/filtered_lr5_{k}.json.gz" for k in (1, 2, 3)],
    "among others, --link_rounds=15": [f"../link_rounds_h200/filtered_lr15_{k}.json.gz" for k in (1, 2, 3)],
}


def main():
    print(f"{'set':<31} {'group':<28} {'rounds sd %':>11} {'runs sd %':>9} {'det p50 %':>9} {'rounds':>6}"
          f" {'cases':>5}")
    for label, files in SETS.items():
        runs = [cases(f) for f in files]
        for group, wanted in GROUPS.items():
            names = [n for n in runs[0] if wanted(n) and size(n) < 256 << 20 and all(n in r for r in runs)]
            within = statistics.median(relative_sd(r[n]["round_times_s"]) for n in names for r in runs)
            between = statistics.median(relative_sd([r[n]["real_time"] for r in runs]) for n in names)
            detectable = statistics.median(r[n]["detectable_pct"] for n in names for r in runs)
            rounds = statistics.median(len(r[n]["round_times_s"]) for n in names for r in runs)
            print(f"{label:<31} {group:<28} {within:>11.2f} {between:>9.2f} {detectable:>9.2f} {rounds:>6.0f}"
                  f" {len(names):>5}")


if __name__ == "__main__":
    main()
