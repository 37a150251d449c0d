"""Each case's spread between its rounds within a run, and between the runs' figures, of the filtered runs here.
round_kinds.py here and ../min_time_h200/rounds.py read the runs and group the cases with this file's cases,
size and GROUPS.

Usage: python3 rounds.py (from this folder). Writes the table to standard output (rounds.txt)."""
import gzip
import json
import re
import statistics


def cases(path):
    with gzip.open(path) as f:
        return {b["name"]: b for b in json.load(f)["benchmarks"] if b.get("run_type") == "iteration"}


def size(name):
    found = re.search(r"bytes:(\d+)", name)
    return int(found.group(1)) if found else 0


GROUPS = {
    "pageable copies from 1 MiB": lambda n: n.startswith("Transfer/") and "mem:pageable" in n and size(n) >= 1 << 20,
    "pageable copies under 1 MiB": lambda n: n.startswith("Transfer/") and "mem:pageable" in n and size(n) < 1 << 20,
    "Events": lambda n: n.startswith("Events/"),
    "HostBlocking under 256 MiB": lambda n: n.startswith("HostBlocking/") and size(n) < 256 << 20,
    "SyncPlacement": lambda n: n.startswith("SyncPlacement/"),
    "Launch": lambda n: n.startswith("Launch/"),
}


def relative_sd(values):
    return statistics.stdev(values) / statistics.mean(values) * 100


def main():
    print("link rounds  group                          rounds' sd (median, %)  runs' sd (median, %)"
          "  samples a round  cases")
    for rounds in (5, 10, 15):
        runs = [cases(f"filtered_lr{rounds}_{k}.json.gz") for k in (1, 2, 3)]
        for group, wanted in GROUPS.items():
            names = [n for n in runs[0] if wanted(n) and all(n in r for r in runs)]
            within = [relative_sd(r[n]["round_times_s"]) for n in names for r in runs if len(r[n]["round_times_s"]) > 1]
            between = [relative_sd([r[n]["real_time"] for r in runs]) for n in names]
            samples = statistics.median(r[n]["samples"] for n in names for r in runs)
            print(f"{rounds:>11}  {group:<30} {statistics.median(within):>22.2f}  {statistics.median(between):>20.2f}"
                  f"  {samples:>15.0f}  {len(names):>5}")


if __name__ == "__main__":
    main()
