#!/usr/bin/env python3
"""GPU test: two small cases of every family `gpu_bench --families` names, repeated with Google Benchmark's
random interleaving (repetitions of different cases shuffled together), all run and verify their data. Cases that share
cached buffers, calibrations and gates must not depend on running in registration order.

usage: interleave_check.py GPU_BENCH OUT.json
"""
import subprocess
import sys

from gpu_common import Checker, iteration_runs, run_gpu_bench

REPS = 3
SIZES = "--sizes=64K"


def case_of(listed):
    """A case's name as registered: Google Benchmark's /manual_time dropped."""
    return listed[:-len("/manual_time")] if listed.endswith("/manual_time") else listed


def chosen_cases(exe):
    """The first and last case each family's smoke filter selects at 64 KiB (`gpu_bench --families`), so
    every family with cases on this machine is in, a new one included. Names without /manual_time."""
    rows = subprocess.run([exe, "--families"], capture_output=True, text=True, timeout=60).stdout.splitlines()
    chosen = {}
    for name, _scope, flt in (row.split("\t") for row in rows):
        r = subprocess.run([exe, "--benchmark_list_tests", SIZES, f"--benchmark_filter={flt or '^' + name + '/'}"],
                           capture_output=True, text=True, timeout=120)
        listed = [case_of(n) for n in r.stdout.split()]
        if listed:
            chosen[name] = sorted({listed[0], listed[-1]})
    return chosen


def main(exe, out):
    chosen = chosen_cases(exe)
    names = [n for cases in chosen.values() for n in cases]
    flt = "^(" + "|".join(names) + ")/"  # names are tokens, colons and slashes: nothing to escape
    rc, doc = run_gpu_bench(exe, out, f"--benchmark_filter={flt}", SIZES, f"--benchmark_repetitions={REPS}",
                            "--benchmark_enable_random_interleaving=true", "--max_time_per_case=0.1")
    c = Checker()
    c.check(rc == 0, f"gpu_bench exited {rc}")
    runs = iteration_runs(doc)
    failed = [b["name"] for b in runs if b.get("error_occurred")]
    c.check(not failed, f"failed under random interleaving: {failed[:5]}")
    ran = [case_of(b["name"]) for b in runs]
    for n in names:
        c.check(ran.count(n) == REPS, f"{n} ran {ran.count(n)} times, not {REPS}")
    return c.finish(f"{len(names)} cases of {len(chosen)} families ({', '.join(chosen)}) ran {REPS} times "
                    "interleaved and verified")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
