#!/usr/bin/env python3
"""Overlap's speedups beside the seed material's overlap demo (tests/gpu/seed_overlap.cu), run on the same
machine right after the gpu_bench run: pinned 512 MiB (the demo's kernel is Overlap's work 1), 4, 8, 16 and
32 streams. Both sides' figures carry the spread between processes, as a figure of one process is a draw
from them: where its buffers landed, and the link's state then, differ from one process to the next.

The demo: run in P processes of its own (--processes, default 5), each of R repetitions (--repetitions,
default 3). A repetition's speedup is its sequential time over the faster of its V1 and V2; a process's is
the median of its repetitions'; the demo's figure is the median over the processes of theirs, its interval
the 95% confidence interval of that median over the processes (the tools' statistics, gpu_common's
median_interval: with five processes, every process's range; with one, unbounded).

Overlap: its speedup at S streams is the larger of its depth_first and breadth_first cases' (sync end)
`speedup`, as the case reports it (the serial schedule measured in the last round's process over that
round's time). Its interval, where the file has rounds (each round its own process), is the interval of
serial / pipeline that the two cases' own intervals allow: the 95% confidence interval of the median of the
serial case's `round_times_s` (`Overlap/schedule:serial/mem:pinned/streams:1/bytes:536870912/work:1/sync:end`)
over that of the pipeline case's, the serial's largest over the pipeline's smallest and the other way round
(gpu_common's ratio_interval; with three rounds, every round's range on each side), widened to take in the
figure itself. A file of one round gives no spread between processes: the interval is the figure alone.

Verdict per stream count: "below" where Overlap's interval lies wholly below the demo's (a shortfall
beyond either side's spread between processes); "at or above" where Overlap's figure is at or above the
demo's; otherwise "within" (below the demo's figure, but not told apart from it). "missing" where the file lacks the
case. Writes every figure (each side's per-process or per-round values, intervals and verdicts) to
OUT.json, prints a table, and exits 1 where any stream count is below or missing (0 otherwise).

usage: seed_compare.py GPU_BENCH.json SEED_OVERLAP OUT.json [--processes P] [--repetitions R] [--device D]
       (defaults also from SEED_COMPARE_PROCESSES, SEED_COMPARE_REPETITIONS, SEED_COMPARE_DEVICE)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
from gpu_common import iteration_runs, median_interval, ratio_interval  # noqa: E402

BYTES = 512 << 20
STREAMS = (4, 8, 16, 32)
CASE = "Overlap/schedule:{}/mem:pinned/streams:{}/bytes:%d/work:1/sync:end" % BYTES
SERIAL = CASE.format("serial", 1)
PROCESS_TIMEOUT_S = 300


def read_runs(path):
    """Each case's iteration runs in a gpu_bench file: {name without /manual_time: [run, ...]}."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"seed_compare: cannot read {path}: {e}")
    runs = {}
    for b in iteration_runs(doc):
        if not b.get("error_occurred"):
            runs.setdefault(b["run_name"].replace("/manual_time", ""), []).append(b)
    return runs


def rounds_of(runs):
    """Every round time of a case's runs (each repetition's rounds, in turn)."""
    return [t for b in runs for t in b.get("round_times_s", [])]


def overlap_speedups(runs):
    """Per stream count, Overlap's figure: {S: {"speedup", "case", "interval", "pipeline_rounds_s",
    "serial_rounds_s"}}, the interval None where either case has fewer than two rounds."""
    serial_rounds = rounds_of(runs.get(SERIAL, []))
    best = {}
    for s in STREAMS:
        found = [(statistics.median(b["speedup"] for b in runs[n]), n)
                 for n in (CASE.format(sc, s) for sc in ("depth_first", "breadth_first"))
                 if n in runs and all("speedup" in b for b in runs[n])]
        if not found:
            continue
        speedup, case = max(found)
        pipeline_rounds = rounds_of(runs[case])
        interval = None
        if len(serial_rounds) >= 2 and len(pipeline_rounds) >= 2:
            _, (lo, hi) = ratio_interval(median_interval(serial_rounds), median_interval(pipeline_rounds))
            interval = [min(lo, speedup), max(hi, speedup)]
        best[s] = {"speedup": speedup, "case": case, "interval": interval, "pipeline_rounds_s": pipeline_rounds,
                   "serial_rounds_s": serial_rounds}
    return best


def run_demo(exe, repetitions, device):
    """One process of the demo: {S: its JSON line}."""
    try:
        r = subprocess.run([exe, str(BYTES), ",".join(map(str, STREAMS)), str(repetitions), str(device)],
                           capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SystemExit(f"seed_overlap failed: {e}")
    if r.returncode != 0:
        raise SystemExit(f"seed_overlap failed (exit {r.returncode}): {r.stderr.strip()}")
    return {row["streams"]: row for row in (json.loads(line) for line in r.stdout.splitlines() if line.strip())}


def demo_speedups(processes):
    """Per stream count, the demo's figure from its processes' outputs (each as run_demo returns it): {S:
    {"speedup", "interval", "per_process", "per_repetition", "outputs"}}."""
    out = {}
    for s in STREAMS:
        per_rep = []
        for p in processes:
            d = p[s]
            per_rep.append([q / min(a, b) for q, a, b in zip(d["sequential_ms"], d["v1_ms"], d["v2_ms"])])
        per_process = [statistics.median(r) for r in per_rep]
        med, (lo, hi) = median_interval(per_process)
        out[s] = {"speedup": med, "interval": [lo, hi], "per_process": per_process, "per_repetition": per_rep,
                  "outputs": [p[s] for p in processes]}
    return out


def verdict(ours, theirs):
    """"below", "at or above", "within" or "missing": Overlap's figure (as overlap_speedups gives it, or None)
    against the demo's (as demo_speedups gives it)."""
    if ours is None:
        return "missing"
    hi = (ours["interval"] or [ours["speedup"]] * 2)[1]
    if hi < theirs["interval"][0]:
        return "below"
    if ours["speedup"] >= theirs["speedup"]:
        return "at or above"
    return "within"


def main(argv=None):
    env = os.environ.get
    ap = argparse.ArgumentParser(description=__doc__.strip().split("\nusage: ", 1)[0],
                                 usage=__doc__.strip().split("usage: ", 1)[1].splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="gpu_bench's JSON, with the pinned 512 MiB Overlap cases")
    ap.add_argument("seed_exe", help="the seed_overlap executable")
    ap.add_argument("out", help="where every figure is written")
    ap.add_argument("--processes", type=int, default=int(env("SEED_COMPARE_PROCESSES", "5")),
                    help="the demo's processes (default %(default)s)")
    ap.add_argument("--repetitions", type=int, default=int(env("SEED_COMPARE_REPETITIONS", "3")),
                    help="repetitions in each of them (default %(default)s)")
    ap.add_argument("--device", default=env("SEED_COMPARE_DEVICE", "0"), help="the GPU (default %(default)s)")
    a = ap.parse_args(argv)
    if a.processes < 1 or a.repetitions < 1:
        ap.error("at least one process and one repetition")
    ours = overlap_speedups(read_runs(a.results))
    theirs = demo_speedups([run_demo(a.seed_exe, a.repetitions, a.device) for _ in range(a.processes)])
    rows, failed = [], []

    def span(iv):
        return f"{iv[0]:6.3f} to {iv[1]:6.3f}" if iv else f"{'(one round)':>16}"

    print(f"demo: {a.processes} processes of {a.repetitions} repetitions")
    print(f"{'streams':>7}  {'gpu_bench (interval)':>27}  {'seed demo (95% interval)':>27}  verdict")
    for s in STREAMS:
        mine, d = ours.get(s), theirs[s]
        v = verdict(mine, d)
        if v in ("below", "missing"):
            failed.append(s)
        rows.append({"streams": s, "verdict": v,
                     "gpu_bench_speedup": mine["speedup"] if mine else None,
                     "gpu_bench_case": mine["case"] if mine else None,
                     "gpu_bench_interval": mine["interval"] if mine else None,
                     "gpu_bench_pipeline_rounds_s": mine["pipeline_rounds_s"] if mine else [],
                     "gpu_bench_serial_rounds_s": mine["serial_rounds_s"] if mine else [],
                     "seed_speedup": d["speedup"], "seed_interval": d["interval"],
                     "seed_per_process": d["per_process"], "seed_per_repetition": d["per_repetition"],
                     "seed_outputs": d["outputs"]})
        shown = f"{mine['speedup']:6.3f} ({span(mine['interval'])})" if mine else f"{'-':>27}"
        print(f"{s:7d}  {shown:>27}  {d['speedup']:6.3f} ({span(d['interval'])})  {v}")
    with open(a.out, "w") as f:
        json.dump({"gpu_bench_file": a.results, "bytes": BYTES, "processes": a.processes,
                   "repetitions": a.repetitions, "rows": rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
