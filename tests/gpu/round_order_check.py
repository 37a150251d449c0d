#!/usr/bin/env python3
"""GPU test: every round of a case meets the allocators in the same state. An allocation of 1 MiB costs a
few microseconds where the process's allocators already hold memory (another case's pinned and device
buffers) and hundreds where they hold none; so a case whose rounds ran after different cases read 100-fold
apart. SmallCopy's cases, which ride the link rounds, run before Alloc's in every round; every round must keep
that order, so each case's median round lies within RATIO of its fastest. One round may still run slow for
the machine's own reasons (a cudaMalloc of 1 MiB read 187.9 us in one round of five, the others 46.7 to 63.8,
on two H200s' GPU 0), so the slowest is held only under SLOWEST, below the states' split.

usage: round_order_check.py GPU_BENCH OUT.json
"""
import statistics
import sys

from gpu_common import run_in_rounds

ROUNDS = 5
RATIO = 3.0  # on an H200, one state's rounds lay within 2.4x over six runs, the two states 16- to 300-fold apart
SLOWEST = 10.0  # one slow round of a state read up to 4.0x its fastest
CASES = ("Alloc/op:free_host/bytes:1048576", "Alloc/op:malloc/bytes:1048576")


def main(exe, out):
    c, doc = run_in_rounds(exe, out, ROUNDS, "^(SmallCopy/dir:(h2d|d2h)/mem:pinned/bytes:4|"
                                             "Alloc/op:(free_host|malloc)/bytes:1048576)/")
    _, ok = c.runs_by_name(doc)
    for name in CASES:
        rounds = c.rounds_us(ok, name, ROUNDS)
        if rounds:
            middle = statistics.median(rounds) / min(rounds)
            slowest = max(rounds) / min(rounds)
            line = (f"{name}: rounds {', '.join(f'{r:.1f}' for r in rounds)} us, median/fastest {middle:.2f}, "
                    f"slowest/fastest {slowest:.2f}")
            agree = middle <= RATIO and slowest <= SLOWEST
            print(("ok: " if agree else "") + line)
            c.check(agree, f"{line}: over {RATIO} or {SLOWEST}, so rounds met the allocators in different states")
    return c.finish(f"the rounds of each Alloc case agree: the median within {RATIO}x of the fastest, the slowest "
                    f"within {SLOWEST}x")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
