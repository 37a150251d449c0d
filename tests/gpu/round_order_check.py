#!/usr/bin/env python3
"""GPU test: every round of a case meets the allocators in the same state. An allocation of 1 MiB costs a
few microseconds where the process's allocators already hold memory (another case's pinned and device
buffers) and hundreds where they hold none; so a case whose rounds ran after different cases read 100-fold
apart. Alloc's cases run before SmallCopy's in the order the cases are registered; every round must keep
that order, so each case's five rounds agree within RATIO.

usage: round_order_check.py GPU_BENCH OUT.json
"""
import sys

from gpu_common import run_in_rounds

ROUNDS = 5
RATIO = 3.0  # on an H200, one state's rounds lay within 2.4x over six runs, the two states 16- to 300-fold apart
CASES = ("Alloc/op:free_host/bytes:1048576", "Alloc/op:malloc/bytes:1048576")


def main(exe, out):
    c, doc = run_in_rounds(exe, out, ROUNDS, "^(SmallCopy/dir:(h2d|d2h)/mem:pinned/bytes:4|"
                                             "Alloc/op:(free_host|malloc)/bytes:1048576)/")
    _, ok = c.runs_by_name(doc)
    for name in CASES:
        rounds = c.rounds_us(ok, name, ROUNDS)
        if rounds:
            spread = max(rounds) / min(rounds)
            line = f"{name}: rounds {', '.join(f'{r:.1f}' for r in rounds)} us, slowest/fastest {spread:.2f}"
            print(("ok: " if spread <= RATIO else "") + line)
            c.check(spread <= RATIO, f"{line}: over {RATIO}, so rounds met the allocators in different states")
    return c.finish(f"the rounds of each Alloc case agree within {RATIO}x")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
