"""Runs one gpu_bench command several times, each in its own process, one after the other: the A/A runs
whose agreement `gpu-bench-aa report` measures. Standard library only, so it runs on a GPU machine that
has none of the tools' packages.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Sequence

from ..reading.errors import InputError

# gpu_bench writes its output file itself; a run's own flags must not name another one.
_OWN_FLAGS = ("--benchmark_out=", "--benchmark_out_format=")


@dataclass
class RunResult:
    index: int
    path: str
    returncode: int
    seconds: float


def run_file(out_dir: str, index: int) -> str:
    return os.path.join(out_dir, f"run_{index:02d}.json")


def run_all(exe: str, args: Sequence[str], runs: int, out_dir: str, log=sys.stderr) -> list[RunResult]:
    """Runs `exe args` `runs` times, run K writing OUT_DIR/run_KK.json and its stderr OUT_DIR/run_KK.log.

    A run that fails (a case failed, or the process died) is reported and the next one still runs: the
    files already written are kept. Ctrl-C stops after the run in progress and keeps what was written.
    """
    if any(a.startswith(_OWN_FLAGS) for a in args):
        raise InputError("leave out --benchmark_out and --benchmark_out_format: each run writes its own file "
                         "in the output folder")
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        raise InputError(f"{exe}: no such executable (build gpu_bench first, or give --exe)")
    os.makedirs(out_dir, exist_ok=True)
    done: list[RunResult] = []
    for k in range(1, runs + 1):
        path = run_file(out_dir, k)
        cmd = [exe, *args, f"--benchmark_out={path}", "--benchmark_out_format=json"]
        t0 = time.monotonic()
        with open(os.path.join(out_dir, f"run_{k:02d}.log"), "w") as err, open(os.devnull, "w") as quiet:
            rc = subprocess.call(cmd, stdout=quiet, stderr=err)
        took = time.monotonic() - t0
        done.append(RunResult(k, path, rc, took))
        status = "ok" if rc == 0 else f"exit {rc} (its log: {os.path.join(out_dir, f'run_{k:02d}.log')})"
        print(f"gpu-bench-aa: run {k}/{runs}: {took:.0f} s, {status}", file=log, flush=True)
    return done
