"""A gpu_bench run as Prometheus metrics: a node_exporter textfile, the same a Pushgateway receives.

Names and units follow Prometheus' conventions (base units: bytes per second, seconds, ratios); labels
follow dcgm-exporter's (`Hostname`, `gpu`, `UUID`, `modelName`, `pci_bus_id`), so a figure can be put
next to DCGM's own series of the same GPU, plus `device` (CUDA's index, gpu_bench's --device), `preset`,
`family` and the case's axes. `gpu` is NVML's index, as dcgm-exporter's is: the run's gpu.N.nvml_index,
empty where the run did not read it (CUDA's index is no stand-in: the two differ wherever CUDA orders the
GPUs otherwise). Every metric of one file has one set of label names, the union over its cases, with an
empty value (which Prometheus reads as no label) where a case lacks an axis. The exposition is
prometheus_client's; no sample carries a timestamp.

A check that could not judge its node (a tool missing, no results, a timeout) has metrics of its own
(check_errored_families): the verdict errored, gpu_bench_check_errored 1, and the last success kept.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .expectations import result_link
from ..reading.facts import host_link_peak
from .gate import ERRORED, case_gpu, model_of
from ..reading.multigpu import gpu_fact, gpus_used
from ..reading.cases import TIME_UNIT_NS
from ..reading.error_counters import FAULT_RATE_PER_S, counter_changes

if TYPE_CHECKING:
    from .gate import Verdict
    from ..reading.cases import Case
    from ..reading.results import BenchmarkFile

GPU_LABELS = ("Hostname", "gpu", "UUID", "modelName", "pci_bus_id", "device")
RUN_LABELS = ("preset", "family")
# The quantiles of one sample's time every case carries (docs/json.md), by the counter that holds each, in us.
SAMPLE_QUANTILES = (("0.5", "sample_p50_us"), ("0.9", "sample_p90_us"), ("0.99", "sample_p99_us"))
# What a case's GPUs read at its start and end (docs/json.md): (metric, counter without _start or _end, factor to
# the base unit, help).
CASE_EDGES = (
    ("gpu_bench_case_power_watts", "power_w", 1.0,
     "The power a case's GPUs drew at its start and end (`at`), the most any of them drew (power_w_start, "
     "power_w_end)."),
    ("gpu_bench_case_temperature_celsius", "temp_c", 1.0,
     "A case's GPUs' temperature at its start and end (`at`), the hottest of them (temp_c_start, temp_c_end)."),
    ("gpu_bench_case_sm_clock_hertz", "sm_clock_mhz", 1e6,
     "The SM clock of a case's first GPU at its start and end (`at`) (sm_clock_mhz_start, sm_clock_mhz_end)."),
    ("gpu_bench_case_memory_clock_hertz", "mem_clock_mhz", 1e6,
     "The memory clock of a case's first GPU at its start and end (`at`) (mem_clock_mhz_start, mem_clock_mhz_end)."),
)
LAST_SUCCESS = "gpu_bench_last_success_timestamp_seconds"
CHECK_ERRORED = "gpu_bench_check_errored"
VERDICT_HELP = ("gpu-bench-gate's verdict on the run: 0 pass, 1 degraded (a figure beyond its expectation, or an error "
                "counter rose at a fault's rate: gpu_bench_error_counter_increase), 2 errored (a case failed or is "
                "missing, or the check could not judge the node: gpu_bench_check_errored).")
COUNTER_HELP = ("How much an NVML error counter of the GPU rose during the run: its end less its start (below 0 where "
                "it was reset). A rise at a fault's rate (any NVLink replay or recovery, NVLink CRC errors at "
                f"{FAULT_RATE_PER_S['nvlink_crc_data']:g} a second, PCIe replays at "
                f"{FAULT_RATE_PER_S['pcie_replay'] * 60:g} a minute) makes the gate's verdict degraded.")
CHECK_ERRORED_HELP = ("1 when the node's last check could not judge it (a tool missing or failing, no results, a result "
                      "the gate cannot read, a timeout), which drains nothing; 0 when it judged the node.")
LAST_SUCCESS_HELP = ("When the last run that measured every case ended (pass or degraded), Unix time; an errored run "
                     "leaves it as it was.")
_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_PCI = re.compile(r"^([0-9a-fA-F]{1,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")


def run_node(f: BenchmarkFile) -> tuple[str, str]:
    """(Hostname, preset) of a run: the node and preset its metrics are published under."""
    return _host(f), _preset(f)


def textfile_name(preset: str) -> str:
    """One file per preset, so a node's gate and nightly runs sit side by side in the textfile folder."""
    return f"gpu_bench_{safe_preset(preset)}.prom"


def grouping_key(host: str, preset: str) -> dict[str, str]:
    """The Pushgateway group of a run: one per node and preset."""
    return {"instance": host, "preset": safe_preset(preset)}


def registry_for(f: BenchmarkFile, verdict: Verdict, previous_success: float | None = None):
    """A CollectorRegistry holding the run's metrics.

    previous_success: the last success time already published (the old textfile's); an errored run
    keeps it, so `time() - gpu_bench_last_success_timestamp_seconds` keeps growing until a run succeeds.
    """
    from prometheus_client import CollectorRegistry

    reg = CollectorRegistry(auto_describe=False)
    families = metric_families(f, verdict, previous_success)
    reg.register(_Fixed(families))
    return reg


class _Fixed:
    """A collector of metric families built once (the run is over; nothing changes between scrapes)."""

    def __init__(self, families):
        self._families = families

    def collect(self):
        return iter(self._families)


def metric_families(f: BenchmarkFile, verdict: Verdict, previous_success: float | None):
    from prometheus_client.core import GaugeMetricFamily

    host, preset = _host(f), _preset(f)
    rows = list(_case_rows(f))
    axes: list[str] = []
    for _, labels, _ in rows:
        axes += [k for k in labels if k not in axes and k not in GPU_LABELS + RUN_LABELS]
    names = list(GPU_LABELS + RUN_LABELS) + axes

    def family(name: str, doc: str) -> GaugeMetricFamily:
        return GaugeMetricFamily(name, doc, labels=names)

    rate = family("gpu_bench_transfer_bytes_per_second",
                  "A case's headline rate (GB/s in gpu_bench, here bytes per second): the median of its samples.")
    part = GaugeMetricFamily("gpu_bench_transfer_part_bytes_per_second",
                             "One part of a case's rate: each direction of a two-way copy (part h2d, d2h), each "
                             "GPU of a copy by every GPU at once (part gpu0, ...).", labels=names + ["part"])
    latency = family("gpu_bench_latency_seconds",
                     "A case's headline time (a copy, launch, allocation or synchronisation): the median of "
                     "its samples.")
    noise = family("gpu_bench_noise_ratio",
                   "Relative half-width of the 95% interval the case's next run falls in, from its rounds "
                   "(noise_pct / 100); of a run of one round, its median's confidence interval in that process.")
    samples = family("gpu_bench_samples", "Timed samples behind a case's figure.")
    quantiles = GaugeMetricFamily("gpu_bench_sample_seconds",
                                  "One sample's time at a quantile of every sample behind a case's figure, every "
                                  "round's together (sample_p50_us, sample_p90_us, sample_p99_us).",
                                  labels=names + ["quantile"])
    edges = {metric: (GaugeMetricFamily(metric, doc, labels=names + ["at"]), counter, factor)
             for metric, counter, factor, doc in CASE_EDGES}
    rose = family("gpu_bench_case_link_errors_rose",
                  "How much the link error counters of a case's GPUs rose while it ran (link_errors_rose); only "
                  "the cases where they rose.")
    for case, labels, headline in rows:
        values = [labels.get(n, "") for n in names]
        kind, value = headline
        (rate if kind == "rate" else latency).add_metric(values, value)
        for counter in sorted(k for k in _counters(case) if k.startswith("gbps_")):
            v = case.center(counter)
            if v is not None and math.isfinite(v):
                part.add_metric(values + [counter[len("gbps_"):]], v * 1e9)
        n = case.written_noise_pct()
        if n is not None and math.isfinite(n):
            noise.add_metric(values, n / 100.0)
        s = case.center("samples")
        if s is not None and math.isfinite(s):
            samples.add_metric(values, s)
        for quantile, counter in SAMPLE_QUANTILES:
            v = case.center(counter)
            if v is not None and math.isfinite(v):
                quantiles.add_metric(values + [quantile], v * 1e-6)
        for metric, counter, factor in edges.values():
            for at in ("start", "end"):
                v = case.center(f"{counter}_{at}")
                if v is not None and math.isfinite(v):
                    metric.add_metric(values + [at], v * factor)
        v = case.center("link_errors_rose")
        if v is not None and math.isfinite(v) and v > 0:
            rose.add_metric(values, v)
    out = [m for m in (rate, part, latency, noise, samples, quantiles, *(e[0] for e in edges.values()), rose)
           if m.samples]
    out += _gpu_families(f, host, preset)

    node = ["Hostname", "preset"]
    gate = GaugeMetricFamily("gpu_bench_gate_verdict", VERDICT_HELP, labels=node)
    gate.add_metric([host, preset], float(verdict.status))
    out.append(gate)
    judged = GaugeMetricFamily(CHECK_ERRORED, CHECK_ERRORED_HELP, labels=node)
    judged.add_metric([host, preset], 0.0)
    out.append(judged)
    software = {"version": "gpu_bench.version", "git": "gpu_bench.git", "driver_version": "driver.version",
                "cuda_version": "driver.cuda_version", "runtime_version": "runtime.version"}
    values = {label: f.fact(key) or "" for label, key in software.items()}
    if f.chosen_filter:  # a filtered run names its filter, which its preset label holds only as a hash
        values["filter"] = f.chosen_filter
    info = GaugeMetricFamily("gpu_bench_info", "The run's software (value 1).", labels=node + list(values))
    info.add_metric([host, preset] + list(values.values()), 1.0)
    out.append(info)
    success = run_finished_at(f) if verdict.status != ERRORED else previous_success
    if success is not None:
        last = GaugeMetricFamily(LAST_SUCCESS, LAST_SUCCESS_HELP, labels=node)
        last.add_metric([host, preset], success)
        out.append(last)
    return out


def check_errored_registry(host: str, preset: str, previous_success: float | None = None):
    """A CollectorRegistry for a check that could not judge its node: no figures, the verdict errored (2),
    gpu_bench_check_errored 1, and the last success an earlier run published, kept."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.core import GaugeMetricFamily

    node, values = ["Hostname", "preset"], [host, preset]
    gate = GaugeMetricFamily("gpu_bench_gate_verdict", VERDICT_HELP, labels=node)
    gate.add_metric(values, float(ERRORED))
    errored = GaugeMetricFamily(CHECK_ERRORED, CHECK_ERRORED_HELP, labels=node)
    errored.add_metric(values, 1.0)
    out = [gate, errored]
    if previous_success is not None:
        last = GaugeMetricFamily(LAST_SUCCESS, LAST_SUCCESS_HELP, labels=node)
        last.add_metric(values, previous_success)
        out.append(last)
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Fixed(out))
    return reg


def gpu_labels(f: BenchmarkFile, gpu: int, used: list[int]) -> dict[str, str]:
    """dcgm-exporter's labels of CUDA's GPU `gpu`: `gpu` NVML's index (empty where the run did not read it),
    `UUID`, `modelName`, `pci_bus_id` as NVML writes it; and `device`, CUDA's index."""
    return {"gpu": nvml_index(f, gpu), "UUID": gpu_fact(f, gpu, "uuid") or "", "modelName": model_of(f, gpu, used) or "",
            "pci_bus_id": nvml_bus_id(gpu_fact(f, gpu, "pci_bus_id") or ""), "device": str(gpu)}


def nvml_index(f: BenchmarkFile, gpu: int) -> str:
    """NVML's index of CUDA's GPU `gpu` (gpu.N.nvml_index), or '' where the run did not read it."""
    v = gpu_fact(f, gpu, "nvml_index")
    return v if v is not None and v.isdigit() else ""


def _gpu_families(f: BenchmarkFile, host: str, preset: str):
    """Each GPU's own facts: its host link (what it can train to in its slot) and NUMA node as labels of
    gpu_bench_gpu_info, its link's peak, and how much each of its error counters rose; joined to a figure
    by `UUID`."""
    from prometheus_client.core import GaugeMetricFamily

    used = gpus_used(f)
    gpus = sorted(set(used) | {case_gpu(f, c, used) for c in f.cases.values()
                               if c.axis("device") is not None or c.axis("src") is not None})
    names = ["Hostname", "preset", "gpu", "UUID", "modelName", "pci_bus_id", "device"]
    info = GaugeMetricFamily("gpu_bench_gpu_info", "Each GPU's host link, as it can train at best in its slot, "
                             "and NUMA node (value 1).", labels=names + ["host_link", "numa_node"])
    peak = GaugeMetricFamily("gpu_bench_host_link_peak_bytes_per_second", "Each GPU's host link peak per "
                             "direction, from its device profile.", labels=names)
    for gpu in gpus:
        own = gpu_labels(f, gpu, used)
        values = [host, preset] + [own[k] for k in names[2:]]
        info.add_metric(values + [result_link(f, gpu) or "", gpu_fact(f, gpu, "numa_node") or ""], 1.0)
        p = host_link_peak(f, gpu)
        if p is not None:
            peak.add_metric(values, p[0] * 1e9)
    errors = GaugeMetricFamily("gpu_bench_error_counter_increase", COUNTER_HELP, labels=names + ["counter"])
    for ch in counter_changes(f.context) or []:
        own = gpu_labels(f, ch.gpu, used)
        errors.add_metric([host, preset] + [own[k] for k in names[2:]] + [ch.counter], float(ch.rise))
    return [m for m in (info, peak, errors) if m.samples] if f.is_gpu_bench else []


def _case_rows(f: BenchmarkFile):
    """(case, labels, (kind, value)) for every case with a rate or time headline."""
    used = gpus_used(f)
    host, preset = _host(f), _preset(f)
    for case in f.cases.values():
        if not case.ok:
            continue
        d = f.descriptor(case.family)
        if d is None:
            continue
        value = case.center(d.headline)
        if value is None or not math.isfinite(value):
            continue
        unit = d.unit or case.time_unit
        if unit == "GB/s":
            headline = ("rate", value * 1e9)
        elif unit in TIME_UNIT_NS:
            if d.headline == "real_time":
                unit = case.time_unit  # the time's own unit, whatever the descriptor says
            headline = ("time", value * (TIME_UNIT_NS[unit] / 1e9))
        else:
            continue  # a unit with no base unit to convert to (a ratio such as a speedup)
        labels = {"Hostname": host, "preset": preset, "family": case.family}
        single = d.scope != "multi_gpu" or case.axis("src") is not None
        if single:
            labels.update(gpu_labels(f, case_gpu(f, case, used), used))
        for k, v in case.name.axes:
            if k != "device":
                labels[_axis_label(k)] = v
        yield case, labels, headline


def _counters(case: Case) -> set[str]:
    return {k for s in case.samples for k in s.counters} or {k for a in case.aggregates.values() for k in a}


def _axis_label(key: str) -> str:
    """An axis as a label name; one that clashes with the GPU or run labels, or is no label name, is prefixed."""
    if key in GPU_LABELS + RUN_LABELS + ("part",) or not _LABEL_NAME.match(key) or key.startswith("__"):
        return "axis_" + re.sub(r"[^a-zA-Z0-9_]", "_", key)
    return key


def nvml_bus_id(bus: str) -> str:
    """CUDA's '0000:00:06.0' as NVML and dcgm-exporter write it, '00000000:00:06.0'."""
    m = _PCI.match(bus)
    if not m:
        return bus
    dom, b, dev, fn = m.groups()
    return f"{int(dom, 16):08X}:{b.upper()}:{dev.upper()}.{fn}"


def run_finished_at(f: BenchmarkFile) -> float:
    """When the run ended, Unix time: its start (`date`) plus gpu_bench.elapsed_s; now, where the date
    cannot be read."""
    try:
        start = datetime.fromisoformat(str(f.context.get("date", ""))).timestamp()
    except ValueError:
        return time.time()
    try:
        elapsed = float(f.fact("gpu_bench.elapsed_s") or 0.0)
    except ValueError:
        elapsed = 0.0
    return start + (elapsed if math.isfinite(elapsed) and elapsed > 0 else 0.0)


def previous_success(path: str | os.PathLike, host: str, preset: str) -> float | None:
    """The last success an existing textfile holds for this node and preset (None where it holds none)."""
    from prometheus_client.parser import text_string_to_metric_families

    try:
        text = Path(path).read_text(encoding="utf-8")
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                if (s.name == LAST_SUCCESS and s.labels.get("Hostname") == host
                        and s.labels.get("preset") == safe_preset(preset)):
                    return float(s.value)
    except (OSError, ValueError, UnicodeDecodeError):
        return None  # no old file, or one not ours: there is nothing to keep
    return None


def write_textfile(folder: str | os.PathLike, preset: str, registry) -> Path:
    """Write the registry into FOLDER/gpu_bench_PRESET.prom atomically (a temporary file, then rename):
    node_exporter reads either the old file or the new one, never half of one."""
    from prometheus_client import write_to_textfile

    out = Path(folder) / textfile_name(preset)
    write_to_textfile(str(out), registry)
    return out


def _host(f: BenchmarkFile) -> str:
    return f.fact("host_name") or "unknown"


def _preset(f: BenchmarkFile) -> str:
    """The preset a run's metrics go under. A filtered run (gpu_bench.filter) is a set of its own, PRESET-filtered-
    and the first 8 hex digits of its filter's SHA-256: it neither replaces the whole preset's textfile, group and
    last success, nor exports the same series beside them."""
    preset = safe_preset(f.fact("gpu_bench.preset") or "default")
    chosen = f.chosen_filter
    return f"{preset}-filtered-{hashlib.sha256(chosen.encode()).hexdigest()[:8]}" if chosen else preset


def safe_preset(preset: str) -> str:
    """A preset as a file name and label value may hold it."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", preset)
