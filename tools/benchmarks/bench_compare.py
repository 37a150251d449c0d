"""How long `gpu-bench-compare` takes on two full default files, against its start-up alone (run on demand).

The two files are the committed H100 and H200 runs of every family put together (Transfer with 5
repetitions, the latency/stream/event families with 5, Overlap and HostBlocking), as one default run of
each machine would write them. Each figure is the whole-process wall time (time.perf_counter around the
process), median of 5 runs. Needs the package installed (pip install -e tools).

    python tools/benchmarks/bench_compare.py
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MACHINES = {
    "h100": ("results/transfer_h100_reps5.json", "results/families/families_reps5_h100.json",
             "results/overlap/overlap_reps3_h100.json"),
    "h200": ("results/transfer_h200_reps5.json", "results/families/families_reps5_h200.json",
             "results/overlap/overlap_h200.json"),
}


def full_file(parts: tuple[str, ...], out: Path) -> Path:
    context, entries = None, []
    for rel in parts:
        doc = json.loads((REPO / rel).read_text())
        context = context or doc["context"]
        entries += doc["benchmarks"]
    out.write_text(json.dumps({"context": context, "benchmarks": entries}))
    return out


def wall(argv: list[str], runs: int = 5) -> tuple[float, int]:
    times, code = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        code = subprocess.run(argv, capture_output=True).returncode
        times.append(time.perf_counter() - t0)
    return statistics.median(times), code


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        a, b = (full_file(parts, Path(tmp) / f"{name}.json") for name, parts in MACHINES.items())
        cases = len({e["run_name"] for e in json.loads(a.read_text())["benchmarks"]})
        py = sys.executable
        rows = [
            ("python start-up and import of the command", [py, "-c", "import gpu_bench_tools.cli.compare"]),
            ("gpu-bench-compare --help", [py, "-m", "gpu_bench_tools.cli.compare", "--help"]),
            ("start-up with scipy.stats loaded (what any comparison needs)",
             [py, "-c", "import gpu_bench_tools.cli.compare, scipy.stats"]),
            (f"gpu-bench-compare of two full files ({cases} cases each)",
             [py, "-m", "gpu_bench_tools.cli.compare", str(a), str(b)]),
            ("the same, --format json", [py, "-m", "gpu_bench_tools.cli.compare", str(a), str(b), "--format", "json"]),
        ]
        for what, argv in rows:
            t, code = wall(argv)
            print(f"{t:6.2f} s  {what} (exit {code})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
