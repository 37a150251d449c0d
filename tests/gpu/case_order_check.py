#!/usr/bin/env python3
"""GPU test: a case meets the same cases before it in every round it takes, so its full rounds and its
link rounds agree. Alloc pins and unpins a 1 GiB pageable buffer that HostBlocking's pageable copies would
reuse. While Alloc ran first in each full round and in no link round, HostBlocking's three pageable copies
of 16 MiB read 14 to 16% slower after Alloc's cases than without them, in three one-round processes each
way on GPU 0 of two H200s. Every round now runs the link rounds' cases first. So the median, over these
three cases, of each one's middle full round over its middle link round must stay within RATIO of 1.

usage: case_order_check.py GPU_BENCH OUT.json
"""
import statistics
import sys

from gpu_common import Checker, run_gpu_bench

ROUNDS = 3
LINK_ROUNDS = 9
RATIO = 1.07  # rounds of one such case spread 5 to 15% between processes; Alloc before them moved them 14 to 16%
CASES = tuple(f"HostBlocking/mem:pageable/bytes:16777216/mode:{m}"
              for m in ("sync_copy", "async_copy", "async_then_cpu_work"))


def round_kinds(doc):
    """The kind of each round a link round's case took, in order: full or link, the last round full."""
    labels = [p.partition("=")[0] for p in doc["context"].get("gpu_bench.round_processes", "").split()]
    return ["full" if label.startswith("round_") else "link" for label in labels
            if label.startswith(("round_", "link_"))] + ["full"]


def main(exe, out):
    rc, doc = run_gpu_bench(exe, out, f"--rounds={ROUNDS}", f"--link_rounds={LINK_ROUNDS}", "--progress=off",
                            "--benchmark_filter=^(Alloc/op:[a-z_]+/(pool:[a-z]+/)?bytes:1073741824|"
                            "HostBlocking/mem:pageable/bytes:16777216)/")
    c = Checker()
    c.check(rc == 0, f"gpu_bench exited {rc}")
    kinds = round_kinds(doc)
    c.check(kinds.count("full") == ROUNDS and kinds.count("link") == LINK_ROUNDS - ROUNDS,
            f"round processes {kinds}, not {ROUNDS} full and {LINK_ROUNDS - ROUNDS} link")
    _, ok = c.runs_by_name(doc)
    ratios = []
    for name in CASES:
        rounds = c.rounds_us(ok, name, LINK_ROUNDS)
        if len(rounds) != len(kinds):
            continue
        full = statistics.median(t for t, k in zip(rounds, kinds) if k == "full")
        link = statistics.median(t for t, k in zip(rounds, kinds) if k == "link")
        ratios.append(full / link)
        print(f"{name}: full rounds {', '.join(f'{t:.0f}' for t, k in zip(rounds, kinds) if k == 'full')} us, "
              f"link rounds {', '.join(f'{t:.0f}' for t, k in zip(rounds, kinds) if k == 'link')} us, "
              f"middle full over middle link {full / link:.3f}")
    if len(ratios) == len(CASES):
        mid = statistics.median(ratios)
        c.check(1 / RATIO <= mid <= RATIO,
                f"the full rounds read {mid:.3f} times the link rounds, beyond {RATIO}: the cases before them differ")
    return c.finish(f"the full and link rounds agree within {RATIO}x, by the median over {len(CASES)} cases")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
