#!/usr/bin/env python3
"""Host-only test of scripts/seed_compare.py on made-up figures: the demo (a stand-in printing the demo's
lines) runs in as many processes as asked, each with the repetitions asked; its figure is the median of
the processes' medians and its interval that median's over the processes; Overlap's interval comes from
its serial and pipeline cases' rounds, or is its figure alone in a file of one round; the verdicts "below"
(only where Overlap's whole interval is under the demo's), "within", "at or above" and "missing", and the
exit status 1 only where one is below or missing. Needs no GPU.

usage: seed_compare_test.py
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import gpu_common as g

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import seed_compare as sc  # noqa: E402

# Each demo process's speedup per stream count (five processes).
DEMO = {4: [1.600, 1.605, 1.610, 1.615, 1.620], 8: [1.80, 1.81, 1.82, 1.83, 1.84],
        16: [1.85, 1.86, 1.87, 1.88, 1.89], 32: [1.85, 1.86, 1.87, 1.88, 1.89]}
SERIAL_ROUNDS = [21.60e-3, 21.62e-3, 21.64e-3]

# A stand-in for tests/gpu/seed_overlap: process k (the k-th call, counted in CALLS) prints, per stream
# count, repetitions whose speedups are DEMO's k-th figure times 1, 0.98 and 1.02 (their median the figure),
# V1 the faster of V1 and V2.
FAKE = r'''#!{python}
import json, sys
calls = {calls!r}
with open(calls, "a+") as f:
    f.seek(0)
    k = len(f.read().splitlines())
    f.write(" ".join(sys.argv[1:]) + "\n")
demo = {demo!r}
bytes_, streams, reps = int(sys.argv[1]), [int(s) for s in sys.argv[2].split(",")], int(sys.argv[3])
for s in streams:
    t = demo[s][k % len(demo[s])]
    factors = ([1.0, 0.98, 1.02] * reps)[:reps]
    seq = [21.6] * reps
    v1 = [q / (t * f) for q, f in zip(seq, factors)]
    print(json.dumps({{"streams": s, "bytes": bytes_, "sequential_ms": seq, "v1_ms": v1,
                      "v2_ms": [x * 1.1 for x in v1], "max_error": 0}}))
'''


def close(a, b):
    """Two figures, or two lists of them, equal but for rounding."""
    if isinstance(a, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return math.isclose(a, b, rel_tol=1e-9)


def bench(name, speedup, rounds=None):
    b = {"name": name + "/manual_time", "run_name": name + "/manual_time", "run_type": "iteration",
         "speedup": speedup}
    if rounds:
        b["round_times_s"] = rounds
    return b


def doc(ours, with_rounds=True):
    """A gpu_bench file: the serial case and, per stream count, depth_first and breadth_first (the latter
    0.01 below, so the former is the figure); ours {S: (speedup, pipeline rounds)}."""
    runs = [bench(sc.SERIAL, 1.0, SERIAL_ROUNDS if with_rounds else None)]
    for s, (speedup, rounds) in ours.items():
        runs.append(bench(sc.CASE.format("depth_first", s), speedup, rounds if with_rounds else None))
        runs.append(bench(sc.CASE.format("breadth_first", s), speedup - 0.01, rounds if with_rounds else None))
    return {"context": {}, "benchmarks": runs}


def run(tmp, name, document, *args):
    """seed_compare.py on `document` with the stand-in demo: (exit status, OUT.json, the demo's calls)."""
    calls = os.path.join(tmp, name + ".calls")
    exe = os.path.join(tmp, name + "_demo")
    with open(exe, "w") as f:
        f.write(FAKE.format(python=sys.executable, calls=calls, demo=DEMO))
    os.chmod(exe, 0o755)
    results, out = os.path.join(tmp, name + ".json"), os.path.join(tmp, name + "_out.json")
    with open(results, "w") as f:
        json.dump(document, f)
    script = os.path.join(os.path.dirname(sc.__file__), "seed_compare.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEED_COMPARE_")}
    r = subprocess.run([sys.executable, script, results, exe, out, *args], capture_output=True, text=True, env=env)
    with open(calls) as f:
        made = f.read().splitlines()
    with open(out) as f:
        return r.returncode, {row["streams"]: row for row in json.load(f)["rows"]}, made, r.stdout + r.stderr


def main():
    expect = g.Expectations()
    with tempfile.TemporaryDirectory() as tmp:
        # 4 streams: a figure under the demo's interval, but rounds from 1.543 to 1.627 reach into it;
        # 8: every round under it; 16: at the demo's low end, under its figure; 32: above it.
        ours = {4: (1.578, [13.3e-3, 13.7e-3, 14.0e-3]), 8: (1.70, [12.70e-3, 12.72e-3, 12.74e-3]),
                16: (1.85, [11.6e-3, 11.7e-3, 11.8e-3]), 32: (1.88, [11.4e-3, 11.5e-3, 11.6e-3])}
        rc, rows, calls, said = run(tmp, "rounds", doc(ours))
        expect(rc == 1, f"a stream count below exits 1, not {rc}: {said}")
        expect([rows[s]["verdict"] for s in sc.STREAMS] == ["within", "below", "within", "at or above"],
               f"verdicts {[rows[s]['verdict'] for s in sc.STREAMS]}")
        expect(len(calls) == 5 and all(c.split()[2] == "3" for c in calls),
               f"the demo runs in 5 processes of 3 repetitions by default: {calls}")
        r4 = rows[4]
        expect(close(r4["seed_speedup"], 1.610) and close(r4["seed_interval"], [1.600, 1.620]),
               f"the demo's figure is the median of its processes', its interval their range: {r4['seed_speedup']}, "
               f"{r4['seed_interval']}")
        expect(len(r4["seed_per_process"]) == 5 and len(r4["seed_per_repetition"][0]) == 3
               and len(r4["seed_outputs"]) == 5, "every process's and repetition's figure is kept")
        expect(close(r4["seed_per_process"], DEMO[4]),
               f"a process's figure is the median of its repetitions': {r4['seed_per_process']}")
        lo, hi = r4["gpu_bench_interval"]
        expect(close([lo, hi], [21.60 / 14.0, 21.64 / 13.3]),
               f"Overlap's interval is the serial rounds' over the pipeline rounds': {lo}, {hi}")
        expect(r4["gpu_bench_case"] == sc.CASE.format("depth_first", 4) and r4["gpu_bench_speedup"] == 1.578
               and r4["gpu_bench_pipeline_rounds_s"] == ours[4][1] and r4["gpu_bench_serial_rounds_s"] == SERIAL_ROUNDS,
               "Overlap's figure is the faster schedule's speedup, its rounds kept")
        lo, hi = rows[32]["gpu_bench_interval"]
        expect(lo <= 1.88 <= hi, f"Overlap's interval takes in its figure: {lo} to {hi}")

        # The same speedups in a file of one round: the figure alone, so 4 streams is now below.
        rc, rows, calls, said = run(tmp, "one_round", doc(ours, with_rounds=False), "--processes", "2",
                                    "--repetitions", "1")
        expect(rc == 1 and rows[4]["verdict"] == "below" and rows[4]["gpu_bench_interval"] is None,
               f"one round: the figure alone ({rows[4]['verdict']}, exit {rc})")
        expect(len(calls) == 2 and all(c.split()[2] == "1" for c in calls),
               f"--processes and --repetitions set the demo's runs: {calls}")
        expect(close(rows[16]["seed_per_repetition"], [[1.85], [1.86]]),
               f"one repetition per process: {rows[16]['seed_per_repetition']}")

        # Nothing below: exit 0. And a missing stream count exits 1.
        fine = dict(ours)
        fine[8] = (1.79, [12.0e-3, 12.1e-3, 12.2e-3])  # 21.64 / 12.0 = 1.803 reaches the demo's 1.80
        rc, rows, _, said = run(tmp, "fine", doc(fine))
        expect(rc == 0 and rows[8]["verdict"] == "within", f"within and at or above exit 0: {rc}, {said}")
        del fine[32]
        rc, rows, _, _ = run(tmp, "missing", doc(fine))
        expect(rc == 1 and rows[32]["verdict"] == "missing" and rows[32]["gpu_bench_speedup"] is None,
               f"a missing case exits 1 ({rc}, {rows[32]['verdict']})")

    theirs = {"speedup": 1.61, "interval": [1.60, 1.62]}
    cases = [({"speedup": 1.59, "interval": [1.55, 1.599]}, "below"),
             ({"speedup": 1.59, "interval": [1.55, 1.60]}, "within"),
             ({"speedup": 1.60, "interval": [1.55, 1.61]}, "within"),
             ({"speedup": 1.61, "interval": [1.55, 1.61]}, "at or above"),
             ({"speedup": 1.65, "interval": None}, "at or above"),
             ({"speedup": 1.59, "interval": None}, "below"),
             (None, "missing")]
    for ours_, want in cases:
        expect(sc.verdict(ours_, theirs) == want, f"{ours_}: {sc.verdict(ours_, theirs)}, not {want}")
    return expect.finish("ok: seed_compare judges both sides' spread between processes")


if __name__ == "__main__":
    sys.exit(main())
