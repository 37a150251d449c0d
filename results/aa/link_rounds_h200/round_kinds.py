"""Each group's spread among its full rounds and among its link rounds, and the offset between the two kinds.

A full round's process runs every selected case; a link round's only the cases that take --link_rounds. The
spread is the sd of a case's log round times, in percent: the median over the group's case-runs, and pooled
(the root of the rounds' degrees-of-freedom-weighted mean variance), which a set of two or three rounds does
not bias. Usage: python3 round_kinds.py (from this folder). Writes the table to standard output."""
import gzip
import json
import math
import statistics

from rounds import GROUPS as FROM_1_MIB, size

# The pageable copies from 1 MiB that take link rounds: those under 256 MiB (the larger keep three).
GROUPS = {"pageable copies, 1 to 64 MiB": lambda n: n.startswith("Transfer/") and "mem:pageable" in n
          and 1 << 20 <= size(n) < 256 << 20}
GROUPS.update((k, v) for k, v in FROM_1_MIB.items() if k != "pageable copies from 1 MiB")


def log_sd(values):
    return statistics.stdev(math.log(v) for v in values) * 100


def pooled(sets):
    dof = sum(len(s) - 1 for s in sets)
    return math.sqrt(sum((len(s) - 1) * log_sd(s) ** 2 for s in sets) / dof)


print(f"{'link rounds':>11}  {'group':<28} {'full: median sd':>15} {'pooled':>6} {'link: median sd':>15} {'pooled':>6}"
      f" {'full over link':>14}")
for rounds in (5, 10, 15):
    groups = {g: {"full": [], "link": [], "offset": []} for g in GROUPS}
    for run in (1, 2, 3):
        with gzip.open(f"filtered_lr{rounds}_{run}.json.gz") as f:
            data = json.load(f)
        # Earlier rounds' processes in the order they ran, then the last round, the process the user started.
        kinds = [p.split("=")[0] for p in data["context"]["gpu_bench.round_processes"].split()] + ["last"]
        for b in data["benchmarks"]:
            times = b.get("round_times_s", [])
            if b.get("run_type") != "iteration" or len(times) != len(kinds):
                continue
            full = [t for t, k in zip(times, kinds) if not k.startswith("link")]
            link = [t for t, k in zip(times, kinds) if k.startswith("link")]
            for group, wanted in GROUPS.items():
                if wanted(b["name"]) and len(link) > 1:
                    groups[group]["full"].append(full)
                    groups[group]["link"].append(link)
                    groups[group]["offset"].append((statistics.median(full) / statistics.median(link) - 1) * 100)
    for group, g in groups.items():
        print(f"{rounds:>11}  {group:<28} {statistics.median(map(log_sd, g['full'])):>15.2f} {pooled(g['full']):>6.2f}"
              f" {statistics.median(map(log_sd, g['link'])):>15.2f} {pooled(g['link']):>6.2f}"
              f" {statistics.median(g['offset']):>+13.2f}%")
