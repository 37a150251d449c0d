"""One loader for everything the tools read.

A benchmark file is Google Benchmark JSON, optionally with gpu_bench's context facts; a timeline file
is a Chrome trace written by ``gpu_bench --timeline``.  Anything else is refused with an
:class:`InputError` whose message is one line a person can act on.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

KNOWN_SCHEMAS = ("1",)
KNOWN_GB_JSON_SCHEMAS = (1,)
UNAVAILABLE = "unavailable"

# Google Benchmark appends these to a name to say which clock it reports; they are not axes.
TIMING_SUFFIXES = ("manual_time", "real_time", "process_time")
# Options Google Benchmark appends as key:value; part of a case's identity but not one of its axes.
RUN_OPTION_KEYS = ("iterations", "repeats", "threads", "min_time", "min_warmup_time")
# Aggregates Google Benchmark writes that carry no time figure.
COMPLEXITY_AGGREGATES = ("BigO", "RMS")

TIME_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
TRANSFER_LIKE = ("Transfer", "Peer", "AllHost")
HIGHER_IS_BETTER = ("gbps", "bytes_per_second", "items_per_second", "speedup", "efficiency")

# Facts worth showing when machines are put side by side, in reading order.
FACTS = (
    ("gpu.name", "GPU"),
    ("gpu.uuid", "GPU UUID"),
    ("gpu.cc", "compute capability"),
    ("gpu.sm_count", "SMs"),
    ("gpu.memory_bytes", "GPU memory"),
    ("gpu.l2_bytes", "L2 cache"),
    ("gpu.copy_engines", "copy engines"),
    ("pcie", "PCIe link (now / max)"),
    ("gpu.clock_sm_mhz", "SM clock MHz"),
    ("gpu.ecc", "ECC"),
    ("driver.version", "driver"),
    ("driver.cuda_version", "driver CUDA"),
    ("runtime.version", "CUDA runtime"),
    ("host_name", "host"),
    ("host.cpu", "host CPU"),
    ("num_cpus", "CPUs"),
    ("host.kernel", "kernel"),
    ("host.thp", "transparent huge pages"),
    ("host.gpu_numa_node", "GPU NUMA node"),
    ("host.numa_nodes", "host NUMA nodes"),
    ("host.numa_binding", "host memory bound to"),
    ("host.numa_thread", "thread bound to"),
    ("gpu_bench.version", "gpu_bench version"),
    ("gpu_bench.git", "gpu_bench git"),
    ("gpu_bench.gate", "gate"),
    ("benchmark.version", "Google Benchmark"),
    ("library_build_type", "library build"),
)
# Facts of each GPU of a multi-GPU run (gpu.{i}.KEY) and of each ordered pair (topology.{i}-{j}.KEY).
GPU_FACTS = (("name", ""), ("pci_bus_id", " PCI bus"), ("numa_node", " NUMA node"))
TOPOLOGY_FACTS = ("link", "peer_access", "perf_rank", "native_atomics")
_GPU_KEY = re.compile(r"^gpu\.(\d+)\.[a-z_]+$")
_TOPOLOGY_KEY = re.compile(r"^topology\.(\d+)-(\d+)\.([a-z_]+)$")
MAX_GPUS = 64  # a larger index or count in a context is taken for a mistake, not a machine


class InputError(Exception):
    """A file the tools cannot use; str(error) is the one line to show."""


@dataclass(frozen=True)
class CaseName:
    family: str
    axes: tuple[tuple[str, str], ...]
    options: tuple[tuple[str, str], ...]
    timing: str | None
    key: str

    def axis(self, name: str, default: str | None = None) -> str | None:
        for k, v in self.axes:
            if k == name:
                return v
        return default


@lru_cache(maxsize=65536)
def parse_name(name: str) -> CaseName:
    """Split ``Family/key:value/.../manual_time`` into family, axes and Google Benchmark options.

    Positional arguments of plain Google Benchmark cases (``BM_x/8/64``) become axes ``arg0``, ``arg1``.
    The key is the name without the timing suffix, so the same case timed either way matches.
    """
    parts = name.split("/")
    family = parts[0]
    axes: list[tuple[str, str]] = []
    options: list[tuple[str, str]] = []
    timing = None
    kept = [family]
    positional = 0
    for part in parts[1:]:
        if part in TIMING_SUFFIXES:
            timing = part
            continue
        kept.append(part)
        if ":" in part:
            k, v = part.split(":", 1)
            (options if k in RUN_OPTION_KEYS else axes).append((k, v))
        else:
            axes.append((f"arg{positional}", part))
            positional += 1
    return CaseName(family, tuple(axes), tuple(options), timing, "/".join(kept))


@dataclass
class Sample:
    repetition: int
    real_time: float
    cpu_time: float
    iterations: int
    counters: dict[str, float]


@dataclass
class Case:
    key: str
    name: CaseName
    time_unit: str = "ns"
    samples: list[Sample] = field(default_factory=list)
    aggregates: dict[str, dict[str, float]] = field(default_factory=dict)
    aggregate_units: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    skips: list[str] = field(default_factory=list)
    label: str | None = None

    @property
    def family(self) -> str:
        return self.name.family

    @property
    def axes(self) -> dict[str, str]:
        return dict(self.name.axes)

    def axis(self, name: str, default: str | None = None) -> str | None:
        return self.name.axis(name, default)

    def axis_int(self, name: str) -> int | None:
        v = self.name.axis(name)
        try:
            return int(v) if v is not None else None
        except ValueError:
            return None

    @property
    def ok(self) -> bool:
        """True when the case has a figure to report (at least one good repetition or aggregate)."""
        return bool(self.samples) or any(n in self.aggregates for n in ("median", "mean"))

    @property
    def problem(self) -> str | None:
        if self.ok:
            return None
        if self.errors:
            return "error: " + self.errors[0]
        if self.skips:
            return "skipped: " + self.skips[0]
        return "no figures"

    def has_metric(self, metric: str) -> bool:
        m = canonical_metric(metric)
        if m in ("real_time", "cpu_time"):
            return self.ok
        if self.samples:
            return any(m in s.counters for s in self.samples)
        return any(m in a for a in self.aggregates.values())

    def values(self, metric: str) -> list[float]:
        """One value per good repetition, time in this case's time unit."""
        m = canonical_metric(metric)
        if m == "real_time":
            vals = [s.real_time for s in self.samples]
        elif m == "cpu_time":
            vals = [s.cpu_time for s in self.samples]
        else:
            vals = [s.counters[m] for s in self.samples if m in s.counters]
        return [v for v in vals if math.isfinite(v)]

    def aggregate(self, agg: str, metric: str) -> float | None:
        m = canonical_metric(metric)
        a = self.aggregates.get(agg)
        if a is None:
            return None
        return a.get(m)

    def center(self, metric: str) -> float | None:
        """The robust middle: median of the repetitions, else the median or mean aggregate."""
        vals = self.values(metric)
        if vals:
            return median(vals)
        for agg in ("median", "mean"):
            v = self.aggregate(agg, metric)
            if v is not None and math.isfinite(v):
                return v
        return None

    def spread(self, metric: str) -> float | None:
        """Coefficient of variation in percent, from the repetitions or the cv aggregate."""
        vals = self.values(metric)
        if len(vals) >= 2:
            return cv_pct(vals)
        v = self.aggregate("cv", metric)
        return v * 100.0 if v is not None else None


@dataclass
class BenchmarkFile:
    path: str
    context: dict[str, Any]
    cases: dict[str, Case]
    schema: str | None

    @property
    def is_gpu_bench(self) -> bool:
        return self.schema is not None

    @property
    def stem(self) -> str:
        return Path(self.path).stem

    def fact(self, key: str) -> str | None:
        """A context fact as text, or None where it is missing or written as 'unavailable'."""
        if key == "pcie":
            return pcie_link(self)
        v = self.context.get(key)
        if v is None:
            return None
        v = str(v).strip()
        if not v or v == UNAVAILABLE:
            return None
        return v

    def ok_cases(self) -> list[Case]:
        return [c for c in self.cases.values() if c.ok]


@dataclass
class Span:
    name: str
    cat: str
    start_us: float
    dur_us: float
    tid: int
    args: dict[str, Any]


@dataclass
class TimelineCase:
    pid: int
    name: str
    spans: list[Span] = field(default_factory=list)
    thread_names: dict[int, str] = field(default_factory=dict)


@dataclass
class Timeline:
    path: str
    cases: dict[int, TimelineCase]

    @property
    def stem(self) -> str:
        return Path(self.path).stem


# ---------------------------------------------------------------------------------------------
# small statistics (the statistics module works in exact fractions: too slow for a full matrix)


def median(vals: list[float]) -> float:
    s = sorted(vals)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def cv_pct(vals: list[float]) -> float | None:
    """Sample standard deviation over the mean, in percent."""
    n = len(vals)
    if n < 2:
        return None
    mean = math.fsum(vals) / n
    if not mean:
        return None
    var = math.fsum((v - mean) ** 2 for v in vals) / (n - 1)
    return math.sqrt(var) / abs(mean) * 100.0


# ---------------------------------------------------------------------------------------------
# metrics


def canonical_metric(metric: str) -> str:
    return "real_time" if metric in ("time", "real_time") else metric


def default_metric(family: str) -> str:
    return "gbps" if family in TRANSFER_LIKE else "time"


def metric_for(case: Case, requested: str | None) -> str:
    if requested:
        return requested
    m = default_metric(case.family)
    if m != "time" and not case.has_metric(m):
        return "time"
    return m


def higher_is_better(metric: str) -> bool:
    m = canonical_metric(metric)
    return m in HIGHER_IS_BETTER or m.endswith("_per_second") or m.endswith("gbps")


def metric_unit(metric: str, time_unit: str = "ns") -> str:
    m = canonical_metric(metric)
    if m in ("real_time", "cpu_time"):
        return time_unit
    if m.endswith("gbps"):
        return "GB/s"
    if m.endswith("_per_second"):
        return "/s" if m.startswith("items") else "B/s"
    for suffix, unit in (("_us", "us"), ("_ms", "ms"), ("_ns", "ns"), ("_pct", "%"), ("_bytes", "B")):
        if m.endswith(suffix):
            return unit
    if m == "speedup":
        return "x"
    return ""


def metric_title(metric: str) -> str:
    m = canonical_metric(metric)
    return {"real_time": "time", "gbps": "bandwidth"}.get(m, m)


# ---------------------------------------------------------------------------------------------
# context helpers


def pcie_link(f: BenchmarkFile) -> str | None:
    gen, width = f.fact("gpu.pcie_gen"), f.fact("gpu.pcie_width")
    gmax, wmax = f.fact("gpu.pcie_gen_max"), f.fact("gpu.pcie_width_max")
    if not any((gen, width, gmax, wmax)):
        return None
    now = f"gen{gen or '?'} x{width or '?'}"
    most = f"gen{gmax or '?'} x{wmax or '?'}"
    return f"{now} / {most}"


def short_gpu_name(name: str) -> str:
    return re.sub(r"^NVIDIA\s+", "", name.strip())


def machine_label(f: BenchmarkFile) -> str:
    gpu = f.fact("gpu.name")
    if (gpu_count(f) or 1) > 1:
        gpu = gpu_summary(f) or gpu
    driver = f.fact("driver.version")
    if gpu and driver:
        return f"{short_gpu_name(gpu)}, driver {driver}"
    if gpu:
        return short_gpu_name(gpu)
    return f.stem


def file_labels(files: Iterable[BenchmarkFile]) -> list[str]:
    """One legend label per file: GPU and driver, with the file name added where two would clash."""
    files = list(files)
    base = [machine_label(f) for f in files]
    labels = [f"{lab} ({f.stem})" if base.count(lab) > 1 and lab != f.stem else lab for lab, f in zip(base, files)]
    # Same GPU, driver and file stem in different folders: fall back to position.
    for i, lab in enumerate(labels):
        if labels.count(lab) > 1:
            labels[i] = f"{lab} #{i + 1}"
    return labels


def _show_bytes(v: str) -> str:
    try:
        n = int(v)
    except ValueError:
        return v
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def display_fact(f: BenchmarkFile, key: str) -> str | None:
    v = f.fact(key)
    if v is not None and key.endswith("_bytes"):
        return _show_bytes(v)
    return v


def gpu_count(f: BenchmarkFile) -> int | None:
    """How many GPUs the run saw: gpu.count, else the per-GPU facts, else 1 where the first GPU is known."""
    try:
        n = int(f.fact("gpu.count") or "")
    except ValueError:
        n = 0
    if 0 < n <= MAX_GPUS:
        return n
    idx = [int(m.group(1)) for k in f.context if (m := _GPU_KEY.match(str(k))) and int(m.group(1)) < MAX_GPUS]
    if idx:
        return max(idx) + 1
    return 1 if f.fact("gpu.name") else None


def gpu_fact(f: BenchmarkFile, index: int, key: str) -> str | None:
    """A fact of GPU `index`; GPU 0 falls back on the first device's gpu.KEY."""
    v = f.fact(f"gpu.{index}.{key}")
    if v is None and index == 0:
        v = f.fact(f"gpu.{key}")
    return v


def gpu_summary(f: BenchmarkFile) -> str | None:
    """'4 x H100 80GB HBM3' (or '2 x H100, 2 x A100' in a mixed machine); None where no GPU name is known."""
    n = gpu_count(f) or 1
    names: dict[str, int] = {}
    for i in range(n):
        name = gpu_fact(f, i, "name")
        name = short_gpu_name(name) if name else "GPU (name unavailable)"
        names[name] = names.get(name, 0) + 1
    if list(names) == ["GPU (name unavailable)"]:
        return None
    return ", ".join(f"{k} x {name}" for name, k in names.items())


def topology(f: BenchmarkFile) -> dict[tuple[int, int], dict[str, str]]:
    """(src, dst) -> {link, peer_access, perf_rank, native_atomics}, as written ('unavailable' kept)."""
    out: dict[tuple[int, int], dict[str, str]] = {}
    for k, v in f.context.items():
        m = _TOPOLOGY_KEY.match(str(k))
        if not m or m.group(3) not in TOPOLOGY_FACTS:
            continue
        i, j = int(m.group(1)), int(m.group(2))
        if i < MAX_GPUS and j < MAX_GPUS:
            out.setdefault((i, j), {})[m.group(3)] = f.fact(k) or UNAVAILABLE
    return out


def link_text(facts: dict[str, str] | None) -> str:
    """One pair's facts in one short phrase: 'nvlink, p2p yes, rank 0, atomics yes'."""
    if not facts:
        return UNAVAILABLE
    link, p2p, rank, atomics = (facts.get(k, UNAVAILABLE) for k in TOPOLOGY_FACTS)
    return f"{link}, p2p {p2p}, rank {rank}, atomics {atomics}"


def multi_gpu_rows(files: list[BenchmarkFile], per_gpu: bool = True) -> list[tuple[str, list[str]]]:
    """The GPU count and (per_gpu) each GPU's facts and each ordered pair's link, where any file has 2+ GPUs."""
    counts = [gpu_count(f) for f in files]
    if not any(c and c > 1 for c in counts) and not any(f.fact("gpu.count") for f in files):
        return []
    rows = [("GPUs", [str(f.fact("gpu.count") or (UNAVAILABLE if f.is_gpu_bench else "-")) for f in files])]
    n = max((c or 0) for c in counts)
    if n < 2 or not per_gpu:
        return rows
    for i in range(n):
        for key, suffix in GPU_FACTS:
            rows.append((f"GPU {i}{suffix}", [(gpu_fact(f, i, key) or UNAVAILABLE) if i < (c or 0) else "-"
                                              for f, c in zip(files, counts)]))
    topo = [topology(f) for f in files]
    pairs = sorted({p for t in topo for p in t if p[0] != p[1] and max(p) < n})
    for i, j in pairs:
        rows.append((f"GPU {i} -> {j}", [link_text(t.get((i, j))) if max(i, j) < (c or 0) else "-"
                                         for t, c in zip(topo, counts)]))
    return rows


def context_rows(files: list[BenchmarkFile], per_gpu: bool = True) -> list[tuple[str, list[str]]]:
    """Every known fact as (label, value per file); a missing fact reads 'unavailable'.

    Multi-GPU runs add, after the first GPU's name, the GPU count and (per_gpu) each GPU's name, PCI bus
    and NUMA node and each ordered pair's link.
    """
    rows = []
    for key, label in FACTS:
        vals = [display_fact(f, key) or (UNAVAILABLE if f.is_gpu_bench or "." not in key else "-") for f in files]
        if key == "benchmark.version":
            vals = [f.fact(key) or f.fact("library_version") or "-" for f in files]
        if key == "gpu_bench.gate":  # on in every gpu_bench run from before --gate=off existed
            vals = [f.fact(key) or ("on" if f.is_gpu_bench else "-") for f in files]
        rows.append((label, vals))
        if key == "gpu.name":
            rows += multi_gpu_rows(files, per_gpu)
    return rows


def context_differences(files: list[BenchmarkFile]) -> list[tuple[str, list[str]]]:
    """The facts whose value is not the same in every file."""
    if len(files) < 2:
        return []
    return [(label, vals) for label, vals in context_rows(files) if len(set(vals)) > 1]


# ---------------------------------------------------------------------------------------------
# reading files


def _read_text(path: str | os.PathLike) -> str:
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, not a JSON file") from None
    except PermissionError:
        raise InputError(f"{p}: permission denied") from None
    except OSError as e:
        raise InputError(f"{p}: cannot read ({e.strerror or e})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{p}: not JSON (not UTF-8 text)") from None
    if not text.strip():
        raise InputError(f"{p}: empty file, not JSON")
    return text


def _parse_json(path: str | os.PathLike, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        # Cut off: the error sits at the very end, inside a string, or on a half-written number or literal.
        tail = text[e.pos:].rstrip()
        if e.msg.startswith("Unterminated string") or re.fullmatch(r"[A-Za-z0-9.+\-]*", tail):
            raise InputError(
                f"{path}: truncated JSON (the document stops early, line {e.lineno}); "
                "was the run interrupted?"
            ) from None
        raise InputError(f"{path}: not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise InputError(f"{path}: not JSON that can be read (nested too deeply)") from None


def read_json(path: str | os.PathLike) -> Any:
    return _parse_json(path, _read_text(path))


def is_timeline(doc: Any) -> bool:
    return (isinstance(doc, dict) and "traceEvents" in doc) or (
        isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict) and "ph" in doc[0]
    )


def _number(entry: dict, key: str, where: str, default: float | None = None) -> float:
    v = entry.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f"{where}: '{key}' is not a number")
    return float(v)


def _converted(path: str | os.PathLike, doc: Any, convert: Callable[[str, Any], Any], what: str) -> Any:
    """convert(path, doc), with any sign of a malformed document turned into one InputError line."""
    try:
        return convert(str(path), doc)
    except InputError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:
        raise InputError(f"{path}: {what} ({type(e).__name__}: {e})") from None


def benchmark_file_from_doc(path: str | os.PathLike, doc: Any) -> BenchmarkFile:
    """Check and convert a parsed document; anything unusable raises InputError with one line."""
    return _converted(path, doc, _benchmark_file_from_doc, "not Google Benchmark output")


def _benchmark_file_from_doc(path: str, doc: Any) -> BenchmarkFile:
    if is_timeline(doc):
        raise InputError(f"{path}: a --timeline trace, not benchmark results (gpu-bench-plot draws it)")
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise InputError(f"{path}: not Google Benchmark output (no 'benchmarks' list)")
    ctx = doc.get("context")
    if not isinstance(ctx, dict):
        raise InputError(f"{path}: not Google Benchmark output (no 'context' object)")
    gb_schema = ctx.get("json_schema_version")
    if gb_schema is not None and gb_schema not in KNOWN_GB_JSON_SCHEMAS:
        raise InputError(f"{path}: Google Benchmark json_schema_version {gb_schema!r} is not one these tools read")
    schema = ctx.get("gpu_bench.schema")
    if schema is not None:
        schema = str(schema)
        if schema not in KNOWN_SCHEMAS:
            raise InputError(
                f"{path}: gpu_bench.schema {schema!r} is unknown (these tools read {', '.join(KNOWN_SCHEMAS)}); "
                "update gpu_bench_tools"
            )
    entries = doc["benchmarks"]
    if not entries:
        raise InputError(f"{path}: no benchmarks in the file (was the filter empty?)")

    cases: dict[str, Case] = {}
    numbers = (int, float)  # exact types: a JSON true/false is a bool, never a figure
    for i, e in enumerate(entries):
        if type(e) is not dict or type(e.get("name")) is not str or not e["name"]:
            raise InputError(f"{path}: benchmarks[{i}] has no name: not Google Benchmark output")
        run_type = e.get("run_type", "iteration")
        agg_name = e.get("aggregate_name")
        if run_type == "aggregate":
            if type(agg_name) is not str:
                raise InputError(f"{path}: benchmarks[{i}]: aggregate without 'aggregate_name'")
            if agg_name in COMPLEXITY_AGGREGATES:
                continue
        elif run_type != "iteration":
            raise InputError(f"{path}: benchmarks[{i}]: unknown run_type {run_type!r}")
        run_name = e.get("run_name")
        if type(run_name) is not str or not run_name:
            run_name = e["name"]
            if run_type == "aggregate" and run_name.endswith("_" + agg_name):
                run_name = run_name[: -len(agg_name) - 1]
        cn = parse_name(run_name)
        case = cases.get(cn.key)
        time_unit = e.get("time_unit", "ns")
        if type(time_unit) is not str or time_unit not in TIME_UNIT_NS:
            raise InputError(f"{path}: benchmarks[{i}]: unknown time_unit {time_unit!r}")
        if case is None:
            case = cases[cn.key] = Case(cn.key, cn, time_unit)
        label = e.get("label")
        if label and type(label) is str:
            case.label = label
        if e.get("error_occurred") is True:
            case.errors.append(str(e.get("error_message") or "error without a message"))
            continue
        if e.get("skipped") is True:
            case.skips.append(str(e.get("skip_message") or "skipped"))
            continue
        real = e.get("real_time")
        cpu = e.get("cpu_time", 0.0)
        if type(real) not in numbers or type(cpu) not in numbers:
            bad = "real_time" if type(real) not in numbers else "cpu_time"
            raise InputError(f"{path}: benchmarks[{i}]: '{bad}' is not a number")
        if time_unit != case.time_unit and not (run_type == "aggregate" and e.get("aggregate_unit") == "percentage"):
            f = TIME_UNIT_NS[time_unit] / TIME_UNIT_NS[case.time_unit]
            real, cpu = real * f, cpu * f
        counters = {k: float(v) for k, v in e.items() if type(v) in numbers and k not in _NOT_COUNTERS}
        if run_type == "aggregate":
            counters["real_time"] = float(real)
            counters["cpu_time"] = float(cpu)
            case.aggregates[agg_name] = counters
            case.aggregate_units[agg_name] = str(e.get("aggregate_unit", "time"))
            continue
        if not math.isfinite(real):
            case.errors.append(f"real_time is {real}")
            continue
        rep = e.get("repetition_index")
        if type(rep) is not int:
            rep = len(case.samples)
        iters = e.get("iterations", 0)
        iters = int(iters) if type(iters) in numbers and math.isfinite(iters) else 0
        case.samples.append(Sample(rep, float(real), float(cpu), iters, counters))
    if not cases:
        raise InputError(f"{path}: no benchmarks in the file")
    return BenchmarkFile(path, ctx, cases, schema)


_NOT_COUNTERS = frozenset(
    {
        "name", "run_name", "run_type", "family_index", "per_family_instance_index", "repetitions",
        "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
        "aggregate_name", "aggregate_unit", "error_occurred", "error_message", "skipped", "skip_message",
        "label",
    }
)


def load_file(path: str | os.PathLike) -> BenchmarkFile:
    """Load one benchmark JSON file or raise InputError with one line saying what is wrong."""
    return benchmark_file_from_doc(path, read_json(path))


def load_files(paths: Iterable[str | os.PathLike]) -> list[BenchmarkFile]:
    return [load_file(p) for p in paths]


def timeline_from_doc(path: str | os.PathLike, doc: Any) -> Timeline:
    return _converted(path, doc, _timeline_from_doc, "not a Chrome trace that can be drawn")


def _timeline_from_doc(path: str, doc: Any) -> Timeline:
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise InputError(f"{path}: not a Chrome trace ('traceEvents' is not a list)")
    cases: dict[int, TimelineCase] = {}

    def case_for(pid: Any) -> TimelineCase:
        key = pid if isinstance(pid, int) and not isinstance(pid, bool) else hash(str(pid))
        if key not in cases:
            cases[key] = TimelineCase(key, f"case {pid}")
        return cases[key]

    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise InputError(f"{path}: traceEvents[{i}] is not an object")
        ph = ev.get("ph")
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        if ph == "M":
            name = args.get("name")
            if ev.get("name") == "process_name" and isinstance(name, str):
                case_for(ev.get("pid", 0)).name = name
            elif ev.get("name") == "thread_name" and isinstance(name, str):
                tid = ev.get("tid", 0)
                if isinstance(tid, int):
                    case_for(ev.get("pid", 0)).thread_names[tid] = name
        elif ph == "X":
            where = f"{path}: traceEvents[{i}]"
            ts, dur = _number(ev, "ts", where), _number(ev, "dur", where, 0.0)
            tid = ev.get("tid", 0)
            tid = tid if isinstance(tid, int) and not isinstance(tid, bool) else 0
            case_for(ev.get("pid", 0)).spans.append(
                Span(str(ev.get("name", "")), str(ev.get("cat", "")), ts, dur, tid, args)
            )
    cases = {k: c for k, c in cases.items() if c.spans}
    if not cases:
        raise InputError(f"{path}: the trace has no complete ('ph': 'X') events to draw")
    return Timeline(path, cases)


def load_timeline(path: str | os.PathLike) -> Timeline:
    doc = read_json(path)
    if not is_timeline(doc):
        raise InputError(f"{path}: not a --timeline trace (no 'traceEvents')")
    return timeline_from_doc(path, doc)


def load_any(path: str | os.PathLike) -> BenchmarkFile | Timeline:
    """A benchmark file or a timeline trace, whichever the content is."""
    doc = read_json(path)
    if is_timeline(doc):
        return timeline_from_doc(path, doc)
    return benchmark_file_from_doc(path, doc)
