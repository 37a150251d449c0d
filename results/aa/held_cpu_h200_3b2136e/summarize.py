#!/usr/bin/env python3
"""Prints the tables docs/notes/variance_sources.md cites from this folder's runs (one H200 each call).

usage: summarize.py [FOLDER]
"""
import gzip
import json
import pathlib
import statistics as st
import sys

HERE = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent)
MIB = 1 << 20


def runs(folder, stem):
    """Each process's cases by name, in the order of its number."""
    paths = sorted((HERE / folder).glob(stem + "_*.json.gz"), key=lambda p: int(p.name.split("_")[-1][0]))
    return [{b["name"]: b for b in json.load(gzip.open(p))["benchmarks"]} for p in paths]


def context(folder, stem):
    return json.load(gzip.open(next((HERE / folder).glob(stem + "_*.json.gz"))))["context"]


def size_of(name):
    return int(name.split("bytes:")[1].split("/")[0])


def rel_sd(values):
    return 100 * st.stdev(values) / st.median(values)


def per_sample_ms(b):
    return 1e3 * b["sampling_wall_s"] / b["samples"]


def compare(title, folder, a_stem, b_stem, groups):
    """Between-process spread, figure and untimed cost per sample of A against B, by group of cases."""
    a, b = runs(folder, a_stem), runs(folder, b_stem)
    ca, cb = context(folder, a_stem), context(folder, b_stem)
    print(f"## {title}: {len(a)} processes of {a_stem}, {len(b)} of {b_stem}; {ca['gpu.uuid']}; "
          f"gpu_bench.git {ca['gpu_bench.git']} and {cb['gpu_bench.git']}")
    print(f"{'cases':44s} {'n':>3s} {'sd ' + a_stem:>18s} {'sd ' + b_stem:>18s} {'B/A':>7s} "
          f"{'ms/sample A':>12s} {'ms/sample B':>12s}")
    for label, keep in groups:
        names = [n for n in a[0] if keep(n) and all(n in r for r in a + b)]
        if not names:
            continue
        sd_a = st.median(rel_sd([r[n]["real_time"] for r in a]) for n in names)
        sd_b = st.median(rel_sd([r[n]["real_time"] for r in b]) for n in names)
        ratio = st.median(st.median(r[n]["real_time"] for r in b) / st.median(r[n]["real_time"] for r in a) - 1
                          for n in names)
        cost_a = sum(st.median(per_sample_ms(r[n]) for r in a) for n in names)
        cost_b = sum(st.median(per_sample_ms(r[n]) for r in b) for n in names)
        print(f"{label:44s} {len(names):3d} {sd_a:17.2f}% {sd_b:17.2f}% {100 * ratio:+6.1f}% {cost_a:12.2f} "
              f"{cost_b:12.2f}")
    print()


def kind(k, lo=0, hi=1 << 62, d=None):
    return lambda n: (f"/mem:{k}/" in n and lo <= size_of(n) < hi and (d is None or f"/dir:{d}/" in n))


compare("Held CPU against none, a default round's budget", "fast_off_round_budget", "cpu_fast", "cpu_off",
        [("pageable under 1 MiB", kind("pageable", 0, MIB)), ("pageable of 1 MiB and more", kind("pageable", MIB)),
         ("managed_prefetch under 1 MiB", kind("managed_prefetch", 0, MIB)),
         ("managed_prefetch of 1 MiB and more", kind("managed_prefetch", MIB))])
compare("Held CPU against none, the whole budget in one round", "fast_off_full_budget", "mp_fast", "mp_off",
        [("pageable of 1 MiB and more", kind("pageable", MIB)),
         ("managed_prefetch h2d, 64 MiB and more", kind("managed_prefetch", 64 * MIB, d="h2d")),
         ("managed_prefetch d2h, 64 MiB and more", kind("managed_prefetch", 64 * MIB, d="d2h")),
         ("managed_fault h2d, 64 MiB and more", kind("managed_fault", 64 * MIB))])
refill_groups = [("managed_prefetch under 64 MiB", kind("managed_prefetch", 0, 64 * MIB))] + [
    (f"managed_prefetch {d}, 64 MiB and more", kind("managed_prefetch", 64 * MIB, d=d)) for d in ("h2d", "d2h", "bidir")]
compare("Refill on the held CPU (old) against off it (new)", "refill_old_new", "prefetch_old", "prefetch_new",
        refill_groups)
large = runs("refill_from_64m", "prefetch_large")
print(f"## Refill off the held CPU from 64 MiB: {len(large)} processes; "
      f"{context('refill_from_64m', 'prefetch_large')['gpu.uuid']}")
for n in large[0]:
    print(f"{n.split('/manual_time')[0]:60s} ms/sample " + " ".join(f"{per_sample_ms(r[n]):8.2f}" for r in large))
