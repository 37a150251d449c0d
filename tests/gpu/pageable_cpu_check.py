#!/usr/bin/env python3
"""GPU test: a pageable copy samples on a CPU in its fast state, so its rounds agree. The CPU stages every
pageable copy, and on a virtual machine each CPU moves between a fast and a slow state about once a second.
Each round is a process that met one state. Unheld, seven one-round processes on an H200 read h2d 4 B at
2.3 to 3.3 us, d2h 4 B at 8.0 to 10.0 us, h2d 1 MiB at 82.8 to 98.0 us: 8 of the 35 rounds of CASES
over RATIO times their case's fastest. Held, none was, the widest case 1.06 apart. The clock read that
tells the states apart misjudges about one check in twenty, so at most SLOW_SHARE of the rounds may be slow.
Held, a run on another H200 read 4 of 35 over RATIO, so a run over SLOW_SHARE is measured again and fails only
where the second is over too.

usage: pageable_cpu_check.py GPU_BENCH OUT.json
"""
import sys

from gpu_common import run_in_rounds

ROUNDS = 7
RATIO = 1.10
SLOW_SHARE = 0.10
CASES = ("Transfer/dir:h2d/mem:pageable/bytes:4", "Transfer/dir:d2h/mem:pageable/bytes:4",
         "Transfer/dir:bidir/mem:pageable/bytes:4", "Transfer/dir:h2d/mem:pageable/bytes:1048576",
         "Transfer/dir:h2d/mem:pageable/bytes:4194304")


def judge(c, doc):
    """Checks a run of CASES: the policy in its context, and how many of its rounds read slow."""
    c.held_fast_state(doc)
    _, ok = c.runs_by_name(doc)
    c.few_slow_rounds(ok, CASES, ROUNDS, RATIO, SLOW_SHARE, "the rounds met the CPU's slow state")
    return f"at most {SLOW_SHARE:.0%} of the pageable copies' rounds read over {RATIO}x their fastest"


def main(exe, out):
    return run_in_rounds(exe, out, ROUNDS,
                         "^Transfer/dir:(h2d/mem:pageable/bytes:(4|1048576|4194304)|(d2h|bidir)/mem:pageable/bytes:4)/",
                         judge)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
