"""Where a pageable copy's spread lives: between processes, between contexts of one process, or between
moments of one context. Reads pageable_probe's renew and held lines (gzipped JSON lines) in first/,
second/ and third/ and prints, per set and case, the spread at each level. Run as `python3 moments.py` in this folder."""
import collections
import gzip
import json
import math
import statistics as st
from pathlib import Path

HERE = Path(__file__).resolve().parent
LARGE = ["h2d_1MiB", "d2h_1MiB", "h2d_16MiB", "d2h_16MiB", "h2d_256MiB", "d2h_256MiB", "memcpy_16MiB"]


def load(folder, mode):
    rows = []
    for path in sorted((HERE / folder).glob(f"{mode}_*.jsonl.gz")):
        with gzip.open(path, "rt") as f:
            for line in f:
                r = json.loads(line)
                r["proc"] = path.name
                rows.append(r)
    return rows


def sd_pct(logs):
    return 100 * st.stdev(logs)


def table(rows):
    procs = sorted({r["proc"] for r in rows})
    print(f"  {len(procs)} processes of {max(r['context'] for r in rows) + 1} contexts, 3 moments each")
    print(f"  {'case':13} {'median us':>10} {'one moment':>10} {'in a process':>12} {'process, 12':>11}"
          f" {'context, 3':>10} {'fresh/same':>10} {'r(clock)':>8}")
    for case in dict.fromkeys(r["case"] for r in rows):
        same = [r for r in rows if r["case"] == case and r["phase"] == "same"]
        fresh = [r for r in rows if r["case"] == case and r["phase"] == "fresh"]
        by_proc, by_ctx = collections.defaultdict(list), collections.defaultdict(list)
        for r in same:
            by_proc[r["proc"]].append(math.log(r["us"]))
            by_ctx[(r["proc"], r["context"])].append(math.log(r["us"]))
        one = sd_pct([math.log(r["us"]) for r in same])
        within = 100 * math.sqrt(st.mean(st.variance(v) for v in by_proc.values()))
        of_procs = sd_pct([st.median(v) for v in by_proc.values()])
        # A context's median of its three moments, around its process's mean: the spread between contexts.
        ctx = 100 * math.sqrt(st.mean(st.variance([st.median(by_ctx[(p, k)]) for (q, k) in by_ctx if q == p])
                                      for p in by_proc))
        ratio = st.median(f["us"] / math.exp(st.median(by_ctx[(f["proc"], f["context"])])) for f in fresh)
        clock = st.correlation([math.log(r["us"]) for r in same], [math.log(r["clock_read_ns"]) for r in same])
        print(f"  {case:13} {st.median(r['us'] for r in same):10.2f} {one:9.2f}% {within:11.2f}% {of_procs:10.2f}%"
              f" {ctx:9.2f}% {ratio:10.3f} {clock:+8.2f}")
    print("  each process's median over its 12 moments [fastest to slowest moment], us:")
    for case in LARGE:
        cells = []
        for p in procs:
            v = [r["us"] for r in rows if r["case"] == case and r["phase"] == "same" and r["proc"] == p]
            cells.append(f"{st.median(v):.0f} [{min(v):.0f}-{max(v):.0f}]")
        print(f"    {case:13} " + "  ".join(cells))


def main():
    print("Columns: each copy's median time; the sd (of the log, in %) of one moment's time over every moment;")
    print("the same within a process (pooled); of a process's median over its 12 moments, between processes;")
    print("of a context's median over its 3 moments, within a process (pooled); a fresh buffer's time over its")
    print("context's; the correlation of the log time with the log cost of a clock read at that moment.")
    for folder, mode, what in [("first", "renew", "thread free"), ("second", "renew", "thread free"),
                               ("second", "held", "thread held in the fast state"), ("third", "renew", "thread free"),
                               ("third", "held", "thread held in the fast state")]:
        gpu = (HERE / folder / "gpus.txt").read_text().strip().splitlines()[-1].split(",")[0]
        print(f"\n{folder}/{mode}: {what}, {gpu}")
        table(load(folder, mode))


if __name__ == "__main__":
    main()
