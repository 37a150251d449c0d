#!/usr/bin/env python3
"""GPU test: every default Latency case against a bare pointer chase (bare_chase, no gpu_bench code) on the
same GPU in the same call, interleaved: gpu_bench over every Latency case, then the bare chase over each,
then gpu_bench again, and so on (ABAB), each case's medians over the passes compared: within 3%, judged with
the interval of both medians (a case fails only where the whole interval misses; where it straddles the
limit the test is skipped as too noisy to judge). Also times
a default Latency-only run (3 rounds): the family must take at most 10 s of cases; and a footprint larger
than the GPU holds is refused in one line. Prints a table of case,
L, warm_loads, gpu_bench ns, bare ns, ratio, each pass's median of both, the fastest and slowest sample of
both and gpu_bench's label; writes every figure to OUT.json.

Cases with numa:remote (a host with two NUMA nodes) are left out: the bare chase does not place memory.

usage: latency_check.py GPU_BENCH BARE_CHASE OUT.json
"""
import json
import math
import os
import subprocess
import sys

from gpu_common import Checker, median_interval, ratio_interval, run_bare, run_gpu_bench

PASSES = 3  # of each side, alternating
BARE_SAMPLES = 30
TOLERANCE = 0.03
BUDGET_S = 10.0


def axes(name):
    return dict(part.split(":", 1) for part in name.split("/")[1:] if ":" in part)


def bare(exe, case, loads, warm):
    a = axes(case)
    return run_bare([exe, a["mem"], a["pattern"], a["bytes"], loads, warm, BARE_SAMPLES], f"bare_chase for {case}")


def spread(values):
    return f"{min(values):.1f}..{max(values):.1f}" if values else "-"


def main(gpu_bench, bare_exe, out):
    c = Checker()
    ours, theirs, loads, warm, labels = {}, {}, {}, {}, {}
    our_samples, their_samples = {}, {}
    report = {"passes": []}
    for p in range(PASSES):
        # One round per pass: the passes themselves are the independent processes compared. Every sample is
        # written, so a case that differs shows its fastest and slowest beside the bare chase's.
        rc, doc = run_gpu_bench(gpu_bench, f"{out}.pass{p}.json", "--benchmark_filter=^Latency/", "--rounds=1",
                                "--samples=on")
        c.check(rc == 0, f"pass {p}: gpu_bench exited {rc}")
        if p == 0:
            report["context"] = {k: v for k, v in doc["context"].items() if k.startswith(("gpu", "driver", "host"))}
            c.set_machine(doc)
        runs, ok = c.runs_by_name(doc)
        for name, b in ok.items():
            if "/numa:remote/" in name:
                continue
            ours.setdefault(name, []).append(b["latency_ns"])
            loads.setdefault(name, int(b["loads"]))
            warm.setdefault(name, int(b.get("warm_loads", 0)))
            labels.setdefault(name, set()).add(b.get("label", ""))
            our_samples.setdefault(name, []).extend(t / loads[name] * 1e9 for t in b.get("sample_times_s", []))
            c.check(int(b["loads"]) == loads[name], f"{name}: loads {b['loads']} in pass {p}, {loads[name]} before")
            c.check(int(b.get("warm_loads", 0)) == warm[name],
                    f"{name}: warm_loads {b.get('warm_loads')} in pass {p}, {warm[name]} before")
        for name in sorted(loads):
            r = bare(bare_exe, name, loads[name], warm[name])
            theirs.setdefault(name, []).append(r["latency_ns"])
            their_samples.setdefault(name, []).extend(r["samples_ns"])
            c.check(r.get("chase_checked", False), f"{name}: the bare chase did not end where its loads lead")
        report["passes"].append({"gpu_bench": {n: v[-1] for n, v in ours.items()},
                                 "bare": {n: v[-1] for n, v in theirs.items()}})

    rows = []
    print(f"\n{'case':<56} {'L':>5} {'warm':>7} {'gpu_bench ns':>13} {'bare ns':>10} {'ratio':>7}  "
          f"{'gpu_bench passes':<26} {'bare passes':<26} {'gpu_bench samples':<18} {'bare samples':<18} label")
    for name in sorted(ours, key=lambda n: (axes(n)["mem"], axes(n)["pattern"], int(axes(n)["bytes"]))):
        gi, bi = median_interval(ours[name]), median_interval(theirs.get(name) or [float("nan")])
        g, b = gi[0], bi[0]
        ratio, interval = ratio_interval(gi, bi) if b > 0 else (float("nan"), (-math.inf, math.inf))
        label = "; ".join(sorted(x for x in labels[name] if x))
        rows.append({"case": name, "gpu_bench_ns": g, "bare_ns": b, "ratio": ratio, "loads": loads[name],
                     "warm_loads": warm[name], "label": label,
                     "gpu_bench_passes": ours[name], "bare_passes": theirs.get(name, []),
                     "gpu_bench_min_ns": min(our_samples[name], default=None),
                     "gpu_bench_max_ns": max(our_samples[name], default=None),
                     "bare_min_ns": min(their_samples.get(name, []), default=None),
                     "bare_max_ns": max(their_samples.get(name, []), default=None)})
        passes_g = " ".join(f"{v:.1f}" for v in ours[name])
        passes_b = " ".join(f"{v:.1f}" for v in theirs.get(name, []))
        print(f"{name:<56} {loads[name]:>5} {warm[name]:>7} {g:13.1f} {b:10.1f} {ratio:7.3f}  {passes_g:<26} "
              f"{passes_b:<26} {spread(our_samples[name]):<18} {spread(their_samples.get(name, [])):<18} {label}")
        # The two alternate pass by pass, seconds apart: a load from another process on the GPU's link that
        # comes and goes within a pass can land on one side's host-memory chases and not the other's.
        shared = c.shared_gpu and axes(name)["mem"] != "device"
        c.judge(f"{name}: gpu_bench {g:.1f} ns over the bare chase's {b:.1f} ns", ratio, interval,
                low=1 - TOLERANCE, high=1 + TOLERANCE,
                cannot_fail_because="host memory, and other processes shared the GPU" if shared else None)
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
