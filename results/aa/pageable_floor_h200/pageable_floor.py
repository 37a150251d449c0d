"""The machine's floor for pageable copies, from call_c27.sh's or call_c28.sh's readings on one H200.

Each iteration ran six bare programs (tests/gpu/bare_memcpy.cu, a cudaMemcpy from malloc'd memory, one process
per reading) and one gpu_bench process at --rounds=1 of the same six cases. A reading is a process's median.
For each case and each source: the spread between processes, how far consecutive processes move together, and
the smallest change two runs of R processes each could call (Student's t on the two runs' means). Where the
folder holds cpu.jsonl (call_c28.sh: every CPU's memcpy rate and clock read before each iteration), also how
each case's readings go with the CPUs' median memcpy time and clock read in that iteration.

usage: python3 pageable_floor.py [FOLDER] > FOLDER/pageable_floor.txt   (default: this folder; numpy, scipy)
"""
import gzip
import io
import json
import math
import os
import statistics
import sys
import tarfile

import numpy as np
from scipy import stats

BLOCK = 5  # processes a default run gives a host-driven case


def bare_readings(folder):
    out = {}
    with gzip.open(os.path.join(folder, "bare.jsonl.gz"), "rt") as f:
        for line in f:
            r = json.loads(line)
            x = r["reading"]
            key = (x["dir"], x["bytes"])
            out.setdefault(key, []).append((r["iteration"], x["per_copy_median_us"]))
    return out


def gpu_bench_readings(folder):
    out = {}
    with tarfile.open(os.path.join(folder, "gpu_bench_one_round.tgz")) as t:
        metas = {m.name[:-5]: json.load(t.extractfile(m)) for m in t.getmembers() if m.name.endswith(".meta")}
        for m in t.getmembers():
            if not m.name.endswith(".json"):
                continue
            it = metas[m.name[:-5]]["iteration"]
            d = json.load(io.TextIOWrapper(t.extractfile(m)))
            for b in d["benchmarks"]:
                parts = b["name"].split("/")
                direction = parts[1].split(":")[1]
                size = int(parts[3].split(":")[1])
                out.setdefault((direction, size), []).append((it, b["real_time"]))
    return out


def cpu_state(folder):
    """Iteration -> (the CPUs' median time for a GB of memcpy, their median clock read), or {} without cpu.jsonl."""
    path = os.path.join(folder, "cpu.jsonl.gz")
    if not os.path.exists(path):
        return {}
    rows = {}
    with gzip.open(path, "rt") as f:
        for line in f:
            r = json.loads(line)
            rows.setdefault(r["iteration"], []).append((1 / r["memcpy_gbps"], r["clock_read_ns"]))
    return {i: (statistics.median(m for m, _ in v), statistics.median(c for _, c in v)) for i, v in rows.items()}


def detectable_pct(sd_log, r):
    """The critical difference of two runs' means of r processes each, as a percentage."""
    t = stats.t.ppf(0.975, 2 * r - 2)
    return 100 * math.expm1(t * sd_log * math.sqrt(2 / r))


def processes_for(sd_log, target_pct):
    for r in range(2, 500):
        if detectable_pct(sd_log, r) <= target_pct:
            return r
    return None


def describe(name, readings):
    readings.sort()
    logs = np.log([v for _, v in readings])
    sd = float(np.std(logs, ddof=1))
    lag1 = float(stats.spearmanr(logs[:-1], logs[1:]).statistic)
    blocks = [logs[i:i + BLOCK] for i in range(0, len(logs) - BLOCK + 1, BLOCK)]
    f = stats.f_oneway(*blocks)
    means = np.array([b.mean() for b in blocks])
    moves = 100 * np.expm1(np.abs(np.diff(means)))
    print(f"  {name:9s} n {len(logs):3d}  median {np.exp(np.median(logs)):9.2f} us  sd {100 * sd:5.2f}%  "
          f"range {100 * math.expm1(logs.max() - logs.min()):5.1f}%  lag-1 rho {lag1:+.2f}  "
          f"blocks of {BLOCK}: F {f.statistic:4.2f} (p {f.pvalue:.3f}), consecutive blocks' means apart "
          f"median {np.median(moves):4.2f}%, beyond 3% in {int((moves > 3).sum())} of {len(moves)}")
    print(f"            detectable_pct from {BLOCK} processes a run {detectable_pct(sd, BLOCK):5.2f}%, from 15 "
          f"{detectable_pct(sd, 15):5.2f}%; processes a run for 3%: {processes_for(sd, 3.0)}, for 5%: "
          f"{processes_for(sd, 5.0)}")
    return dict(readings)


def with_cpu_state(readings, cpu):
    common = sorted(set(readings) & set(cpu))
    memcpy = stats.spearmanr([readings[i] for i in common], [cpu[i][0] for i in common])
    clock = stats.spearmanr([readings[i] for i in common], [cpu[i][1] for i in common])
    return f"memcpy time rho {memcpy.statistic:+.2f} (p {memcpy.pvalue:.3f}), clock read {clock.statistic:+.2f} (p {clock.pvalue:.3f})"


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    bare, gb, cpu = bare_readings(folder), gpu_bench_readings(folder), cpu_state(folder)
    print("Pageable copies, one process per reading, bare program and gpu_bench alternating on one H200")
    print("(sd: of the log of a process's median; detectable_pct: Student's t on two runs' means of R processes)")
    for key in sorted(bare):
        direction, size = key
        print(f"{direction} {size // 1048576} MiB")
        b = describe("bare", bare[key])
        g = describe("gpu_bench", gb[key])
        common = sorted(set(b) & set(g))
        rho = stats.spearmanr([b[i] for i in common], [g[i] for i in common])
        print(f"            the same iteration's bare and gpu_bench readings: Spearman's rho {rho.statistic:+.2f} "
              f"(p {rho.pvalue:.3f}, {len(common)} iterations)")
        if cpu:
            print(f"            with the CPUs' state before the iteration: bare {with_cpu_state(b, cpu)}; "
                  f"gpu_bench {with_cpu_state(g, cpu)}")


if __name__ == "__main__":
    main()
