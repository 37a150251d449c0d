#!/usr/bin/env python3
"""GPU test: a bidirectional copy of a few bytes is timed by its slower direction, not by the gap between
its two streams' starts. Behind the gate the two directions start microseconds apart, by as much as such a
copy takes and by a different amount in each process. Timed from the earlier start to the later stop, a
pinned bidirectional copy of 4 B read 1.7 to 2.5 times its slower direction's own span on H200s, and its
rounds 9.1 to 12.1 us on one node. Timed by the slower direction, it reads within RATIO of the slower
one-way copy of 4 B, and its rounds within SPREAD of each other.

usage: bidir_span_check.py GPU_BENCH OUT.json
"""
import sys

from gpu_common import run_in_rounds

ROUNDS = 5
RATIO = 1.5  # from the earlier start to the later stop: 1.7 to 2.5 on H200s (each round a process)
SPREAD = 1.15  # slowest over fastest round; from the earlier start: up to 1.31 on two H200s' GPU 0
BIDIR = "Transfer/dir:bidir/mem:pinned/bytes:4"
ONE_WAY = ("Transfer/dir:h2d/mem:pinned/bytes:4", "Transfer/dir:d2h/mem:pinned/bytes:4")


def main(exe, out):
    c, doc = run_in_rounds(exe, out, ROUNDS, "^Transfer/dir:(h2d|d2h|bidir)/mem:pinned/bytes:4/")
    _, ok = c.runs_by_name(doc)
    rounds = c.rounds_us(ok, BIDIR, ROUNDS)
    one_way = [ok[n]["real_time"] for n in ONE_WAY if n in ok]
    if rounds:
        spread = max(rounds) / min(rounds)
        line = f"{BIDIR}: rounds {', '.join(f'{r:.2f}' for r in rounds)} us, slowest/fastest {spread:.3f}"
        print(("ok: " if spread <= SPREAD else "") + line)
        c.check(spread <= SPREAD, f"{line}: over {SPREAD}, so the rounds carry something besides the copies")
    if BIDIR in ok and len(one_way) == len(ONE_WAY):
        ratio = ok[BIDIR]["real_time"] / max(one_way)
        line = (f"{BIDIR}: {ok[BIDIR]['real_time']:.2f} us, {ratio:.2f} times the slower one-way copy "
                f"({', '.join(f'{t:.2f}' for t in one_way)} us)")
        print(("ok: " if ratio <= RATIO else "") + line)
        c.check(ratio <= RATIO, f"{line}: over {RATIO}, so the figure holds the gap between the two starts")
    else:
        c.check(False, "a one-way copy of 4 B is missing or failed")
    return c.finish(f"the bidirectional copy of 4 B reads within {RATIO}x of one way, its rounds within {SPREAD}x")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
