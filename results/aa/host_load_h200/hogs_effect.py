"""What 8 busy loops on other CPUs move: the host-driven cases under 256 MiB, three runs on a quiet host and
three beside the loops (call_c23.sh). Per family, the loaded runs' median over the quiet runs' median, and the
quiet runs' own spread; then each run's wall, timed samples, CPU checks and the load average at its start.
Usage: python3 hogs_effect.py (from this folder) > hogs_effect.txt"""
import gzip
import json
import math
import re
import statistics
from collections import defaultdict


def load(path):
    with gzip.open(path) as f:
        doc = json.load(f)
    return doc["context"], {b["name"].replace("/manual_time", ""): b["real_time"] for b in doc["benchmarks"]
                            if b.get("run_type", "iteration") == "iteration" and not b.get("error_occurred")}


def family(name):
    head = name.split("/")[0]
    if head == "Transfer":
        return "Transfer/pageable"
    if head == "HostBlocking":
        return "HostBlocking/" + re.search(r"mem:(\w+)", name).group(1)
    return head


def main():
    quiet = [load(f"hogs0_{i}.json.gz") for i in (1, 2, 3)]
    loaded = [load(f"hogs8_{i}.json.gz") for i in (1, 2, 3)]
    names = sorted(set.intersection(*[set(cases) for _, cases in quiet + loaded]))
    moved, spread = defaultdict(list), defaultdict(list)
    for n in names:
        q = [cases[n] for _, cases in quiet]
        moved[family(n)].append(100 * math.log(statistics.median(c[n] for _, c in loaded) / statistics.median(q)))
        spread[family(n)].append(100 * (max(q) - min(q)) / statistics.median(q))
    print("host-driven cases under 256 MiB, --rounds=5: 8 busy loops on other CPUs against none")
    print("family                 cases  loaded over quiet, + slower: median, least, most   quiet runs' spread p50")
    for fam in sorted(moved):
        v = moved[fam]
        print(f"{fam:<22} {len(v):5d}  {statistics.median(v):+7.2f}% {min(v):+8.2f}% {max(v):+8.2f}%"
              f"   {statistics.median(spread[fam]):6.2f}%")
    every = [x for v in moved.values() for x in v]
    print(f"all                    {len(every):5d}  {statistics.median(every):+7.2f}%; beyond 5% slower "
          f"{sum(x > 5 for x in every)}, faster {sum(x < -5 for x in every)}")
    for (c, _), label in zip(quiet + loaded, ["quiet 1", "quiet 2", "quiet 3", "loaded 1", "loaded 2", "loaded 3"]):
        print(f"{label:<8}  elapsed {float(c['gpu_bench.elapsed_s']):5.1f} s, timed {float(c['gpu_bench.timed_s']):4.2f} s, "
              f"--cpu=fast {c.get('gpu_bench.cpu_moves')}, load_avg at its start {[round(x, 2) for x in c['load_avg']]}")


if __name__ == "__main__":
    main()
