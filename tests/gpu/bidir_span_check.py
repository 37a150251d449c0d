#!/usr/bin/env python3
"""GPU test: a bidirectional copy of a few bytes is timed by its slower direction, not by the gap between
its two streams' starts. Behind the gate the two directions start microseconds apart, by as much as such a
copy takes and by a different amount in each process. Timed from the earlier start to the later stop, the
rounds of a pinned bidirectional copy of 4 B read 1.7 to 2.7 times the slower one-way copy of 4 B on H200s
(9.1 to 12.1 us against 5.2 us on one node). Timed by its slower direction, every round reads within RATIO
of it.

usage: bidir_span_check.py GPU_BENCH OUT.json
"""
import sys

from gpu_common import run_in_rounds

ROUNDS = 5
RATIO = 1.5  # by the slower direction, rounds read 1.04 to 1.28 times it on H200s; from the earlier start, 1.7 to 2.7
BIDIR = "Transfer/dir:bidir/mem:pinned/bytes:4"
ONE_WAY = ("Transfer/dir:h2d/mem:pinned/bytes:4", "Transfer/dir:d2h/mem:pinned/bytes:4")


def judge(c, doc):
    """Checks a run's bidirectional copy of 4 B, round by round, against the slower one-way copy."""
    _, ok = c.runs_by_name(doc)
    rounds = c.rounds_us(ok, BIDIR, ROUNDS)
    one_way = [ok[n]["real_time"] for n in ONE_WAY if n in ok]
    c.check(len(one_way) == len(ONE_WAY), "a one-way copy of 4 B is missing or failed")
    if rounds and len(one_way) == len(ONE_WAY):
        ratios = [r / max(one_way) for r in rounds]
        line = (f"{BIDIR}: rounds {', '.join(f'{r:.2f}' for r in rounds)} us, {min(ratios):.2f} to "
                f"{max(ratios):.2f} times the slower one-way copy ({', '.join(f'{t:.2f}' for t in one_way)} us)")
        print(("ok: " if max(ratios) <= RATIO else "") + line)
        c.check(max(ratios) <= RATIO, f"{line}: over {RATIO}, so a round holds the gap between the two starts")
    return f"every round of the bidirectional copy of 4 B reads within {RATIO}x of the slower one-way copy"


def main(exe, out):
    return run_in_rounds(exe, out, ROUNDS, "^Transfer/dir:(h2d|d2h|bidir)/mem:pinned/bytes:4/", judge)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
