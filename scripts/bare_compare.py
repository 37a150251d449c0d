#!/usr/bin/env python3
"""gpu_bench's host-copy figures beside a bare event-timed cudaMemcpyAsync loop (tests/gpu/bare_memcpy.cu),
run on the same machine right after it: pinned, write_combined, registered and pageable; h2d and d2h;
1 MiB, 256 MiB and 1 GiB. For the gated kinds the bare figure is its median of single copies queued
between event pairs behind a hold (no host gap inside a pair: what a gated case measures); for pageable,
whose copy waits in the call, its median of single copies each between an event pair. Writes every figure
and the ratio gpu_bench / bare to OUT.json and prints a table.

usage: bare_compare.py GPU_BENCH.json BARE_MEMCPY OUT.json [DEVICE]
"""
import json
import statistics
import subprocess
import sys

KINDS = ("pinned", "write_combined", "registered", "pageable")
SIZES = (1 << 20, 256 << 20, 1 << 30)
ITERATIONS = {1 << 20: 400, 256 << 20: 30, 1 << 30: 12}


def gpu_bench_figures(path):
    """gbps per case name (without /manual_time): the median over repetitions of each case's figure."""
    with open(path) as f:
        doc = json.load(f)
    runs = {}
    for b in doc["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred") or "gbps" not in b:
            continue
        runs.setdefault(b["run_name"].replace("/manual_time", ""), []).append(b["gbps"])
    return {name: statistics.median(v) for name, v in runs.items()}


def bare(exe, direction, kind, nbytes, device):
    r = subprocess.run([exe, direction, str(nbytes), str(ITERATIONS[nbytes]), device, kind], capture_output=True,
                       text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"bare_memcpy {direction} {kind} {nbytes} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def main(results, bare_exe, out, device="0"):
    ours = gpu_bench_figures(results)
    rows = []
    for kind in KINDS:
        for direction in ("h2d", "d2h"):
            for nbytes in SIZES:
                name = f"Transfer/dir:{direction}/mem:{kind}/bytes:{nbytes}"
                ref = bare(bare_exe, direction, kind, nbytes, device)
                bare_gbps = ref["per_copy_median_gbps"] if kind == "pageable" else ref["queued_median_gbps"]
                row = {"case": name, "gpu_bench_gbps": ours.get(name), "bare_gbps": bare_gbps, "bare": ref}
                row["ratio"] = row["gpu_bench_gbps"] / bare_gbps if row["gpu_bench_gbps"] else None
                rows.append(row)
                ratio = f"{row['ratio']:.4f}" if row["ratio"] else "missing"
                print(f"{name:52s} gpu_bench {row['gpu_bench_gbps'] or 0:8.3f}  bare {bare_gbps:8.3f}  ratio {ratio}")
    with open(out, "w") as f:
        json.dump({"gpu_bench_file": results, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    sys.exit(main(*sys.argv[1:5]))
