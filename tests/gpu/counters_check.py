#!/usr/bin/env python3
"""GPU test: the counters every case carries. A few small cases of several families run in two rounds (three
for the link-bound copy, one of them a round of its own), with --samples=on. Each case's sample_p50_us,
sample_p90_us and sample_p99_us must be the percentiles of every round's samples the file holds
(earlier_sample_times_s and sample_times_s), by the standard library's linear interpolation.

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


def main(exe, out):
    rc, doc = run_gpu_bench(exe, out, *ARGS)
    c = Checker()
    c.check(rc == 0, f"gpu_bench exited {rc}")
    _, ok = c.runs_by_name(doc)
    c.check(len(ok) >= 6, f"{len(ok)} cases ran, not the six single-GPU ones at least")
    for name, b in ok.items():
        check_percentiles(c, name, b)
    linked = ok.get("Transfer/dir:d2h/mem:pinned/bytes:16777216")
    c.check(linked is not None and len(linked.get("earlier_sample_times_s", [])) == 2,
            "the link-bound copy's file holds two earlier rounds' samples")
    return c.finish(f"{len(ok)} cases' percentiles are those of every round's samples")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
