#!/usr/bin/env python3
"""GPU test: a small Transfer sweep (every direction and memory kind at 4 B, 64 KiB and 16 MiB) must run
every case, verify its data, and report rates that are plausible for a real bus.

usage: transfer_sweep.py GPU_BENCH OUT.json
"""
import sys

from gpu_common import CONTEXT_KEYS, Checker, iteration_runs, list_cases, run_gpu_bench

FILTER = "Transfer/.*/bytes:(4|65536|16777216)/"


def main(exe, out):
    rc, doc = run_gpu_bench(exe, out, f"--benchmark_filter={FILTER}")
    c = Checker()
    c.check(rc == 0, f"gpu_bench exited {rc}")
    ctx = doc["context"]
    c.check(ctx.get("gpu_bench.schema") == "2", "context gpu_bench.schema is not 2")
    for key in CONTEXT_KEYS:
        c.check(bool(ctx.get(key)), f"context key {key} missing or empty")
    expected = list_cases(exe, f"--benchmark_filter={FILTER}")
    # Several NUMA nodes (and libnuma): 15 kinds x 3 sizes gain a numa:remote twin.
    binding = ctx.get("host.numa_binding", "")
    nodes = int(ctx["host.numa_nodes"]) if ctx.get("host.numa_nodes", "").isdigit() else 0
    axis = nodes > 1 and not any(w in binding for w in ("without libnuma", "policy of its own"))
    c.check(len(expected) == (105 if axis else 60), f"expected {105 if axis else 60} cases listed, got {len(expected)}")
    c.check(any("/numa:remote/" in n for n in expected) == axis,
            f"numa axis listed: {not axis} with {nodes} node(s), {binding!r}")
    runs = {b["name"]: b for b in iteration_runs(doc)}
    for name in expected:
        b = runs.get(name)
        c.check(b is not None, f"{name} did not run")
        if b is None:
            continue
        if b.get("error_occurred"):
            c.check(False, f"{name} failed: {b.get('error_message')}")
            continue
        gbps, host_us = b.get("gbps", -1), b.get("host_blocked_us", -1)
        host_side = "dir:d2d" not in name
        bytes_ = int(name.split("bytes:")[1].split("/")[0])
        c.check(gbps > 0, f"{name}: gbps {gbps} not positive")
        # No host link carries 300 GB/s; no GPU copies 10 TB/s counted once.
        c.check(gbps < (300 if host_side else 10000), f"{name}: gbps {gbps} is beyond any real bus")
        c.check(host_us >= 0, f"{name}: host_blocked_us {host_us}")
        if bytes_ == 16777216 and ("mem:pinned" in name or "mem:device" in name):
            c.check(gbps > 5, f"{name}: {gbps} GB/s is implausibly slow for 16 MiB")
        c.check(("mem:pageable" in name) == (b.get("label") == "ungated"), f"{name}: label {b.get('label')!r}")
        # Where the host side lies: ordinary pages always say (given libnuma); a bound buffer is where it was put.
        node = b.get("numa_node")
        if "without libnuma" not in binding and ("mem:pageable" in name or "mem:registered" in name):
            c.check(node is not None, f"{name}: no numa_node counter")
        if node is not None:
            c.check(isinstance(node, (int, float)) and node >= 0, f"{name}: numa_node {node}")
            if binding.startswith("node ") and "numa:remote" not in name:
                c.check(node == int(binding[5:]), f"{name}: numa_node {node}, bound to {binding}")
            if binding.startswith("node ") and "numa:remote" in name:
                c.check(node != int(binding[5:]), f"{name}: numa_node {node} is the GPU's own")
        # Google Benchmark's bytes_per_second must agree with our GB/s (same bytes, same GPU time).
        bps = b.get("bytes_per_second", 0)
        c.check(abs(bps / 1e9 - gbps) <= 0.01 * gbps, f"{name}: bytes_per_second {bps} vs gbps {gbps}")
    return c.finish(f"{len(expected)} Transfer cases ran, verified and reported plausible rates")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
