"""What load on the host's memory moves: each run's figures against the quiet runs' mean, by family, and each
run's median detectable_pct; each CPU's memcpy rate and clock read before each run; each run's round_host.

Reads mem0_*.json.gz (quiet) and mem4_*.json.gz (beside four threads copying 256 MiB buffers) in this folder.
Usage: python3 memhog_effect.py (from this folder). Writes memhog_effect.txt's text to standard output."""
import glob
import gzip
import json
import math
import re
import statistics


def family(name):
    head = name.split("/")[0]
    if head != "Transfer":
        return head
    mem = re.search(r"mem:([a-z_]+)", name).group(1)
    if mem == "pinned":
        return mem
    return mem + (" >=1MiB" if int(re.search(r"bytes:(\d+)", name).group(1)) >= 1 << 20 else " <1MiB")


runs = {}
for path in sorted(glob.glob("mem*_*.json.gz")):
    with gzip.open(path) as f:
        doc = json.load(f)
    runs[path.split(".")[0]] = ({b["name"]: b for b in doc["benchmarks"] if "detectable_pct" in b}, doc["context"])
quiet = [k for k in runs if k.startswith("mem0")]
names = sorted(set.intersection(*(set(cases) for cases, _ in runs.values())))
base = {n: statistics.mean(math.log(runs[k][0][n]["real_time"]) for k in quiet) for n in names}
families = sorted({family(n) for n in names})

order = list(runs)
print("each run's figures over the quiet runs' mean: the median over the family's cases (+ slower)")
print(f"{'family':24s}" + "".join(f"{k:>9s}" for k in order))
for f in families:
    moves = [statistics.median(100 * (math.log(runs[k][0][n]["real_time"]) - base[n]) for n in names if family(n) == f)
             for k in order]
    print(f"{f:24s}" + "".join(f"{m:+8.2f}%" for m in moves))
print(f"{'wall of the run':24s}" + "".join(f"{float(runs[k][1]['gpu_bench.elapsed_s']):8.1f}s" for k in order))

print("\neach run's median detectable_pct over the family's cases")
for f in families:
    dets = [statistics.median(runs[k][0][n]["detectable_pct"] for n in names if family(n) == f) for k in order]
    print(f"{f:24s}" + "".join(f"{d:8.2f}%" for d in dets))

print("\nbefore each run, over the 16 CPUs: the median single-thread memcpy rate and clock read")
probes = {}
with open("cpu_state_before_each_run.jsonl") as f:
    for line in f:
        row = json.loads(line)
        probes.setdefault(row["run"], []).append(row)
for k, rows in probes.items():
    print(f"{k:8s} memcpy {statistics.median(r['memcpy_gbps'] for r in rows):5.2f} GB/s, "
          f"clock read {statistics.median(r['clock_read_ns'] for r in rows):5.1f} ns")

print("\ngpu_bench.round_host (others' share of the host's CPU time / steal / preemptions, per round)")
for k, (_, ctx) in runs.items():
    print(f"{k:8s} {ctx.get('gpu_bench.round_host')}")
