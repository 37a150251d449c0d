#!/usr/bin/env python3
"""GPU test: a small Transfer sweep (every direction and memory kind at 4 B, 64 KiB and 16 MiB) must run
every case, verify its data, and report rates that are plausible for a real bus.

usage: transfer_sweep.py GPU_BENCH OUT.json
"""
import math
import statistics
import sys

from gpu_common import CONTEXT_KEYS, checked_twice, iteration_runs, list_cases, run_gpu_bench, tools_module

round_center = tools_module("gpu_bench_tools.reading.cases").round_center

FILTER = "Transfer/.*/bytes:(4|65536|16777216)/"


def median_over_placements(times, placements):
    """A round's figure as gpu_bench makes it: the geometric mean of each placement's median sample."""
    by_place = {}
    for t, p in zip(times, placements, strict=True):
        by_place.setdefault(p, []).append(t)
    return statistics.geometric_mean([statistics.median(v) for v in by_place.values()])


def evaluate(c, exe, out):
    rc, doc = run_gpu_bench(exe, out, f"--benchmark_filter={FILTER}", "--samples=on", "--max_time_per_case=0.2")
    c.set_machine(doc)
    c.check(rc == 0, f"gpu_bench exited {rc}")
    ctx = doc["context"]
    c.check(ctx.get("gpu_bench.schema") == "2", "context gpu_bench.schema is not 2")
    for key in CONTEXT_KEYS:
        c.check(bool(ctx.get(key)), f"context key {key} missing or empty")
    expected = list_cases(exe, f"--benchmark_filter={FILTER}")
    # d2d has a cold and a warm cache; several NUMA nodes (and libnuma): 15 kinds x 3 sizes gain a
    # numa:remote twin.
    binding = ctx.get("host.numa_binding", "")
    nodes = int(ctx["host.numa_nodes"]) if ctx.get("host.numa_nodes", "").isdigit() else 0
    axis = nodes > 1 and not any(w in binding for w in ("without libnuma", "policy of its own"))
    want = 108 if axis else 63
    c.check(len(expected) == want, f"expected {want} cases listed, got {len(expected)}")
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
        c.check(("mem:pageable" in name) == ("ungated" in b.get("label", "")), f"{name}: label {b.get('label')!r}")
        # Every figure says how sure it is: enough samples, and a noise figure.
        c.check(b.get("iterations") == 1, f"{name}: iterations {b.get('iterations')}, not one run of the sampling")
        c.check(b.get("samples", 0) >= 10 or "one sample exceeds" in b.get("label", ""),
                f"{name}: {b.get('samples')} samples")
        # noise_pct is the interval the next run falls in, from three processes: page faults and pageable
        # staging can differ by half between processes, but a pinned or device copy that does has a fault.
        noise = b.get("noise_pct", -1)
        c.check(math.isfinite(noise) and noise > 0, f"{name}: noise_pct {noise}")
        if bytes_ >= 65536 and ("mem:pinned" in name or "mem:device" in name):
            c.check_effect(noise < 100, f"{name}: noise_pct {noise}")
        if "dir:bidir" in name:
            h2d, d2h = b.get("gbps_h2d", 0), b.get("gbps_d2h", 0)
            c.check(h2d > 0 and d2h > 0, f"{name}: per-direction rates {h2d} / {d2h}")
            # The aggregate moves 2N in the longer direction's time: at most the sum of the two rates.
            c.check(gbps <= 1.02 * (h2d + d2h), f"{name}: {gbps} GB/s exceeds {h2d} + {d2h}")
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
        # --samples=on: the last round's samples, whose median is that round's (over several placements, the
        # geometric mean of each one's median); the reported time is the rounds' center, as the context's
        # gpu_bench.round_center names it (three rounds by default, each a process of its own; five for pinned
        # and registered copies of 1 MiB and more, whose time follows the host link's load, and up to
        # gpu_bench.link_max_rounds where their rounds disagree; five for every other copy under 256 MiB but
        # faulted managed ones, which rides in those rounds).
        times = b.get("sample_times_s", [])
        rounds = b.get("round_times_s", [])
        link_bound = bytes_ >= 1 << 20 and ("mem:pinned" in name or "mem:registered" in name)
        placed = bytes_ < 1 << 20 and "mem:pageable" not in name and "mem:managed" not in name
        placements = int(ctx.get("gpu_bench.placements", "1"))
        c.check(b.get("placements", 1) == (placements if placed else 1),
                f"{name}: placements {b.get('placements')}, --placements {placements}")
        link_rounds = int(ctx["gpu_bench.link_rounds"])
        fewest, most = ((link_rounds, int(ctx["gpu_bench.link_max_rounds"])) if link_bound
                        else (link_rounds, link_rounds) if bytes_ < 256 << 20 and "mem:managed_fault" not in name
                        else (3, 3))
        c.check(len(times) == b.get("samples"), f"{name}: {len(times)} sample times for {b.get('samples')} samples")
        c.check(len(rounds) == b.get("rounds") and fewest <= len(rounds) <= most,
                f"{name}: {len(rounds)} round times, rounds {b.get('rounds')}, not {fewest} to {most}")
        if times and rounds:
            median = median_over_placements(times, b.get("sample_placements", [0] * len(times)))
            c.check(abs(median - rounds[-1]) <= 1e-3 * median + 1e-9,
                    f"{name}: the last round's median {rounds[-1]} s is not its samples' {median} s")
            center = round_center(rounds, ctx.get("gpu_bench.round_center", "fastest_half"))
            c.check(abs(center * 1e6 - b["real_time"]) <= 1e-3 * b["real_time"] + 1e-3,
                    f"{name}: real_time {b['real_time']} us is not the rounds' center {center * 1e6} us")
        # The smallest change a comparison calls: never below compare's minimum effect, never above what the
        # interval itself allows for a run like this one.
        detectable = b.get("detectable_pct")
        c.check(detectable is not None and 1.0 <= detectable <= max(1.0, b["noise_pct"]) + 1e-9,
                f"{name}: detectable_pct {detectable} with noise_pct {b['noise_pct']}")
    for key in ("gpu_bench.elapsed_s", "gpu_bench.timed_s", "gpu_bench.noise_target_pct", "gpu_bench.preset"):
        c.check(bool(ctx.get(key)), f"context key {key} missing")
    c.check(ctx.get("gpu_bench.filter") == FILTER, f"context gpu_bench.filter is {ctx.get('gpu_bench.filter')!r}, "
            f"not the run's filter {FILTER!r}")
    if ctx.get("gpu_bench.elapsed_s") and ctx.get("gpu_bench.timed_s"):
        c.check(0 < float(ctx["gpu_bench.timed_s"]) < float(ctx["gpu_bench.elapsed_s"]),
                f"timed_s {ctx['gpu_bench.timed_s']} vs elapsed_s {ctx['gpu_bench.elapsed_s']}")
    # The process's start, phase by phase: every phase named once in order, their sum the total, within the run.
    start = ctx.get("gpu_bench.start_s", "").split()
    phases = dict(p.split("=") for p in start[1:] if "=" in p)
    c.check(list(phases) == ["driver", "nvml", "nvlinks", "pairs", "registration", "device",
                             "facts", "context"],
            f"gpu_bench.start_s names its phases: {ctx.get('gpu_bench.start_s')}")
    if start and phases and ctx.get("gpu_bench.elapsed_s"):
        total = float(start[0])
        c.check(abs(sum(map(float, phases.values())) - total) <= 0.005 * len(phases) + 1e-9
                and 0 < total < float(ctx["gpu_bench.elapsed_s"]),
                f"gpu_bench.start_s {ctx['gpu_bench.start_s']} within elapsed_s {ctx['gpu_bench.elapsed_s']}")
    return f"{len(expected)} Transfer cases ran, verified and reported plausible rates"


def main(exe, out):
    return checked_twice(lambda c: evaluate(c, exe, out))


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
