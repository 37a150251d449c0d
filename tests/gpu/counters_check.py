#!/usr/bin/env python3
"""GPU test: the counters every case carries, and the GPUs' limits and error counters in the context. A few
small cases of several families run in two rounds (three for the link-bound copy, one of them a round of its
own), with --samples=on.
- Each case's sample_p50_us, sample_p90_us and sample_p99_us must be the percentiles of every round's samples
  the file holds (earlier_sample_times_s and sample_times_s), by the standard library's linear interpolation.
- Each case's power and temperature at its start and end lie within its GPUs' limits (0 < power <=
  power_limit_w * 1.1, 0 < temperature < temp_shutdown_c), its clocks within their maxima.
- Every GPU has its PCIe replay counter at the run's start and end (gpu.N.errors.pcie_replay.start, .end),
  never falling; NVLink counters only where it has NVLinks, each at both ends.

usage: counters_check.py GPU_BENCH OUT.json
"""
import statistics
import sys

from gpu_common import Checker, run_gpu_bench

# One small case of each of several families, a link-bound copy among them (its third round runs alone), and
# a peer copy where there are two GPUs.
FILTER = ("^(Transfer/dir:h2d/mem:pinned/bytes:65536|Transfer/dir:d2h/mem:pinned/bytes:16777216|"
          "SmallCopy/dir:h2d/mem:pinned/bytes:4|Events/op:record/timing:on|Launch/op:empty_kernel/kernels:10|"
          "Latency/mem:device/pattern:random/bytes:16384|Peer/src:0/dst:1/peer_access:on/dir:oneway/bytes:1048576)/")
ARGS = ("--rounds=2", "--link_rounds=3", "--link_max_rounds=3", "--samples=on", "--max_time_per_case=0.2",
        "--progress=off", f"--benchmark_filter={FILTER}")
PERCENTILES = ((50, "sample_p50_us"), (90, "sample_p90_us"), (99, "sample_p99_us"))
REL_TOL = 1e-9  # the counters and the samples are both written to full double precision


def check_percentiles(c, name, b):
    """The case's three percentile counters against those of the samples its entry holds."""
    earlier = b.get("earlier_sample_times_s", [])
    own = b.get("sample_times_s", [])
    c.check(len(own) == b.get("samples"), f"{name}: {len(own)} samples in sample_times_s, counter says "
            f"{b.get('samples')}")
    c.check(len(earlier) + 1 == b.get("rounds", 1), f"{name}: {len(earlier)} earlier rounds' samples for "
            f"{b.get('rounds', 1)} rounds")
    pooled = [t for r in earlier for t in r] + own
    if len(pooled) < 2:
        c.check(False, f"{name}: {len(pooled)} samples in the file")
        return
    cuts = statistics.quantiles(pooled, n=100, method="inclusive")  # numpy.percentile's linear
    written = [b.get(counter) for _, counter in PERCENTILES]
    c.check(None not in written, f"{name}: percentile counters {written}")
    if None in written:
        return
    c.check(0 < written[0] <= written[1] <= written[2], f"{name}: p50 {written[0]} p90 {written[1]} p99 {written[2]}")
    for (p, counter), value in zip(PERCENTILES, written):
        want = cuts[p - 1] * 1e6
        c.check(abs(value - want) <= REL_TOL * abs(want), f"{name}: {counter} {value!r}, the {len(pooled)} samples "
                f"of {len(earlier) + 1} rounds give {want!r}")


NVLINK_COUNTERS = ("nvlink_crc_flit", "nvlink_crc_data", "nvlink_replay", "nvlink_recovery")
POWER_SLACK = 1.1  # a reading may pass the enforced limit briefly


def number(ctx, key):
    """A context fact as a number; None where it is missing or unavailable."""
    try:
        return float(ctx[key])
    except (KeyError, ValueError):
        return None


def check_context_limits_and_errors(c, ctx):
    """Every GPU's limits and link error counters; returns the GPUs' limits, (power, shutdown, sm, mem)."""
    count = int(ctx.get("gpu.count", "1"))
    limits = []
    for i in range(count):
        nvml = ctx.get(f"gpu.{i}.nvml_index", "unavailable") != "unavailable"
        c.check(nvml, f"GPU {i}: NVML did not read it (gpu.{i}.nvml_index), so nothing below can be checked")
        for fact in ("power_limit_w", "temp_slowdown_c", "temp_shutdown_c"):
            c.check(number(ctx, f"gpu.{i}.{fact}") is not None, f"gpu.{i}.{fact} is {ctx.get(f'gpu.{i}.{fact}')!r}")
        limits.append(tuple(number(ctx, f"gpu.{i}.{k}") for k in ("power_limit_w", "temp_shutdown_c",
                                                                     "clock_sm_mhz", "memory_clock_mhz")))
        slowdown, shutdown = number(ctx, f"gpu.{i}.temp_slowdown_c"), number(ctx, f"gpu.{i}.temp_shutdown_c")
        if slowdown is not None and shutdown is not None:
            c.check(0 < slowdown <= shutdown, f"GPU {i}: slowdown {slowdown} C, shutdown {shutdown} C")
        links = number(ctx, f"gpu.{i}.nvlinks")
        for name in ("pcie_replay",) + NVLINK_COUNTERS:
            start, end = ctx.get(f"gpu.{i}.errors.{name}.start"), ctx.get(f"gpu.{i}.errors.{name}.end")
            if name == "pcie_replay":
                c.check(start is not None and end is not None, f"GPU {i}: pcie_replay start {start} end {end}")
            elif not links:
                c.check(start is None and end is None, f"GPU {i} without NVLink has {name}: {start}, {end}")
            else:
                c.check((start is None) == (end is None), f"GPU {i}: {name} start {start} end {end}")
            if start is None or end is None:
                continue
            c.check(start.isdigit() and end.isdigit() and int(end) >= int(start),
                    f"GPU {i}: {name} {start} at the start, {end} at the end")
            print(f"GPU {i}: {name} {start} -> {end}")
    return limits


def check_edges(c, name, b, limits):
    """A case's power, temperature and clocks at its start and end, within every GPU's limits (a case of
    several GPUs reports the most any drew and the hottest, and its first GPU's clocks)."""
    def most(k):
        vals = [lim[k] for lim in limits if lim[k] is not None]
        return max(vals) if vals else None
    power_limit = most(0)
    shutdowns = [lim[1] for lim in limits if lim[1] is not None]
    for at in ("start", "end"):
        power, temp = b.get(f"power_w_{at}"), b.get(f"temp_c_{at}")
        sm, mem = b.get(f"sm_clock_mhz_{at}"), b.get(f"mem_clock_mhz_{at}")
        c.check(None not in (power, temp, sm, mem), f"{name}: at its {at} power {power} W, temperature {temp} C, "
                f"SM clock {sm} MHz, memory clock {mem} MHz")
        if power is not None and power_limit is not None:
            c.check(0 < power <= power_limit * POWER_SLACK, f"{name}: {power} W at its {at}, limit {power_limit} W")
        if temp is not None and shutdowns:
            c.check(0 < temp < min(shutdowns), f"{name}: {temp} C at its {at}, shutdown at {min(shutdowns)} C")
        if sm is not None and most(2) is not None:
            c.check(0 < sm <= most(2), f"{name}: SM clock {sm} MHz at its {at}, at most {most(2)}")
        if mem is not None and most(3) is not None:
            c.check(0 < mem <= most(3), f"{name}: memory clock {mem} MHz at its {at}, at most {most(3)}")
    rose = b.get("link_errors_rose")
    if rose is not None:
        c.check(rose > 0, f"{name}: link_errors_rose {rose} is written only where counters rose")
        print(f"note: {name}: link error counters rose by {rose:.0f} during it")


def main(exe, out):
    rc, doc = run_gpu_bench(exe, out, *ARGS)
    c = Checker()
    c.check(rc == 0, f"gpu_bench exited {rc}")
    _, ok = c.runs_by_name(doc)
    c.check(len(ok) >= 6, f"{len(ok)} cases ran, not the six single-GPU ones at least")
    limits = check_context_limits_and_errors(c, doc["context"])
    for name, b in ok.items():
        check_percentiles(c, name, b)
        check_edges(c, name, b, limits)
    linked = ok.get("Transfer/dir:d2h/mem:pinned/bytes:16777216")
    c.check(linked is not None and len(linked.get("earlier_sample_times_s", [])) == 2,
            "the link-bound copy's file holds two earlier rounds' samples")
    return c.finish(f"{len(ok)} cases' percentiles are those of every round's samples, their power, temperature "
                    "and clocks within their GPUs' limits, and every GPU's link error counters at both ends")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
