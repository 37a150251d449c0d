"""How long `gpu-bench-history check` takes over a year of nightly runs of ten machines (run on demand).

Builds a history database of 10 machines x 365 nights (3,650 runs) of the 460 cases of three committed
runs (Transfer, the families, Overlap and HostBlocking of an H100), each night one repetition per case
with a little noise, the last two nights of one machine 15% slower on pinned copies; then times `check`
in-process (time.perf_counter) and as a whole process. Needs the package installed (pip install -e tools).

    python tools/benchmarks/bench_history_check.py [--machines 10] [--nights 365] [--db PATH]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("results/transfer_h100_reps5.json", "results/families/families_reps5_h100.json",
           "results/overlap/overlap_h100_ca27453.json")


def template() -> tuple[dict, list[dict]]:
    context, entries = None, []
    for rel in SOURCES:
        doc = json.loads((REPO / rel).read_text())
        context = context or doc["context"]
        entries += [e for e in doc["benchmarks"] if e.get("run_type") == "iteration" and e.get("repetition_index", 0) == 0]
    return context, entries


def night(context: dict, entries: list[dict], machine: int, day: int, rng: random.Random, slow: bool) -> dict:
    ctx = dict(context)
    ctx["date"] = time.strftime("%Y-%m-%dT02:00:00+00:00", time.gmtime(1735696800 + day * 86400))
    ctx["host_name"] = f"node-{machine:02d}"
    ctx["gpu.uuid"] = ctx["gpu.0.uuid"] = f"GPU-bench-{machine:04d}"
    out = []
    for e in entries:
        f = rng.gauss(1.0, 0.005) * (1.15 if slow and "/mem:pinned/" in e["name"] else 1.0)
        e = dict(e, real_time=e["real_time"] * f, cpu_time=e["cpu_time"] * f, repetitions=1, repetition_index=0)
        for k in ("gbps", "bytes_per_second"):
            if k in e:
                e[k] = e[k] / f
        out.append(e)
    return {"context": ctx, "benchmarks": out}


def build(db: Path, machines: int, nights: int) -> None:
    from gpu_bench_tools.history import series

    context, entries = template()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        for m in range(machines):
            paths = []
            for d in range(nights):
                p = Path(tmp) / f"m{m}_{d}.json"
                p.write_text(json.dumps(night(context, entries, m, d, rng, slow=(m == 0 and d >= nights - 2))))
                paths.append(p)
            series.ingest(db, paths)
            for p in paths:
                p.unlink()
            print(f"machine {m + 1} of {machines}: {nights} runs of {len(entries)} cases ingested", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--machines", type=int, default=10)
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--db", type=Path, help="reuse (or keep) the database here")
    args = ap.parse_args()
    from gpu_bench_tools.history import check as history_check

    db = args.db or Path(tempfile.mkdtemp()) / "history.sqlite"
    if not db.exists():
        t0 = time.perf_counter()
        build(db, args.machines, args.nights)
        print(f"built {db} in {time.perf_counter() - t0:.0f} s ({db.stat().st_size / 1e6:.0f} MB)")
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        rep = history_check.check(db)
        times.append(time.perf_counter() - t0)
    regressions = len(rep.failures())
    print(f"check in-process: median {sorted(times)[2]:.2f} s of 5 ({len(rep.machines)} machines, "
          f"{sum(m.cases_checked for m in rep.machines)} case series, {regressions} regressions)")
    walls = []
    for _ in range(5):
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "gpu_bench_tools.cli.history", "--db", str(db), "check"],
                           capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
    print(f"gpu-bench-history check, whole process: median {sorted(walls)[2]:.2f} s of 5 (exit {p.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
