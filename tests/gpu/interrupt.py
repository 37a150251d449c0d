#!/usr/bin/env python3
"""GPU test: Ctrl-C in the middle of a run stops gpu_bench at once (exit 130), leaves the output file as it
was, and leaves no temporary file behind.

usage: interrupt.py GPU_BENCH
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

from gpu_common import SKIP


def main(exe):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        with open(out, "w") as f:
            f.write("old results")
        p = subprocess.Popen([exe, "--benchmark_filter=Transfer/dir:h2d/", f"--benchmark_out={out}"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Wait until it has measured something, so the interrupt lands mid-run.
        deadline = time.time() + 60
        first = ""
        while time.time() < deadline and "Transfer/" not in first:
            first = p.stdout.readline()
            if p.poll() is not None:
                break
        if p.poll() is not None:
            err = p.stderr.read()
            if "no CUDA GPU is visible" in err:
                print("no CUDA GPU is visible: skipping")
                return SKIP
            print("FAIL: gpu_bench ended before it could be interrupted:", err)
            return 1
        t0 = time.time()
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            print("FAIL: gpu_bench did not stop within 10 s of SIGINT")
            return 1
        stopped = time.time() - t0
        ok = True
        if p.returncode != 130:
            print(f"FAIL: exit status {p.returncode}, expected 130")
            ok = False
        with open(out) as f:
            if f.read() != "old results":
                print("FAIL: the output file changed")
                ok = False
        if sorted(os.listdir(d)) != ["out.json"]:
            print("FAIL: files left behind:", os.listdir(d))
            ok = False
        print(f"{'ok' if ok else 'FAIL'}: stopped {stopped:.2f} s after SIGINT, exit {p.returncode}")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
