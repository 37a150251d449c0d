#!/usr/bin/env python3
"""GPU test: every default Latency case against a bare pointer chase (the test family BareChase,
tests/family/bare_chase.cu: no gpu_bench measurement code) in the same processes, their repetitions interleaved
at random (gpu_bench_parity), so a load on the host link that comes and goes falls on both alike. A first
Latency-only pass gives each case's loads and warm-up loads, which the bare chase is told
(GPU_BENCH_BARE_CHASE); then REPETITIONS of each, interleaved, in each of PROCESSES processes: where a
buffer's pages land (and how the link translates them) is fixed per allocation, so one process can put
either side's buffer in a slower placement for all its repetitions (an H100 once read the bare chase of
managed 1 MiB random 7% slow in every repetition of one process). So a process, not a repetition, is the unit:
each side's figure is the median of its processes' medians, and the two must be within 3%, judged with the
interval of both (a case fails only where the whole interval misses; where it straddles the limit the test is
skipped as too noisy to judge). A side whose own processes lie more than 3% apart is skipped so too: its
footprint's figure is a draw over where its buffer lands. On one H200 the random 32 MiB chase reads between L2
(142 ns at 1 MiB) and HBM (342 ns at 1 GiB): gpu_bench's three processes read 217, 235 and 236 ns, the bare
chase's 207 ns in each. Both sides write their cycle at every run, so a footprint a cache holds starts
each repetition where the write left it: on a node of two H200s a bare chase that wrote its cycle once per process
read GPU 1's 32 MiB (no warm-up loads) at its L2's latency, 845 to 848 ns, in each process's first repetition and
at its HBM's, about 1000 ns, in every later one, once other cases had passed through GPU 1's L2. Also times a default
Latency-only run of gpu_bench (3 rounds): the family must take at most 10 s of cases; and a footprint
larger than the GPU holds is refused in one line. Prints a table of case, L, warm_loads, gpu_bench ns,
bare ns, ratio, each repetition of both and gpu_bench's label; writes every figure to OUT.json.

Cases with numa:remote (a host with two NUMA nodes) are left out: the bare chase does not place memory. On a
machine of two GPUs or more the default's mem:peer cases (GPU 0 chasing another GPU's memory) are compared
too: the bare chase registers a peer case for each one named in GPU_BENCH_BARE_CHASE.

usage: latency_check.py GPU_BENCH GPU_BENCH_PARITY OUT.json
"""
import json
import math
import os
import statistics
import subprocess
import sys

from gpu_common import Checker, iteration_runs, median_interval, ratio_interval, run_gpu_bench

REPETITIONS = 5  # of each side, interleaved: the median of five has a 94% interval from its extremes
PROCESSES = 3  # each with its own allocations on both sides
TOLERANCE = 0.03
BUDGET_S = 10.0


def axes(name):
    return dict(part.split(":", 1) for part in name.split("/")[1:] if ":" in part)


def key_of(name):
    """mem/pattern/bytes, mem being peer:J for GPU J's memory: the bare chase's name for the case."""
    a = axes(name)
    mem = f"peer:{a['peer']}" if a["mem"] == "peer" else a["mem"]
    return f"{mem}/{a['pattern']}/{a['bytes']}"


def process_medians(by_process):
    """Each process's median of its repetitions ({process: [ns, ...]}); [nan] where there are none."""
    return [statistics.median(v) for v in by_process.values() if v] or [float("nan")]


def process_spread(by_process):
    """How far apart a side's processes read: (slowest - fastest) / fastest of their medians; 0 under two."""
    medians = [m for m in process_medians(by_process) if math.isfinite(m)]
    return (max(medians) - min(medians)) / min(medians) if len(medians) > 1 and min(medians) > 0 else 0.0


def repetitions(by_process):
    return [v for k in sorted(by_process) for v in by_process[k]]


def spread(by_process):
    """Every repetition, each process's apart: '849.0 848.2 | 992.4 993.1'."""
    return " | ".join(" ".join(f"{v:.1f}" for v in by_process[k]) for k in sorted(by_process)) or "-"


def main(gpu_bench, parity, out):
    c = Checker()
    ours, theirs, loads, warm, labels = {}, {}, {}, {}, {}
    report = {}
    # The loads each case chases: gpu_bench chooses them from the footprint alone.
    rc, doc = run_gpu_bench(parity, f"{out}.loads.json", "--benchmark_filter=^Latency/", "--rounds=1",
                            "--max_time_per_case=0.01")
    c.check(rc == 0, f"the Latency pass: gpu_bench_parity exited {rc}")
    report["context"] = {k: v for k, v in doc["context"].items() if k.startswith(("gpu", "driver", "host"))}
    c.set_machine(doc)
    for name, b in c.runs_by_name(doc)[1].items():
        if "/numa:remote/" not in name:
            loads[name], warm[name] = int(b["loads"]), int(b.get("warm_loads", 0))
    os.environ["GPU_BENCH_BARE_CHASE"] = ";".join(f"{key_of(n)}={loads[n]},{warm[n]}" for n in loads)
    runs = []
    for k in range(PROCESSES):
        rc, doc = run_gpu_bench(parity, f"{out}.interleaved.json", "--benchmark_filter=^(Latency|BareChase)/",
                                "--rounds=1", f"--benchmark_repetitions={REPETITIONS}",
                                "--benchmark_enable_random_interleaving=true")
        c.check(rc == 0, f"the interleaved run {k + 1}: gpu_bench_parity exited {rc}")
        runs.extend((k, b) for b in iteration_runs(doc))
    bare_of = {key_of(n): n for n in loads}
    for k, b in runs:
        name = b["name"].replace("/manual_time", "")
        c.check(not b.get("error_occurred"), f"{name} failed: {b.get('error_message')}")
        if b.get("error_occurred") or "/numa:remote/" in name:
            continue
        if name.startswith("BareChase/"):
            ours_name = bare_of.get(key_of(name))
            c.check(ours_name is not None, f"{name}: no Latency case of its footprint")
            if ours_name:
                theirs.setdefault(ours_name, {}).setdefault(k, []).append(b["latency_ns"])
            continue
        ours.setdefault(name, {}).setdefault(k, []).append(b["latency_ns"])
        labels.setdefault(name, set()).add(b.get("label", ""))
        c.check(int(b["loads"]) == loads.get(name), f"{name}: loads {b['loads']}, {loads.get(name)} in the first pass")
        c.check(int(b.get("warm_loads", 0)) == warm.get(name),
                f"{name}: warm_loads {b.get('warm_loads')}, {warm.get(name)} in the first pass")

    rows = []
    print(f"\n{'case':<56} {'L':>5} {'warm':>7} {'gpu_bench ns':>13} {'bare ns':>10} {'ratio':>7}  "
          f"{'gpu_bench repetitions':<36} {'bare repetitions':<36} label")
    for name in sorted(ours, key=lambda n: (key_of(n).split("/")[0], axes(n)["pattern"], int(axes(n)["bytes"]))):
        gi, bi = median_interval(process_medians(ours[name])), median_interval(process_medians(theirs.get(name, {})))
        g, b = gi[0], bi[0]
        ratio, interval = ratio_interval(gi, bi) if b > 0 else (float("nan"), (-math.inf, math.inf))
        label = "; ".join(sorted(x for x in labels[name] if x))
        rows.append({"case": name, "gpu_bench_ns": g, "bare_ns": b, "ratio": ratio, "ratio_interval": interval,
                     "loads": loads[name], "warm_loads": warm[name], "label": label,
                     "gpu_bench_repetitions": repetitions(ours[name]),
                     "bare_repetitions": repetitions(theirs.get(name, {}))})
        print(f"{name:<56} {loads[name]:>5} {warm[name]:>7} {g:13.1f} {b:10.1f} {ratio:7.3f}  "
              f"{spread(ours[name]):<36} {spread(theirs.get(name, {})):<36} {label}")
        what = f"{name}: gpu_bench {g:.1f} ns over the bare chase's {b:.1f} ns"
        apart = max(process_spread(ours[name]), process_spread(theirs.get(name, {})))
        if apart > TOLERANCE:
            c.undecided.append(f"{what}: one side's processes lie {apart:.1%} apart, beyond the {TOLERANCE:.0%} judged")
            print("too noisy to judge:", c.undecided[-1])
        else:
            c.judge(what, ratio, interval, low=1 - TOLERANCE, high=1 + TOLERANCE)
    c.check(len(rows) >= 20, f"{len(rows)} Latency cases compared, the default matrix has 20")
    report["comparison"] = rows

    # The family in a default run: 3 rounds, each case's own wall time (set-up, sampling, checks) counted
    # in the last round and taken three times; the processes' start-up is the whole matrix's, not the family's.
    rc, doc = run_gpu_bench(gpu_bench, f"{out}.default.json", "--benchmark_filter=^Latency/")
    c.check(rc == 0, f"default run: gpu_bench exited {rc}")
    rounds = int(doc["context"].get("gpu_bench.rounds", "3"))
    case_wall = sum(b.get("wall_s", 0) for b in doc["benchmarks"] if b.get("run_type", "iteration") == "iteration")
    elapsed = float(doc["context"].get("gpu_bench.elapsed_s", "nan"))
    print(f"\ndefault Latency run: {rounds} rounds, cases {case_wall:.2f} s in the last round, about "
          f"{case_wall * rounds:.2f} s in all; the run took {elapsed:.2f} s with its processes' start-up")
    walls = sorted(((b.get("wall_s", 0), b["name"].replace("/manual_time", "")) for b in doc["benchmarks"]
                    if b.get("run_type", "iteration") == "iteration"), reverse=True)
    for w, name in walls[:6]:
        print(f"  {name:<56} {w * 1e3:8.1f} ms in the last round")
    report["budget"] = {"rounds": rounds, "last_round_cases_s": case_wall, "estimate_s": case_wall * rounds,
                        "elapsed_s": elapsed}
    c.check_effect(case_wall * rounds <= BUDGET_S, f"Latency takes about {case_wall * rounds:.1f} s, over {BUDGET_S} s")
    # A footprint larger than the GPU and the host hold: one line, exit 2, before any case runs.
    big = f"{out}.too_big.json"
    r = subprocess.run([gpu_bench, "--sizes=1T", "--benchmark_filter=^Latency/", f"--benchmark_out={big}"],
                       capture_output=True, text=True, timeout=120)
    line = c.refusal_line(r.stderr)
    print(f"--sizes=1T: exit {r.returncode}: {r.stderr.strip()}")
    c.check(r.returncode == 2 and line is not None and "--sizes" in line, f"--sizes=1T: exit {r.returncode}, {r.stderr!r}")
    c.check(not os.path.exists(big), "--sizes=1T left an output file")
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    return c.finish(f"{len(rows)} Latency cases within {TOLERANCE:.0%} of the bare chase")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
