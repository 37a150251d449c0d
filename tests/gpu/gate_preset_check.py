#!/usr/bin/env python3
"""GPU test: the gate run of docs/fleet.md (`--preset=gate --device=all`, no filter) ends with every case
measured, writes no gpu_bench.filter, and gpu-bench-gate judges every figure it needs (exit 0 or 1, never 2).

usage: gate_preset_check.py GPU_BENCH OUT.json
"""
import contextlib
import io
import sys

from gpu_common import Checker, run_gpu_bench, tools_module


def main(exe, out):
    rc, doc = run_gpu_bench(exe, out, "--preset=gate", "--device=all", "--progress=off", timeout=300)
    c = Checker()
    c.check(rc == 0, f"gpu_bench --preset=gate exited {rc}")
    context = doc.get("context", {})
    c.check(context.get("gpu_bench.preset") == "gate", f"gpu_bench.preset is {context.get('gpu_bench.preset')!r}")
    c.check("gpu_bench.filter" not in context, f"a gate run wrote gpu_bench.filter={context.get('gpu_bench.filter')!r}")
    runs, _ = c.runs_by_name(doc)
    c.check(len(runs) >= 6, f"the gate run measured {len(runs)} cases, not the six or more of docs/fleet.md")
    gate = tools_module("gpu_bench_tools.cli.gate")
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        status = gate.main([out, "--retries", "0"])
    print(said.getvalue(), end="")
    c.check(status in (0, 1), f"gpu-bench-gate exited {status} (errored) on the gate run")
    print(f"{'ok' if not c.failures else 'FAIL'}: {len(runs)} cases, gpu-bench-gate exit {status}")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
