"""How long gpu-bench-fleet takes over 1,000 nodes' default runs, and whether it finds every planted fault and
flags no other GPU (run on demand).

Builds the nodes from the committed default runs (results/sampled/default_h100.json.gz and default_h200.json.gz,
half of the nodes each), every case's figure redrawn as that node's own run would give it and a few GPUs
made 20-30% slower one way over their host link or out of their own memory (tools/tests/synth_fleet.py
says how), then times `gpu-bench-fleet` over all the files as a whole process (median of 5 runs,
time.perf_counter around the process) and checks its JSON: every planted GPU flagged, no other GPU flagged.
--grid also judges the same files in-process under other thresholds (how much margin the defaults have).
Needs the package installed (pip install -e tools). Exit status 1 when the check fails.

    python tools/benchmarks/bench_fleet.py [--nodes 1000] [--faults 12] [--noise samples|repetitions]
                                           [--seed 1] [--dir DIR] [--grid]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import synth_fleet  # noqa: E402


def check(report: dict, planted: dict) -> tuple[list[str], list[str]]:
    """(planted GPUs not flagged, GPUs flagged that were not planted)."""
    flagged = {g["host"] for g in report["gpus_flagged"]}
    return sorted(set(planted) - flagged), sorted(flagged - set(planted))


def grid(paths: list[str], planted: dict) -> None:
    from gpu_bench_tools.fleet import cohorts, node_runs

    inputs = node_runs.read_files(paths)
    print("score  min-effect  min-cases  planted found  others flagged  lone outliers  crowded cases")
    for score in (4.0, 5.0, 6.0, 8.0):
        for effect in (3.0, 5.0):
            for cases in (1, 2, 3):
                rep = cohorts.analyse(inputs, score=score, min_effect_pct=effect, min_cases=cases)
                flagged = {g.host for g, _ in rep.ranked()}
                print(f"{score:5g}  {effect:9g}%  {cases:9d}  {len(flagged & set(planted)):6d} of {len(planted):<3d}  "
                      f"{len(flagged - set(planted)):14d}  {len(rep.lone):13d}  {len(rep.crowds):13d}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--faults", type=int, default=12)
    ap.add_argument("--noise", choices=("samples", "repetitions"), default="samples")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", type=Path, help="build the nodes here and keep them (default: a temporary folder)")
    ap.add_argument("--grid", action="store_true", help="also judge the files under other thresholds")
    args = ap.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="fleet-"))
    try:
        t0 = time.perf_counter()
        faults = synth_fleet.spread_faults(args.nodes, args.faults, seed=args.seed + 6)
        paths, planted = synth_fleet.build(work / "nodes", args.nodes, faults, seed=args.seed, noise=args.noise)
        size = sum(Path(p).stat().st_size for p in paths)
        print(f"built {len(paths)} nodes ({size / 1e6:.0f} MB, noise from the {args.noise}) in "
              f"{time.perf_counter() - t0:.0f} s; planted: " +
              ", ".join(f"{h} {k} x{f:.2f}" for h, (k, f) in sorted(planted.items())))
        out = work / "fleet.json"
        cmd = [sys.executable, "-m", "gpu_bench_tools.cli.fleet", *paths, "--format", "json", "--out", str(out)]
        walls = []
        for _ in range(5):
            t0 = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True)
            walls.append(time.perf_counter() - t0)
            if p.returncode not in (0, 1):
                print(f"gpu-bench-fleet failed ({p.returncode}): {p.stderr.strip()}")
                return 1
        report = json.loads(out.read_text())
        print(f"gpu-bench-fleet over {len(paths)} nodes, whole process: median {statistics.median(walls):.2f} s of 5 "
              f"(min {min(walls):.2f}, max {max(walls):.2f})")
        print(report["summary"])
        missed, extra = check(report, planted)
        print(f"planted GPUs found: {len(planted) - len(missed)} of {len(planted)}"
              + (f" (missed: {', '.join(missed)})" if missed else "")
              + f"; other GPUs flagged: {len(extra)}" + (f" ({', '.join(extra)})" if extra else ""))
        if args.grid:
            grid(paths, planted)
        return 1 if missed or extra else 0
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
