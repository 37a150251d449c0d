"""Shared by the GPU test scripts: run gpu_bench, skip cleanly (exit 77, CTest's skip code) without a GPU,
and judge a figure against its limit only as far as the figure's own interval allows."""
import json
import math
import os
import statistics
import io
import subprocess
import sys
from contextlib import redirect_stdout

SKIP = 77
CONTEXT_KEYS = [
    "gpu_bench.schema", "gpu_bench.version", "gpu_bench.git", "gpu.name", "gpu.uuid", "gpu.pci_bus_id", "gpu.cc",
    "gpu.sm_count", "gpu.memory_bytes", "gpu.l2_bytes", "gpu.copy_engines", "gpu.pcie_gen", "gpu.pcie_gen_max",
    "gpu.pcie_width", "gpu.pcie_width_max", "gpu.clock_sm_mhz", "gpu.ecc", "driver.version", "driver.cuda_version",
    "runtime.version", "benchmark.version", "host.cpu", "host.kernel", "host.thp", "host.gpu_numa_node",
    "host.numa_nodes", "host.numa_binding", "host.numa_thread", "host.uptime_s", "host.clocksource",
    "host.clock_read_ns", "host.thread_cpu",
]


def run_gpu_bench(exe, out, *args, timeout=550):
    """Runs gpu_bench writing JSON to `out`; exits 77 when no GPU is visible. Returns (returncode, json)."""
    cmd = [exe, f"--benchmark_out={out}", "--benchmark_out_format=json", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0 and "no CUDA GPU is visible" in r.stderr:
        print("no CUDA GPU is visible: skipping")
        sys.exit(SKIP)
    with open(out) as f:
        return r.returncode, json.load(f)


def list_cases(exe, *args):
    r = subprocess.run([exe, "--benchmark_list_tests", *args], capture_output=True, text=True, timeout=60)
    return r.stdout.split()


def iteration_runs(doc):
    return [b for b in doc["benchmarks"] if b.get("run_type", "iteration") == "iteration"]


def tools_module(name):
    """A module of the tools (gpu_bench_tools...), installed or from this source tree."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
        return importlib.import_module(name)


def median_interval(values):
    """The median of `values` and the 95% confidence interval of it, (lo, hi), by the tools' own statistics
    (gpu_bench_tools.stats, as every tool computes noise_pct); every value's range where too few values reach
    95%, and an unbounded interval under two values."""
    median_ci = tools_module("gpu_bench_tools.stats.nonparametric").median_ci
    vals = [v for v in values if math.isfinite(v)]
    if not vals:
        return math.nan, (-math.inf, math.inf)
    return statistics.median(vals), median_ci(vals) or (-math.inf, math.inf)


def ratio_interval(a, b):
    """a / b with the interval its two factors' intervals allow: (value, (lo, hi)). a, b: (median, (lo, hi))
    of positive figures."""
    (am, (alo, ahi)), (bm, (blo, bhi)) = a, b
    return am / bm, (alo / bhi if bhi > 0 else 0.0, ahi / blo if blo > 0 else math.inf)


def figure_interval(figure, noise_pct):
    """A reported figure and the interval its noise_pct (percent) states: (value, (lo, hi))."""
    half = abs(figure) * noise_pct / 100.0 if noise_pct is not None and math.isfinite(noise_pct) else math.inf
    return figure, (figure - half, figure + half)


def run_in_rounds(exe, out, rounds, bench_filter, judge):
    """Runs gpu_bench over `bench_filter` in `rounds` rounds, without progress lines, and judge(checker, json)
    on it, which returns what passing means; through checked_twice, so a share of slow rounds that chance
    brings once (few_slow_rounds) is measured again. Returns finish()'s exit status."""

    def evaluate(c):
        rc, doc = run_gpu_bench(exe, out, f"--rounds={rounds}", "--progress=off", f"--benchmark_filter={bench_filter}")
        c.check(rc == 0, f"gpu_bench exited {rc}")
        return judge(c, doc)

    return checked_twice(evaluate)


class Checker:
    def __init__(self):
        self.failures = []
        self.undecided = []
        self.effect_misses = []
        self.shared_gpu = False

    def check(self, ok, what):
        if not ok:
            self.failures.append(what)
            print("FAIL:", what)

    def runs_by_name(self, doc):
        """Every iteration run by case name (without /manual_time), each failed case counted as a failure;
        returns (all runs, the runs that did not fail)."""
        runs = {b["name"].replace("/manual_time", ""): b for b in iteration_runs(doc)}
        for name, b in runs.items():
            self.check(not b.get("error_occurred"), f"{name} failed: {b.get('error_message')}")
        return runs, {n: b for n, b in runs.items() if not b.get("error_occurred")}

    def rounds_us(self, ok, name, expected):
        """Case `name`'s round medians in microseconds from `ok` (runs_by_name's second), checked to be there
        and `expected` in number; [] where the case is missing or a round is not above zero."""
        b = ok.get(name)
        self.check(b is not None, f"{name} missing or failed")
        rounds = [t * 1e6 for t in (b or {}).get("round_times_s", [])]
        if b is not None:
            self.check(len(rounds) == expected, f"{name}: {len(rounds)} rounds, not {expected}")
        return rounds if rounds and min(rounds) > 0 else []

    def held_fast_state(self, doc):
        """Checks that a run's context says its thread held a CPU in its fast state (--cpu=fast); returns the
        context."""
        context = (doc or {}).get("context", {})
        policy = context.get("host.thread_cpu", "")
        self.check(policy.startswith("fast state of"), f"host.thread_cpu reads {policy!r}, not the fast state held")
        return context

    def few_slow_rounds(self, ok, names, expected, ratio, share, slow_means):
        """Checks that at most `share` of the rounds of the cases `names` read over `ratio` times their case's
        fastest, printing each case's rounds; more is an effect missed (check_effect). `slow_means` ends the
        miss's sentence."""
        slow = total = 0
        for name in names:
            rounds = self.rounds_us(ok, name, expected)
            if rounds:
                over = [r for r in rounds if r > ratio * min(rounds)]
                slow += len(over)
                total += len(rounds)
                print(f"{name}: rounds {', '.join(f'{r:.3f}' for r in rounds)} us; {len(over)} over {ratio}x the fastest")
        if total:
            line = f"{slow} of {total} rounds over {ratio}x their case's fastest"
            if slow <= share * total:
                print("ok: " + line)
            # An effect, not a plain check: a share of rounds is a draw, and a held state's share can pass it
            # by chance, where the state the check exists to catch passes it run after run.
            self.check_effect(slow <= share * total, f"{line}: more than {share:.0%}, so {slow_means}")

    def judge(self, what, value, interval, low=-math.inf, high=math.inf, unit=""):
        """A figure with its 95% interval (lo, hi) against its limits [low, high]: passes where the figure is
        inside them; fails only where its whole interval lies outside; else the machine was too noisy for
        this check to say, which is recorded (finish() then skips) rather than failed."""
        lo, hi = interval
        inside = low <= value <= high
        limits = f"[{low:.4g}, {high:.4g}]".replace("-inf", "").replace("inf", "")
        line = f"{what}: {value:.4g}{unit} (interval {lo:.4g} to {hi:.4g}), limits {limits}"
        if inside:
            print("ok:", line)
        elif hi < low or lo > high:
            self.check(False, line)
        else:
            self.undecided.append(line)
            print("too noisy to judge:", line)
        return inside

    def set_machine(self, doc):
        """Notes from a run's context whether other processes shared its GPU (gpu.other_processes)."""
        try:
            self.shared_gpu = int(doc["context"].get("gpu.other_processes", "0")) > 0
        except ValueError:
            self.shared_gpu = False

    def check_effect(self, ok, what):
        """An effect a family exists to show, read from figures taken at different moments, for which no
        interval is at hand. A miss is recorded as such (finish() fails it; checked_twice measures again
        first), except while other processes shared the GPU (set_machine), where it cannot be told from their
        load and is recorded as too noisy to judge."""
        if ok:
            return True
        if self.shared_gpu:
            line = f"{what} (other processes shared the GPU)"
            self.undecided.append(line)
            print("too noisy to judge:", line)
        else:
            self.effect_misses.append(what)
            print("MISSED:", what)
        return False

    def refusal_line(self, stderr):
        """The one line of a refusal, apart from gpu_bench's warnings (another process on the GPU)."""
        lines = [ln for ln in stderr.strip().splitlines() if not ln.startswith("gpu_bench: warning:")]
        return lines[0] if len(lines) == 1 else None

    def finish(self, passed_what):
        """Exit status: 1 on any failure; else 77 (skipped) where a check could not be judged on this
        machine, naming each; else 0."""
        for what in self.effect_misses:
            self.check(False, what)
        if self.failures:
            print(f"{len(self.failures)} check(s) failed")
            return 1
        if self.undecided:
            print(f"skipped: this machine was too noisy to judge {len(self.undecided)} check(s): "
                  + "; ".join(self.undecided) + ". Rerun on a quieter machine (docs/testing.md).")
            return SKIP
        print(f"ok: {passed_what}")
        return 0


def checked_twice(evaluate):
    """finish()'s exit status after evaluate(checker), a gpu_bench run and its checks that returns what passing
    means; where effects missed (check_effect) and nothing failed outright, after a second evaluate instead,
    whose checks then stand: an effect that a defect removes misses both times, while a burst of another
    tenant's load seldom lasts through both."""
    c = Checker()
    passed = evaluate(c)
    if c.effect_misses and not c.failures:
        print(f"measuring again: {len(c.effect_misses)} effect(s) missed: " + "; ".join(c.effect_misses))
        c = Checker()
        passed = evaluate(c)
    return c.finish(passed)


# For the scripts that test how the GPU tests judge, on made-up figures (no GPU).
def quiet(f, *args, **kwargs):
    """f(*args, **kwargs) with what it prints thrown away."""
    with redirect_stdout(io.StringIO()):
        return f(*args, **kwargs)


class Expectations:
    """expect(ok, what): each failed expectation printed as it fails and counted; finish(ok_line) ends the
    script: its exit status, after the count of problems or `ok_line`."""

    def __init__(self):
        self.problems = []

    def __call__(self, ok, what):
        if not ok:
            self.problems.append(what)
            print("FAIL:", what)

    def finish(self, ok_line):
        print(f"{len(self.problems)} problem(s)" if self.problems else ok_line)
        return 1 if self.problems else 0
