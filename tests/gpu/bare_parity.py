#!/usr/bin/env python3
"""GPU test: gpu_bench's pinned Transfer cases against a bare event-timed cudaMemcpyAsync loop run in the
same process tree: at 256 MiB the best of 3 repetitions must reach at least 97% of the bare loop's best
variant (the acceptance figure is 99%; the test leaves room for run-to-run noise), and at 4 B the median GPU time must be close to
the bare loop's queued event pairs within 0.6 us (one copy between two events with no host gap inside: the
quantity a gated case measures). Writes every variant's figures to OUT.json.

usage: bare_parity.py GPU_BENCH BARE_MEMCPY OUT.json
"""
import json
import sys

from gpu_common import Checker, iteration_runs, run_bare, run_gpu_bench


def bare(exe, direction, nbytes, iters):
    return run_bare([exe, direction, nbytes, iters], "bare_memcpy")


def main(gpu_bench, bare_exe, out):
    report = {"bare": [], "gpu_bench": {}}
    for d in ("h2d", "d2h"):
        report["bare"].append(bare(bare_exe, d, 256 << 20, 40))
        report["bare"].append(bare(bare_exe, d, 4, 20000))
    rc, doc = run_gpu_bench(gpu_bench, out + ".gpu_bench.json",
                            "--benchmark_filter=Transfer/dir:(h2d|d2h)/mem:pinned/bytes:(4|268435456)/",
                            "--benchmark_repetitions=3")
    report["context"] = {k: v for k, v in doc["context"].items() if k.startswith(("gpu", "driver", "runtime"))}
    c = Checker()
    c.check(rc == 0, f"gpu_bench exited {rc}")
    for b in iteration_runs(doc):
        report["gpu_bench"].setdefault(b["name"], []).append(
            {"gbps": b.get("gbps"), "us": b.get("real_time"), "error": b.get("error_message")})
    for ref in report["bare"]:
        name = f"Transfer/dir:{ref['dir']}/mem:pinned/bytes:{ref['bytes']}/manual_time"
        runs = report["gpu_bench"].get(name, [])
        c.check(runs and all(r["error"] is None for r in runs), f"{name}: missing or failed")
        if not runs:
            continue
        best_bare_gbps = max(ref["per_copy_gbps"], ref["queued_gbps"], ref["batched_gbps"])
        # Best against best: on a shared host the link sometimes gives a third less for tens of milliseconds
        # (whole repetitions of 16 MiB to 1 GiB copies at 35 GB/s instead of 55 on an H100, clocks and
        # throttle reasons steady, the bare loop's own variants just as affected). That is the host's noise,
        # not the harness's overhead, which is the question here; the bare figure is already its best variant.
        ours_gbps = max(r["gbps"] for r in runs)
        ours_us = sorted(r["us"] for r in runs)[len(runs) // 2]
        entry = {"case": name, "gpu_bench_gbps": ours_gbps, "gpu_bench_us": ours_us, "bare_best_gbps": best_bare_gbps,
                 "bare_queued_mean_us": ref["queued_mean_us"], "bare_deep_mean_us": ref["deep_mean_us"],
                 "bare_batched_us": ref["batched_us"],
                 "bare_per_copy_mean_us": ref["per_copy_mean_us"],
                 "ratio": ours_gbps / best_bare_gbps}
        report.setdefault("comparison", []).append(entry)
        print(json.dumps(entry))
        if ref["bytes"] >= 1 << 20:
            c.check(entry["ratio"] >= 0.97, f"{name}: {ours_gbps:.2f} GB/s is under 97% of the bare loop's "
                                            f"{best_bare_gbps:.2f}")
        else:
            # A gated case primes its engine with a copy of its own and times one copy between its own events;
            # the bare loop's queued pairs follow one another on the stream. On an H100 the first read 3.26 us
            # and the second 3.76 us at 4 B: within 0.6 us is the same measurement, a microsecond off is not.
            c.check(abs(ours_us - ref["queued_median_us"]) <= 0.6, f"{name}: {ours_us:.3f} us vs the bare loop's "
                                                                   f"{ref['queued_median_us']:.3f} us per queued copy")
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    return c.finish("pinned Transfer cases match the bare cudaMemcpyAsync loop")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
