#!/usr/bin/env python3
"""GPU test: a family defined only under tests/family/ (Probe, built into gpu_bench_probe) runs through the
harness's timed loop on a GPU, verifies its data, describes itself in the JSON context, and is read,
compared and plotted by the tools' generic path, which has never heard of it.

usage: probe_check.py GPU_BENCH_PROBE OUT.json
"""
import os
import subprocess
import sys
import tempfile

from gpu_common import Checker, run_gpu_bench

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")


def tool(module, *args):
    env = dict(os.environ, PYTHONPATH=TOOLS + os.pathsep + os.environ.get("PYTHONPATH", ""), MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", f"gpu_bench_tools.{module}", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def main(exe, out):
    rc, doc = run_gpu_bench(exe, out, "--benchmark_filter=^Probe/")
    c = Checker()
    c.check(rc == 0, f"gpu_bench_probe exited {rc}")
    ctx = doc["context"]
    c.check(ctx.get("gpu_bench.schema") == "2", "context gpu_bench.schema is not 2")
    c.check(ctx.get("family.probe.name") == "Probe", "no family.probe.name in the context")
    c.check(ctx.get("family.probe.headline") == "gbps", "family.probe.headline is not gbps")
    c.check(ctx.get("family.transfer.name") == "Transfer", "the other families' descriptors are missing")
    c.check(bool(ctx.get("profile.host_link")), "no profile.host_link in the context")
    _, ok = c.runs_by_name(doc)
    for n in ("Probe/op:memset/bytes:65536", "Probe/op:memset/bytes:16777216"):
        b = ok.get(n)
        c.check(b is not None, f"{n} missing or failed")
        if b is not None:
            c.check(b.get("gbps", 0) > 0, f"{n}: gbps {b.get('gbps')}")
    with tempfile.TemporaryDirectory() as d:
        r = tool("cli.compare", out, out)
        c.check(r.returncode == 0 and "Probe" in r.stdout, f"gpu-bench-compare on Probe: rc {r.returncode} {r.stderr}")
        r = tool("cli.plot", out, "--out", d, "--format", "png")
        drawn = [f for f in os.listdir(d) if f.endswith(".png")]
        c.check(r.returncode == 0 and drawn, f"gpu-bench-plot on Probe: rc {r.returncode}, {drawn} {r.stderr}")
    return c.finish("Probe ran through the loop, verified, and was compared and plotted")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
