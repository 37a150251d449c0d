#!/usr/bin/env python3
"""GPU test: every round of Alloc's cases meets allocators that hold nothing yet. A pinned allocation of 1 MiB
costs hundreds of microseconds where the process has never freed pinned memory, and a few where the driver
holds memory another case freed: a case whose rounds ran after different cases read 100-fold apart. Alloc's
cases under 1 GiB ride the link rounds and are their first cases, so they run first in every round. Each case
takes the link rounds' count; its median round lies within RATIO of its fastest and its slowest within SLOWEST
(one round may still run slow for the machine's own reasons: a cudaMalloc of 1 MiB read 187.9 us in one round of
five, the others 46.7 to 63.8, on two H200s' GPU 0). The pinned allocation and its release read at least
COLD_US in every round: 234 to 595 us first in their process on H200s, 3.4 and 3.9 us after the other cases
(de79065, GPU 0 of two H200s). The run also says, for each round's process and the last round, what else its
host did (gpu_bench.round_host): shares of the host's CPU time between 0 and 100%, a count of preemptions.

usage: round_order_check.py GPU_BENCH OUT.json
"""
import statistics
import sys

from gpu_common import Checker, run_gpu_bench

ROUNDS = 5  # --link_rounds' default, which Alloc's cases under 1 GiB take
RATIO = 3.0  # on an H200, one state's rounds lay within 2.4x over six runs, the two states 16- to 300-fold apart
SLOWEST = 10.0  # one slow round of a state read up to 4.0x its fastest
COLD_US = 50.0
CASES = ("Alloc/op:malloc_host/bytes:1048576", "Alloc/op:free_host/bytes:1048576", "Alloc/op:malloc/bytes:1048576")
COLD = CASES[:2]


def main(exe, out):
    rc, doc = run_gpu_bench(exe, out, "--progress=off", "--benchmark_filter=^(SmallCopy/dir:(h2d|d2h)/mem:pinned/"
                                                         "bytes:4|Alloc/op:(malloc_host|free_host|malloc)/bytes:1048576)/")
    c = Checker()
    c.check(rc == 0, f"gpu_bench exited {rc}")
    _, ok = c.runs_by_name(doc)
    for name in CASES:
        rounds = c.rounds_us(ok, name, ROUNDS)
        if rounds:
            middle = statistics.median(rounds) / min(rounds)
            slowest = max(rounds) / min(rounds)
            line = (f"{name}: rounds {', '.join(f'{r:.1f}' for r in rounds)} us, median/fastest {middle:.2f}, "
                    f"slowest/fastest {slowest:.2f}")
            agree = middle <= RATIO and slowest <= SLOWEST
            cold = name not in COLD or min(rounds) >= COLD_US
            print(("ok: " if agree and cold else "") + line)
            c.check(agree, f"{line}: over {RATIO} or {SLOWEST}, so rounds met the allocators in different states")
            c.check(cold, f"{line}: a round under {COLD_US} us, so it met memory another case had freed")
    check_round_host(c, doc["context"])
    return c.finish(f"Alloc's rounds agree (the median within {RATIO}x of the fastest, the slowest within "
                    f"{SLOWEST}x), and its pinned allocations read {COLD_US} us or more in every round")


def check_round_host(c, context):
    processes = [p.split("=")[0] for p in context.get("gpu_bench.round_processes", "").split()]
    hosts = dict(p.split("=", 1) for p in context.get("gpu_bench.round_host", "").split())
    print(f"gpu_bench.round_host: {context.get('gpu_bench.round_host')}")
    c.check(processes and list(hosts) == [*processes, "last"],
            f"gpu_bench.round_host names {list(hosts)}, not each round process of {processes} and the last")
    for label, text in hosts.items():
        others, steal, preemptions = text.split("/")
        c.check(0 <= float(others) <= 100 and 0 <= float(steal) <= 100 and int(preemptions) >= 0,
                f"gpu_bench.round_host's {label}={text}: a share outside 0 to 100% or a negative count")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
