#!/usr/bin/env python3
"""GPU test: a managed prefetch, timed by the host clock, repeats between rounds. Timed by events, each process
drew a step of about 9 us of its own: in eight committed default runs on H200 nodes, rounds of the 4 B and 64
KiB prefetches read 29.6 to 75.8 us, up to 1.97 times their case's fastest. Events around a prefetch double a
small one's time and bring the step; the host clock around the call and the stream's end does not
(docs/methodology.md, "Managed copies and the host clock"). The host's work is then what it times, so it
samples on a CPU in its fast state. Each round here is a process: at most SLOW_SHARE of them may read over
RATIO times their case's fastest.

usage: managed_rounds_check.py GPU_BENCH OUT.json
"""
import sys

from gpu_common import run_in_rounds

ROUNDS = 7
RATIO = 1.15  # two levels about 15% apart with the thread free; held, the slowest of 56 rounds on an H200 read 1.43x
SLOW_SHARE = 1 / 4  # held, 2 and 1 of 28 rounds on one H200; free, 12 of 28 on another
CASES = tuple(f"Transfer/dir:{d}/mem:managed_prefetch/bytes:{n}" for d in ("h2d", "d2h") for n in (4, 65536))


def judge(c, doc):
    """Checks a run of CASES: each timed by the host clock on a CPU held in its fast state, and how many of its
    rounds ran slow."""
    c.held_fast_state(doc)
    _, ok = c.runs_by_name(doc)
    for name in CASES:
        label = (ok.get(name) or {}).get("label", "")
        c.check("host clock" in label, f"{name} is labelled {label!r}, not timed by the host clock")
    c.few_slow_rounds(ok, CASES, ROUNDS, RATIO, SLOW_SHARE, "the prefetch's time still steps between processes")
    return f"at most {SLOW_SHARE:.0%} of the managed prefetches' rounds read over {RATIO}x their fastest"


def main(exe, out):
    return run_in_rounds(exe, out, ROUNDS, "^Transfer/dir:(h2d|d2h)/mem:managed_prefetch/bytes:(4|65536)/", judge)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
