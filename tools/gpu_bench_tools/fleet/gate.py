"""The node gate's verdict on one gpu_bench run, in one place: pass, degraded or errored.

- errored (2): a case failed or was skipped, a figure the expectations name is missing from a run of every
  case (a filtered one is judged on those it holds), or a GPU has no name to choose its expectations by.
- degraded (1): a figure lies beyond its expectation (below its min, above its max) on every measurement,
  or an error counter of a GPU rose during a measurement at a fault's rate (reading/error_counters.py).
- pass (0): neither. A model (or model, link and node shape) without an entry in the shipped expectations
  is said so in a note and passes on what can be checked without one: that every case ran. An operator's
  own file (--expect) without an entry is an error instead (InputError), as a typo there must not pass.

Each GPU is judged against the entry of its model, its host link and its node's shape (a host of one GPU or
a node of several: the host's side of a copy differs between them); the last line names the entries used.

A peer pair's figure may also be held to its pair's NVLink peak as the run's own context states it
(expectations' max_nvlink, a multiple of topology.i-j.nvlink_gbps): above it the measurement is broken.

The limit is compared with the figure itself (the median of its samples, as gpu_bench reports it), not
with the edge of its confidence interval: the limits keep a margin far wider than the noise a gate run
reaches (--noise 0.5%), and an operator reads a threshold the way a node health check applies it.
Where the limit lies inside the figure's own 95% interval the details say so.

A figure beyond its expectation may be measured again (judge_again, with gpu-bench-gate --retries): one
slow measurement can be another tenant's traffic or a clock that had not risen yet, which a node drained
for nothing would cost more than a second measurement. A figure within its expectation on any measurement
passes, and the details name the measurement; one beyond it every time names each value.

The first line is at most 80 characters and names the figure and the GPU (Node Problem Detector shows
the first 80 characters of a custom plugin's output; NHC one line per failed check); details follow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from .expectations import Expectations, Figure, result_link
from ..reading.error_counters import NONE_RECORDED, counter_changes
from ..reading.multigpu import (
    first_gpu_facts_note,
    gpu_count,
    gpu_fact,
    gpus_used,
    node_shape,
    nvlink_peak,
    short_gpu_name,
    topology,
)

if TYPE_CHECKING:
    from ..reading.cases import Case
    from ..reading.results import BenchmarkFile

PASS, DEGRADED, ERRORED = 0, 1, 2
NO_NVLINK_PEAK = ("a peer pair without an NVLink peak in the file (topology.i-j.nvlink_gbps): its figures are not "
                  "held to one")
WORDS = {PASS: "PASS", DEGRADED: "DEGRADED", ERRORED: "ERRORED"}
FIRST_LINE_MAX = 80
_PAIR_AXES = ("src", "dst")
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
MAX_MEASUREMENTS = len(ORDINALS)


@dataclass
class Check:
    gpu: int
    model: str
    figure: Figure
    case: str
    label: str  # the figure's name, with the GPU pair for pair figures
    value: float
    unit: str
    noise_pct: float | None
    nvlink_max: float | None = None  # max_nvlink times the pair's NVLink peak, where the run states it
    # Each later measurement of the figure, in order, while it stayed beyond its expectation: (value,
    # noise_pct, why there is no value).
    again: list[tuple[float | None, float | None, str | None]] = field(default_factory=list)

    @property
    def minimum(self) -> float | None:
        return self.figure.minimum

    @property
    def maximum(self) -> float | None:
        """The lower of the figure's max and its NVLink bound."""
        limits = [x for x in (self.figure.maximum, self.nvlink_max) if x is not None]
        return min(limits) if limits else None

    def outcome_of(self, value: float) -> str:
        if self.minimum is not None and value < self.minimum:
            return "low"
        if self.maximum is not None and value > self.maximum:
            return "high"
        return "ok"

    @property
    def passed_on(self) -> int | None:
        """The later measurement (2: the second) that brought the figure within its expectation, if one did."""
        for k, (value, _, _) in enumerate(self.again, 2):
            if value is not None and self.outcome_of(value) == "ok":
                return k
        return None

    @property
    def outcome(self) -> str:
        return "ok" if self.passed_on else self.outcome_of(self.value)

    @property
    def shown(self) -> tuple[float, float | None]:
        """(value, noise_pct) of the measurement the verdict rests on: the one that passed, else the first."""
        k = self.passed_on
        return (self.value, self.noise_pct) if k is None else self.again[k - 2][:2]

    def measured_text(self) -> str:
        """Every measurement's value: '43.891, 44.02'; 'none' where a measurement gave no figure."""
        return ", ".join(_num(x) if x is not None else "none" for x in [self.value] + [a[0] for a in self.again])

    @property
    def bad(self) -> bool:
        return self.outcome != "ok"

    @property
    def limit_in_noise(self) -> bool:
        """Whether a limit lies within the figure's own 95% confidence interval."""
        value, noise = self.shown
        if not noise:
            return False
        lo, hi = value * (1 - noise / 100), value * (1 + noise / 100)
        return any(x is not None and lo <= x <= hi for x in (self.minimum, self.maximum))


@dataclass
class Verdict:
    status: int
    expectations: str
    checks: list[Check] = field(default_factory=list)
    problems: list[tuple[int | None, str, str]] = field(default_factory=list)  # (GPU, short, detail)
    faults: list[tuple[int, str, str]] = field(default_factory=list)  # (GPU, short, detail): an error counter rose
    counters: tuple[int, int] | None = None  # the run's error counters judged, and on how many GPUs
    notes: list[str] = field(default_factory=list)
    gpus: dict[int, tuple[str | None, str | None]] = field(default_factory=dict)  # index -> (model, link)
    cases_ran: int = 0
    gpu_count: int = 1  # GPUs in the node (gpu.count): what its shape is read from
    entries: list[str] = field(default_factory=list)  # the keys of the entries the GPUs were judged against

    @property
    def word(self) -> str:
        return WORDS[self.status]

    @property
    def bad_checks(self) -> list[Check]:
        return [c for c in self.checks if c.bad]

    def settle(self) -> None:
        """The status from what was found: a problem errs, a slow figure or a rising counter degrades."""
        self.status = ERRORED if self.problems else DEGRADED if self.bad_checks or self.faults else PASS

    @property
    def to_measure_again(self) -> list[Check]:
        """The figures a later measurement could still bring within their expectations: none where the run
        errored or an error counter rose, which no measurement can undo."""
        return [] if self.problems or self.faults else self.bad_checks

    def first_line(self) -> str:
        if self.status == ERRORED:
            gpu, short, _ = self.problems[0]
            return _fit(f"ERRORED: {short}", _on_gpu(self, gpu), len(self.problems) - 1)
        if self.status == DEGRADED:
            bad = self.bad_checks
            more = len(bad) + len(self.faults) - 1
            if self.faults:
                gpu, short, _ = self.faults[0]
                return _fit(f"DEGRADED: {short}", _on_gpu(self, gpu), more)
            c = bad[0]
            rel, limit = ("<", c.minimum) if c.outcome == "low" else (">", c.maximum)
            head = f"DEGRADED: {c.label} {c.measured_text()} {c.unit} {rel} {_num(limit)}"
            return _fit(head, _on_gpu(self, c.gpu), more)
        if self.checks:
            head = f"PASS: {len(self.checks)} figures within expectations"
            later = [c.passed_on for c in self.checks if c.passed_on]
            if later:
                when = ORDINALS[later[0] - 1] if len(set(later)) == 1 else "later"
                head += f", {len(later)} on a {when} measurement"
            return _fit(head, _on_gpus(self), 0)
        if self.entries:
            return _fit(f"PASS: none of the figures the gate judges; all {self.cases_ran} cases ran", "", 0)
        models = sorted({short_gpu_name(m) for m, _ in self.gpus.values() if m})
        return _fit(f"PASS: no expectation for {', '.join(models) or 'this GPU'}; all {self.cases_ran} cases ran",
                    "", 0)

    def lines(self) -> list[str]:
        """The first line, then the details: every figure checked, what failed, notes."""
        out = [self.first_line()]
        for i, (model, link) in sorted(self.gpus.items()):
            out.append(f"GPU {i}: {model or 'name unavailable'}, {link or 'host link unavailable'}")
        width = max((len(c.label) for c in self.checks), default=0)
        for c in self.checks:
            f = c.figure
            value, noise_pct = c.shown
            noise = f" ±{noise_pct:.2g}%" if noise_pct is not None else ""
            bounds = " ".join(x for x in (f"min {_num(c.minimum)}" if c.minimum is not None else "",
                                          f"max {_num(c.maximum)}" if c.maximum is not None else "") if x)
            line = f"  {c.outcome.upper() if c.bad else 'ok':4}  GPU {c.gpu}  {c.label:{width}}  " \
                   f"{_num(value)} {c.unit}{noise}  ({bounds})"
            if c.limit_in_noise:
                line += "  limit within the figure's 95% interval"
            if c.passed_on:
                before = ", ".join(_num(a) if a is not None else "none"
                                   for a in [c.value] + [x for x, _, _ in c.again[:c.passed_on - 2]])
                line += f"  passed on a {ORDINALS[c.passed_on - 1]} measurement (before: {before} {c.unit})"
            elif c.again:
                line += f"  {len(c.again) + 1} measurements: {c.measured_text()} {c.unit}"
            if c.bad:
                line += f"  [{c.case} {f.metric}; {f.source}]"
            out.append(line)
        if self.counters and self.counters[0] and not self.faults:
            n, gpus = self.counters
            out.append(f"  ok    error counters: none of {n} rose at a fault's rate during the run, on {gpus} "
                       f"GPU{'s' * (gpus > 1)}")
        out += [f"  failed: {detail}" for _, _, detail in self.problems + self.faults]
        out += [f"  note: {n}" for n in self.notes]
        out.append(self.expectations_line())
        return out

    def expectations_line(self) -> str:
        """Which entries of which file the GPUs were judged against, and the fact that chose the node's shape."""
        used = "; ".join(self.entries) or "no entry"
        return f"expectations: {used} (gpu.count {self.gpu_count}) from {self.expectations}"


def judge(f: BenchmarkFile, expect: Expectations) -> Verdict:
    """The verdict on a run against expectations (raises InputError where an --expect file lacks a model)."""
    node = node_shape(f)
    v = Verdict(PASS, expect.path, gpu_count=gpu_count(f) or 1)
    if f.chosen_filter:
        v.notes.append(f"--benchmark_filter={f.chosen_filter} chose the cases: a figure left out is not required")
    used = gpus_used(f)
    by_gpu: dict[int, list[Case]] = {}
    for c in f.cases.values():
        gpu = case_gpu(f, c, used)
        by_gpu.setdefault(gpu, []).append(c)
        if c.ok:
            v.cases_ran += 1
        else:
            v.problems.append((gpu, f"{c.key} failed", f"{c.key} on GPU {gpu}: {c.problem}"))
    note = first_gpu_facts_note([f])
    if note:
        v.notes.append(note)
    for gpu in sorted(set(used) | set(by_gpu)):
        model = model_of(f, gpu, used)
        link = result_link(f, gpu)
        v.gpus[gpu] = (model, link)
        if model is None:
            v.problems.append((gpu, "no GPU name in the file", f"GPU {gpu} has no name: its expectations cannot "
                               "be chosen"))
            continue
        entry = expect.entry(model, link, node)
        if entry is None:
            if expect.given:
                from ..reading.errors import InputError

                raise InputError(expect.missing(model, link, node))
            v.notes.append(expect.missing(model, link, node) + ": only checked that every case ran")
            continue
        if entry.key not in v.entries:
            v.entries.append(entry.key)
        for fig in entry.figures:
            _check_figure(f, v, fig, gpu, model, by_gpu.get(gpu, []), required=gpu in used and not f.chosen_filter)
    _judge_counters(v, f, 1)
    v.settle()
    return v


def _judge_counters(v: Verdict, f: BenchmarkFile, measurement: int) -> None:
    """A counter that rose at a fault's rate degrades the node; one that rose slower, or was reset, is noted; a
    run without counters is noted once."""
    during = "the run" if measurement == 1 else f"the {ORDINALS[measurement - 1]} measurement"
    changes = counter_changes(f.context)
    if changes is None:
        if measurement == 1:
            v.notes.append(NONE_RECORDED)
        return
    if measurement == 1:
        v.counters = (len(changes), len({ch.gpu for ch in changes}))
    for ch in changes:
        if ch.fault:
            v.faults.append((ch.gpu, f"{ch.counter} rose by {ch.rise} during {during}", ch.rose_text(during)))
        elif ch.rise > 0:
            v.notes.append(ch.rose_text(during))
        elif ch.rise < 0:
            v.notes.append(ch.reset_text(during))


def names_to_measure_again(v: Verdict, f: BenchmarkFile) -> list[str]:
    """The full case names (as --benchmark_filter matches them) of the figures to measure again, each once."""
    out: list[str] = []
    for c in v.to_measure_again:
        case = f.cases[c.case]
        name = f"{case.key}/{case.name.timing}" if case.name.timing else case.key
        if name not in out:
            out.append(name)
    return out


def judge_again(v: Verdict, first: BenchmarkFile, again: BenchmarkFile, measurement: int) -> str | None:
    """Judge the figures still beyond their expectations on a later measurement (2: the second) of their
    cases, and its error counters. Returns why the measurement cannot be used (and changes nothing) or None."""
    why = not_the_same_node(first, again, sorted({c.gpu for c in v.to_measure_again}))
    if why:
        return why
    nth = f"the {ORDINALS[measurement - 1]} measurement"
    for c in v.to_measure_again:
        case = again.cases.get(c.case)
        if case is None:
            why = f"{nth} has no {c.case}"
        elif not case.ok:
            why = f"{c.case} failed on {nth}: {case.problem}"
        else:
            value = case.center(c.figure.metric)
            if value is not None and math.isfinite(value):
                c.again.append((value, case.written_noise_pct(), None))
                continue
            why = f"{c.case} has no {c.figure.metric} on {nth}"
        c.again.append((None, None, why))
        if why not in v.notes:
            v.notes.append(why)
    _judge_counters(v, again, measurement)
    v.settle()
    return None


def not_the_same_node(first: BenchmarkFile, again: BenchmarkFile, gpus: list[int]) -> str | None:
    """Why `again` is no later measurement of `first`'s GPUs (another GPU, an earlier date), or None."""
    for gpu in gpus:
        a, b = gpu_fact(first, gpu, "uuid"), gpu_fact(again, gpu, "uuid")
        if a and b and a != b:
            return f"it measured another GPU {gpu} ({b}, not {a})"
    try:
        if datetime.fromisoformat(str(again.context["date"])) < datetime.fromisoformat(str(first.context["date"])):
            return f"it is older than the run ({again.context['date']}, the run {first.context['date']})"
    except (KeyError, ValueError, TypeError):
        pass  # a date that cannot be read orders nothing
    return None


def _check_figure(f: BenchmarkFile, v: Verdict, fig: Figure, gpu: int, model: str, cases: list[Case],
                  required: bool) -> None:
    matching = [c for c in cases if c.family == fig.family and fig.matches(axes_without_device(c))]
    if fig.link:
        links = topology(f)
        kept = []
        for c in matching:
            pair = _pair(c)
            have = links.get(pair, {}).get("link") if pair else None
            if have == fig.link:
                kept.append(c)
            else:
                v.notes.append(f"{c.key}: GPUs {pair[0] if pair else '?'}->{pair[1] if pair else '?'} are joined by "
                               f"{have or 'an unknown link'}, not {fig.link}: not judged")
        matching = kept
    if not matching:
        detail = f"GPU {gpu}: the file has no {fig.case} (not a gpu_bench --preset=gate run?)"
        if required and not fig.is_pattern and all(p[2] != detail for p in v.problems):
            v.problems.append((gpu, f"no {fig.name} case", detail))
        return
    for c in matching:
        if not c.ok:
            continue  # already a problem
        value = c.center(fig.metric)
        if value is None or not math.isfinite(value):
            v.problems.append((gpu, f"no {fig.metric} in {fig.name}", f"{c.key} on GPU {gpu} has no {fig.metric}"))
            continue
        pair = _pair(c)
        label = f"{fig.name} {pair[0]}->{pair[1]}" if pair and fig.is_pattern else fig.name
        nvlink_max = None
        if fig.max_nvlink is not None and pair:
            peak = nvlink_peak(f, *pair)
            if peak:
                nvlink_max = fig.max_nvlink * peak
            elif NO_NVLINK_PEAK not in v.notes:
                v.notes.append(NO_NVLINK_PEAK)
        v.checks.append(Check(gpu, model, fig, c.key, label, value, unit_of(f, c, fig.metric),
                              c.written_noise_pct(), nvlink_max))


def case_gpu(f: BenchmarkFile, c: Case, used: list[int]) -> int:
    """The GPU a case ran on: its device axis, the source of a pair, else the run's one device."""
    for key in ("device", "src"):
        v = c.axis(key)
        if v is not None and v.isdigit():
            return int(v)
    return used[0] if used else 0


def model_of(f: BenchmarkFile, gpu: int, used: list[int]) -> str | None:
    return gpu_fact(f, gpu, "name")


def axes_without_device(c: Case) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in c.name.axes if k != "device")


def unit_of(f: BenchmarkFile, c: Case, metric: str) -> str:
    d = f.descriptor(c.family)
    if d and d.headline == metric and d.unit:
        return d.unit
    if metric.startswith("gbps"):
        return "GB/s"
    from ..reading.cases import metric_unit

    return metric_unit(metric, c.time_unit)


def _pair(c: Case) -> tuple[int, int] | None:
    src, dst = (c.axis(k) for k in _PAIR_AXES)
    if src is None or dst is None or not (src.isdigit() and dst.isdigit()):
        return None
    return int(src), int(dst)


def _num(x: float | None) -> str:
    return "?" if x is None else f"{x:.5g}"


def _on_gpu(v: Verdict, gpu: int | None) -> str:
    if gpu is None:
        return ""
    model = v.gpus.get(gpu, (None, None))[0]
    return f" on GPU {gpu}" + (f" {short_gpu_name(model)}" if model else "")


def _on_gpus(v: Verdict) -> str:
    models = [short_gpu_name(m) for m, _ in v.gpus.values() if m]
    if not models:
        return ""
    if len(v.gpus) == 1:
        return _on_gpu(v, next(iter(v.gpus)))
    names = sorted(set(models))
    return " on " + ", ".join(f"{models.count(n)} x {n}" for n in names)


def _fit(head: str, where: str, more: int) -> str:
    """head + where + '(+N more)' within FIRST_LINE_MAX: the GPU's model goes first, then the head is cut."""
    tail = f" (+{more} more)" if more else ""
    gpu_only = " ".join(where.split(" ")[:4])  # ' on GPU 0 H100 80GB HBM3' -> ' on GPU 0'
    for w in (where, gpu_only):
        if len(head + w + tail) <= FIRST_LINE_MAX:
            return head + w + tail
    return head[:FIRST_LINE_MAX - len(gpu_only + tail) - 3] + "..." + gpu_only + tail
