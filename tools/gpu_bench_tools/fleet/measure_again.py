"""Measuring a run's cases again with gpu_bench, as gpu-bench-gate does for a figure beyond its expectation.

The command comes from the run's own context: its --device, preset and round and noise settings, with a
--benchmark_filter of exactly the cases to measure. The measurement goes to a temporary --benchmark_out,
then beside the run as RESULTS.retryN.json (retry_path), so nothing measured is lost and gpu-bench-export
judges the same measurements the gate did (kept_retries). The run's own file is never changed.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..reading.results import BenchmarkFile

# gpu_bench's flags that shape a figure, and the context fact each one's value was written to.
SAME_SETTINGS = (
    ("gpu_bench.rounds", "--rounds"),
    ("gpu_bench.link_rounds", "--link_rounds"),
    ("gpu_bench.link_max_rounds", "--link_max_rounds"),
    ("gpu_bench.noise_target_pct", "--noise"),
    ("gpu_bench.max_time_per_case_s", "--max_time_per_case"),
    ("gpu_bench.target_detectable_pct", "--target_detectable"),
)
# A measurement of a few cases takes far less than the whole run; this bounds a gpu_bench that hangs.
MIN_TIMEOUT_S = 120.0
# The characters gpu_bench escapes in its own exact-name filters (harness/run/rounds.cpp, literal_pattern).
# re.escape also escapes '-', '#', '~' and spaces, which a POSIX regex, as some Google Benchmark builds
# use, does not define escaped.
_SPECIAL = set(".[]{}()\\*+?^$|")


class CannotMeasure(Exception):
    """Why the cases cannot be measured again here: one sentence."""


def retry_path(results: str | os.PathLike, n: int) -> Path:
    """RESULTS.retryN.json beside RESULTS.json (or RESULTS.json.gz): the Nth measurement after the run."""
    p = Path(results)
    name = p.name
    for suffix in (".json.gz", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return p.with_name(f"{name}.retry{n}.json")


def kept_retries(results: str | os.PathLike) -> list[Path]:
    """The measurements a gate kept beside the run, in order, up to the first one missing."""
    out = []
    while retry_path(results, len(out) + 1).is_file():
        out.append(retry_path(results, len(out) + 1))
    return out


def exact_names_filter(names: list[str]) -> str:
    """A --benchmark_filter that matches exactly these case names: '^(A|B)$', each name escaped."""
    return "^(" + "|".join("".join("\\" + ch if ch in _SPECIAL else ch for ch in n) for n in names) + ")$"


def gpu_bench_args(f: BenchmarkFile, names: list[str], out: str | os.PathLike) -> list[str]:
    """gpu_bench's arguments that measure `names` as the run measured them, into `out`."""
    args = [f"--benchmark_filter={exact_names_filter(names)}", f"--benchmark_out={out}",
            "--benchmark_out_format=json"]
    preset = f.fact("gpu_bench.preset")
    if preset and preset != "gate":  # gate selects its own cases and refuses a filter; the filter does it here
        args.append(f"--preset={preset}")
    device = f.fact("gpu_bench.device")
    if device and (device == "all" or device.isdigit()):
        args.append(f"--device={device}")  # the case names hold /device:N only under --device=all
    if f.fact("gpu_bench.gate") == "off":
        args.append("--gate=off")
    for key, flag in SAME_SETTINGS:
        value = f.fact(key)
        if value is not None and _finite(value):
            args.append(f"{flag}={value}")
    return args


def find_gpu_bench(given: str | None, f: BenchmarkFile) -> str:
    """The gpu_bench to run: `given` (--gpu-bench), else the run's own executable where it is here, else
    gpu_bench on PATH. Raises CannotMeasure where none is."""
    if given:
        found = _runnable(given)
        if found is None:
            raise CannotMeasure(f"--gpu-bench {given} is not an executable file"
                                if os.sep in given else f"--gpu-bench {given} is not found on PATH")
        return found
    exe = f.fact("executable")
    if exe and os.sep in exe and _runnable(exe):
        return exe
    found = shutil.which("gpu_bench")
    if found:
        return found
    raise CannotMeasure(f"the run's gpu_bench ({exe or 'not recorded'}) is not here and none is on PATH "
                        "(give --gpu-bench PATH)")


def measure(f: BenchmarkFile, names: list[str], exe: str, n: int) -> Path:
    """Measure `names` again with `exe` as the run did; returns where the measurement is kept (retry_path
    beside the run, or the temporary folder where that cannot be written). Raises CannotMeasure."""
    host, here = f.fact("host_name"), socket.gethostname()
    if host and host != here:
        raise CannotMeasure(f"the run is of host {host}, and this is {here}")
    final = retry_path(f.path, n)
    try:
        work = Path(tempfile.mkdtemp(prefix=".gpu-bench-gate.", dir=final.parent))
    except OSError:
        work = Path(tempfile.mkdtemp(prefix="gpu-bench-gate."))
    out = work / final.name
    try:
        failure = _run(exe, gpu_bench_args(f, names, out.absolute()), _timeout_s(f))
        if not out.is_file() or out.stat().st_size == 0:
            raise CannotMeasure(f"{exe} wrote no results" + (f" ({failure})" if failure else ""))
    except _Stopped as e:
        # A job's time limit or scancel: gpu_bench and its rounds are stopped; the gate ends as it was told.
        shutil.rmtree(work, ignore_errors=True)
        signal.signal(e.signum, signal.SIG_DFL)
        os.kill(os.getpid(), e.signum)
        raise
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    try:
        os.replace(out, final)
    except OSError:
        return out  # the run's folder cannot be written: the measurement stays where it was made
    shutil.rmtree(work, ignore_errors=True)
    return final


def _run(exe: str, args: list[str], timeout_s: float) -> str:
    """Run gpu_bench with its output captured (the gate's own output is the verdict); returns how it failed,
    or "". A gpu_bench that fails may still have written its file (a case failed), which the caller reads;
    one that hangs is stopped with its rounds."""
    try:
        p = subprocess.Popen([exe, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as e:
        raise CannotMeasure(f"cannot run {exe}: {e.strerror or e}") from None
    stops = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    for sig in stops:
        signal.signal(sig, _stopped)
    try:
        text, _ = p.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _stop(p)
        raise CannotMeasure(f"{exe} did not finish within {timeout_s:.0f} s") from None
    except BaseException:
        _stop(p)
        raise
    finally:
        for sig, handler in stops.items():
            signal.signal(sig, handler)
    if p.returncode == 0:
        return ""
    lines = [x.strip() for x in text.decode(errors="replace").splitlines() if x.strip()]
    said = f"stopped by signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
    return said + (f": {lines[-1]}" if lines else "")


class _Stopped(BaseException):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stopped(signum, _frame):
    raise _Stopped(signum)


def _stop(p: subprocess.Popen) -> None:
    """gpu_bench and the round processes it started (its own session): gone, and reaped."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.communicate()


def _timeout_s(f: BenchmarkFile) -> float:
    try:
        elapsed = float(f.fact("gpu_bench.elapsed_s") or 0.0)
    except ValueError:
        elapsed = 0.0
    return max(MIN_TIMEOUT_S, 2 * elapsed if math.isfinite(elapsed) else 0.0)


def _runnable(path: str) -> str | None:
    if os.sep not in path:
        return shutil.which(path)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def _finite(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False
