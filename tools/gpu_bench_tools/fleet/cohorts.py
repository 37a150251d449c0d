"""Fleet: the one bad GPU among hundreds, from each node's newest gpu_bench run (read by node_runs.py).

GPUs are judged only against GPUs of their kind, a cohort: the same model (`gpu.N.name`), the same host link
as it trains at its best in its slot (each GPU's own: `gpu.N.profile.host_link`, else
`gpu.N.pcie_gen_max`/`gpu.N.pcie_width_max`), the same node shape (a host of one GPU or a node of several:
`gpu.count`, whichever GPUs the run measured; the host's side of a copy differs between them), the same run
settings (`gpu_bench.preset`, gate) and, with `split_driver`, the same driver. Figures measured on the host
(a family's host_side cases: allocation, API calls timed by the host clock) are judged in a cohort that is
also of one host CPU model and count. For each case's
headline figure, a GPU is flagged where it is worse than its cohort's median
  - by a robust score: its distance from the median over the cohort's spread, the MAD scaled to a normal
    standard deviation (scipy.stats.median_abs_deviation, scale='normal'), the spread never taken below
    the cohort's median noise_pct (a score cannot be sharper than the measurement behind it),
  - by at least `min_effect_pct` percent of the median,
  - and by more than the GPU's own noise_pct for that case.
Such a case figure is an outlier; a GPU is flagged where at least `min_cases` of its case figures are. A
fault of the hardware slows every case that uses the part (a link one way: dozens of copies), while a case
whose samples fall in two modes puts a lone figure of a healthy GPU outside its cohort now and then; lone
outliers are listed, not flagged. Outliers are rare by nature: a case on which more than `max_share` of a
cohort's GPUs lie outside (and at least three) is not one GPU's fault but the case's or the cohort's (a case whose
runs land in one of two levels, a part of the fleet set up otherwise), and is reported as such instead.
docs/fleet.md says why these thresholds do not cry wolf over hundreds of cases x hundreds of GPUs.

A node whose result is missing, cannot be read, has failed cases or is older than `max_age_h` is reported
as such, never dropped; so is one whose GPU's error counter rose at a fault's rate during its run
(reading/error_counters.py, as the gate fails it); so is a GPU whose cohort is smaller than `min_cohort`
(it is not judged). A node is its host and all its GPUs (their UUIDs), whichever of them a run measured.
"""

from __future__ import annotations

import math
import re
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from ..reading.facts import busy_host_pct, gate, host_cpu, pcie_max_link
from ..reading.error_counters import counter_changes
from ..reading.families import host_side_rules, revision_rules, rule_matches, way_of
from ..reading.load import BenchmarkFile, gpu_fact, gpu_summary, gpu_uuids, gpus_used, parse_name, short_gpu_name
from ..reading.multigpu import first_gpu_facts_note, node_shape, node_uuids
from .node_runs import NodeRun, Problem


SCORE = 6.0
MIN_EFFECT_PCT = 5.0
MIN_COHORT = 8
MIN_CASES = 3
MAX_SHARE = 0.02
CROWD_FROM = 3  # outliers on one case that can make it crowded: two GPUs with the same fault stay flagged


@dataclass
class Gpu:
    """What is judged: one GPU of a node (`index` 0, 1, ...) or, for cases of a multi-GPU run that are not
    one GPU's, a pair of GPUs ("0->1") or the whole node ("all")."""

    host: str
    index: str
    uuid: str
    model: str
    link: str
    driver: str
    settings: str
    source: str
    run_time: str | None
    # (case, metric, unit, way) -> (value, noise_pct, higher is better); the way as FamilyDescriptor.way's
    values: dict[tuple[str, str, str, int], tuple[float, float | None, bool]] = field(default_factory=dict)
    cohort: tuple = ()
    # Figures measured on the host, judged among GPUs whose hosts have the same CPU (host_cohort).
    host_values: dict[tuple[str, str, str, int], tuple[float, float | None, bool]] = field(default_factory=dict)
    host_cohort: tuple = ()


@dataclass
class Flag:
    gpu: Gpu
    case: str
    metric: str
    unit: str
    value: float
    median: float
    score: float  # inf where the cohort has no spread at all
    effect_pct: float  # how much worse than the median, in percent of it (negative: better, with both_sides)
    noise_pct: float | None
    cohort_size: int
    cohort: str = ""  # the label of the cohort it was judged in (a GPU's host-side figures have their own)


@dataclass
class Crowd:
    """A case on which too many GPUs of one cohort lie outside for any of them to be flagged for it."""

    cohort: str
    case: str
    metric: str
    unit: str
    outside: list[Flag]
    held: int


@dataclass
class Cohort:
    label: str
    gpus: int
    cases: int  # case figures judged (held by at least min_cohort GPUs of the cohort)
    too_few: int  # case figures held by fewer GPUs than that, not judged
    flagged: int = 0
    too_small: bool = False  # fewer GPU units than min_cohort: none of its figures judged

    @property
    def judged(self) -> bool:
        """Whether any case figure of the cohort was judged: none where the cohort is too small, or where every
        case is held by too few of its units (a pair's cases by that pair alone, one per node)."""
        return self.cases > 0


@dataclass
class FleetReport:
    nodes: int  # nodes with a result that could be read, each counted once
    gpus: list[Gpu]
    cohorts: list[Cohort]
    flags: list[Flag]  # of flagged GPUs: worst GPU first, worst case first within a GPU
    problems: list[Problem]
    thresholds: dict
    lone: list[Flag] = field(default_factory=list)  # outliers of GPUs with fewer than min_cases of them
    crowds: list[Crowd] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def ranked(self) -> list[tuple[Gpu, list[Flag]]]:
        out: dict[int, tuple[Gpu, list[Flag]]] = {}
        for f in self.flags:
            out.setdefault(id(f.gpu), (f.gpu, []))[1].append(f)
        return list(out.values())

    @property
    def failed(self) -> bool:
        return bool(self.flags) or any(p.counted for p in self.problems)

    @property
    def unjudged(self) -> list[Cohort]:
        """The cohorts none of whose case figures could be judged."""
        return [c for c in self.cohorts if not c.judged]

    def units(self, kind: str) -> int:
        """How many units of a kind were read: 'gpu' (one GPU), 'pair' (an ordered pair), 'node' (a whole node)."""
        return sum(1 for g in self.gpus if unit_kind(g) == kind)


def unit_kind(g: Gpu) -> str:
    return "gpu" if g.index.isdigit() else "pair" if "->" in g.index else "node"


def cohort_label(key: tuple) -> str:
    return ", ".join(str(k) for k in key)


# ---------------------------------------------------------------------------------------------
# GPUs and their cohorts


@lru_cache(maxsize=65536)
def _where(key: str) -> tuple[str, str | None]:
    """(the case without its device, the GPU it ran on: 'N', 'src->dst' or None)."""
    n = parse_name(key)
    dev = n.axis("device")
    if dev is not None:
        return "/".join(p for p in key.split("/") if p != f"device:{dev}"), dev
    src, dst = n.axis("src"), n.axis("dst")
    if src is not None and dst is not None:
        return key, f"{src}->{dst}"
    return key, None


def host_link(f: BenchmarkFile, gpu: int) -> str:
    """GPU `gpu`'s host link as trained at its best in its slot, which a slow link of the same kind does not
    change."""
    link = gpu_fact(f, gpu, "profile.host_link")
    if link:
        return link
    return pcie_max_link(f, gpu) or "host link unavailable"


def _links(f: BenchmarkFile, gpus: Iterable[int]) -> str:
    """The host links of several GPUs (a pair, a node): the one link they share, else each GPU's."""
    links = [host_link(f, i) for i in gpus]
    if len(set(links)) <= 1:
        return links[0] if links else "host link unavailable"
    return ", ".join(f"GPU {i} {link}" for i, link in zip(gpus, links))


def node_of(run: NodeRun) -> str:
    """The node a run measured: its host and the UUIDs of all its GPUs, whichever the run measured."""
    f = _facts_of(run)
    return f"{f.fact('host_name') or Path(run.source).stem}|{','.join(node_uuids(f))}"


def gpus_of(run: NodeRun, split_driver: bool = False) -> tuple[list[Gpu], list[tuple[str, str, str]]]:
    """The GPUs (and pairs, and the node) a run measured, with their figures; and (GPU, case, error) per failure."""
    f = _facts_of(run)
    host = f.fact("host_name") or Path(run.source).stem
    shape = f"node of {node_shape(f)}"
    used = gpus_used(f)
    driver = f.fact("driver.version") or "driver ?"
    # A filtered run's rounds hold other cases than its preset's, so it is a cohort of its own.
    chosen = f", filter {f.chosen_filter}" if f.chosen_filter else ""
    settings = f"preset {f.fact('gpu_bench.preset') or '?'}{chosen}, gate {gate(f) or '?'}"
    node_model = gpu_summary(f, whole_node=True) or "GPUs ?"  # of pairs and whole nodes, whichever GPUs ran
    cpu = f"host CPU {host_cpu(f)}"
    host_side = host_side_rules(run.context)
    revisions = revision_rules(run.context)
    units: dict[str, Gpu] = {}

    def uuid(i: int) -> str:
        return gpu_fact(f, i, "uuid") or f"{host}:GPU{i}"

    def unit(where: str) -> Gpu:
        g = units.get(where)
        if g is None:
            if where.isdigit():
                i = int(where)
                name, ident, link = gpu_fact(f, i, "name"), uuid(i), host_link(f, i)
                model = short_gpu_name(name) if name else "GPU ?"
            elif "->" in where:
                i, j = (int(x) for x in where.split("->"))
                model, ident, link = node_model, f"{uuid(i)} -> {uuid(j)}", _links(f, (i, j))
            else:
                model, ident, link = node_model, ",".join(gpu_uuids(f)) or host, _links(f, used)
            key = (model, link, shape, settings) + ((driver,) if split_driver else ())
            g = units[where] = Gpu(host, where, ident, model, link, driver, settings, run.source, run.run_time,
                                   cohort=key, host_cohort=key + (cpu,))
        return g

    failed = []
    for key, metric, unit_, better, value, noise, error in run.figures:
        case, dev = _where(key)
        where = dev if dev is not None else str(used[0]) if len(used) == 1 else "all"
        if error or value is None or not math.isfinite(value):
            failed.append((where, case, error or "no figure"))
            continue
        g = unit(where)
        family = case.split("/", 1)[0]
        on_host = rule_matches(host_side.get(family, "no"), case)
        # A case gpu_bench measured in a later way is a figure of its own: GPUs are judged beside those that
        # measured it the same way, so a fleet part-way through an upgrade flags neither side.
        way = way_of(revisions.get(family, ()), case)
        (g.host_values if on_host else g.values)[(case, metric, unit_, way)] = (float(value), noise, better == "higher")
    return list(units.values()), failed


# ---------------------------------------------------------------------------------------------
# judging


def _judge(label: str, members: list[tuple[Gpu, dict]], score: float, min_effect_pct: float, min_cohort: int,
           max_share: float, both_sides: bool) -> tuple[list[Flag], list[Crowd], int, int]:
    """One cohort's outliers and crowded cases, how many case figures were judged and how many held by too few.

    `members`: each GPU of the cohort with the figures it is judged on in this cohort."""
    import numpy as np
    from scipy.stats import median_abs_deviation

    cols = sorted({k for _, values in members for k in values})
    at = {k: i for i, k in enumerate(cols)}
    vals = np.full((len(members), len(cols)), np.nan)
    noise = np.full_like(vals, np.nan)
    higher = np.zeros(len(cols), dtype=bool)
    for r, (_, values) in enumerate(members):
        for k, (v, n, hib) in values.items():
            c = at[k]
            vals[r, c] = v
            noise[r, c] = np.nan if n is None else n
            higher[c] = hib
    held = np.sum(~np.isnan(vals), axis=0)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        med = np.nanmedian(vals, axis=0)
        spread = median_abs_deviation(vals, axis=0, scale="normal", nan_policy="omit")
        floor = np.abs(med) * np.nan_to_num(np.nanmedian(noise, axis=0), nan=0.0) / 100.0
        spread = np.maximum(np.nan_to_num(spread, nan=0.0), floor)
        worse = np.where(higher, med - vals, vals - med)
        effect = worse / np.abs(med) * 100.0
        z = np.where(spread > 0, worse / spread, np.sign(worse) * np.inf)
        if both_sides:
            effect_cmp, z_cmp = np.abs(effect), np.abs(z)
        else:
            effect_cmp, z_cmp = effect, z
        hit = ((held >= min_cohort) & (med != 0) & (z_cmp >= score) & (effect_cmp >= min_effect_pct)
               & (effect_cmp > np.nan_to_num(noise, nan=0.0)))
    flags: list[Flag] = []
    crowds: dict[int, Crowd] = {}
    allowed = np.maximum(CROWD_FROM - 1, np.floor(max_share * held))
    crowded = np.sum(hit, axis=0) > allowed
    for r, c in zip(*np.nonzero(hit)):
        case, metric, unit, _ = cols[c]  # the way keeps figures measured differently apart
        n = noise[r, c]
        f = Flag(members[r][0], case, metric, unit, float(vals[r, c]), float(med[c]), float(z[r, c]),
                 float(effect[r, c]), None if np.isnan(n) else float(n), int(held[c]), label)
        if crowded[c]:
            crowds.setdefault(c, Crowd(label, case, metric, unit, [], int(held[c])))
            crowds[c].outside.append(f)
        else:
            flags.append(f)
    judged = int(np.sum(held >= min_cohort))
    return flags, list(crowds.values()), judged, len(cols) - judged


def _age_h(when: str | None, now: datetime) -> float | None:
    if not when:
        return None
    try:
        return (now - datetime.fromisoformat(when)).total_seconds() / 3600.0
    except ValueError:
        return None


def _seen(host: str, problems: list[Problem], hosts: set[str]) -> bool:
    if host in hosts:
        return True
    rx = re.compile(re.escape(host) + r"($|[._-])")
    return any(rx.match(Path(p.source).name) for p in problems)


def analyse(inputs: list[NodeRun | Problem], score: float = SCORE, min_effect_pct: float = MIN_EFFECT_PCT,
            min_cohort: int = MIN_COHORT, min_cases: int = MIN_CASES, max_share: float = MAX_SHARE,
            split_driver: bool = False, both_sides: bool = False,
            expect: Iterable[str] = (), max_age_h: float | None = None, now: datetime | None = None) -> FleetReport:
    """Cohorts, flags and problems of the nodes' runs (see the module's docstring)."""
    now = now or datetime.now(timezone.utc)
    problems = [p for p in inputs if isinstance(p, Problem)]
    runs = [r for r in inputs if isinstance(r, NodeRun)]
    by_gpu: dict[tuple[str, str], Gpu] = {}
    hosts: set[str] = set()
    busy: list[str] = []  # a note for each run made on a busy host
    # Newest first: where one node's results of several nights are given, the newest is judged.
    for run in sorted(runs, key=lambda r: r.run_time or "", reverse=True):
        units, failed = gpus_of(run, split_driver)
        host = units[0].host if units else (run.context.get("host_name") or Path(run.source).stem)
        hosts.add(host)
        if units and all((g.host, g.uuid) in by_gpu for g in units):
            problems.append(Problem("superseded", host, run.source, "a newer result of the same GPUs is judged "
                                    f"instead ({by_gpu[(units[0].host, units[0].uuid)].source})"))
            continue
        age = _age_h(run.run_time, now)
        if max_age_h is not None and (age is None or age > max_age_h):
            what = f"is {age:.0f} h old" if age is not None else "has no date"
            problems.append(Problem("stale", host, run.source, f"newest result ({run.run_time or '?'}) {what}, "
                                    f"more than --max-age {max_age_h:g} h: not judged"))
            continue
        if failed:
            where, case, error = failed[0]
            problems.append(Problem("no figures" if not units else "failed cases", host, run.source,
                                    f"{len(failed)} case(s) failed, e.g. {case} on GPU {where}: {error}", failed))
        rose = [ch.rose_text() for ch in counter_changes(run.context) or [] if ch.fault]
        if rose:
            problems.append(Problem("error counters", host, run.source, "; ".join(rose)))
        for g in units:
            by_gpu.setdefault((g.host, g.uuid), g)
        others = busy_host_pct(run.context.get("gpu_bench.round_host"))
        if units and others is not None:
            busy.append(f"{host} ran on a busy host: other processes used {others:.1f}% of its CPU time in the median "
                        f"round (gpu_bench.round_host; {run.source}); its host-side figures read slower and noisier")
    problems += [Problem("missing", h, "", "no result for this node") for h in sorted(set(expect))
                 if h and not _seen(h, problems, hosts)]
    cohorts: dict[tuple, list[tuple[Gpu, dict]]] = defaultdict(list)
    for g in by_gpu.values():
        if g.values or not g.host_values:
            cohorts[g.cohort].append((g, g.values))
        if g.host_values:
            cohorts[g.host_cohort].append((g, g.host_values))
    flags: list[Flag] = []
    crowds: list[Crowd] = []
    infos = []
    for key in sorted(cohorts, key=lambda k: (-len(cohorts[k]), cohort_label(k))):
        members = cohorts[key]
        label = cohort_label(key)
        if len(members) < min_cohort:
            problems += [Problem("not judged", g.host, g.source, f"GPU {g.index} ({g.uuid}): "
                                 f"{'its host-side figures: ' if key == g.host_cohort else ''}its cohort "
                                 f"({label}) has {len(members)} GPU(s), fewer than --min-cohort "
                                 f"{min_cohort}") for g, _ in members]
            infos.append(Cohort(label, len(members), 0, len({k for _, values in members for k in values}),
                                too_small=True))
            continue
        found, crowded, judged, too_few = _judge(label, members, score, min_effect_pct, min_cohort, max_share,
                                                 both_sides)
        crowds += crowded
        per_gpu: dict[int, int] = defaultdict(int)
        for f in found:
            per_gpu[id(f.gpu)] += 1
        infos.append(Cohort(label, len(members), judged, too_few,
                            sum(1 for n in per_gpu.values() if n >= min_cases)))
        flags += found
    worst: dict[int, float] = defaultdict(float)
    count: dict[int, int] = defaultdict(int)
    for f in flags:
        worst[id(f.gpu)] = max(worst[id(f.gpu)], abs(f.effect_pct))
        count[id(f.gpu)] += 1
    flags.sort(key=lambda f: (-worst[id(f.gpu)], f.gpu.host, f.gpu.index, -abs(f.effect_pct), f.case))
    crowds.sort(key=lambda c: (-len(c.outside) / c.held, c.cohort, c.case))
    thresholds = dict(score=score, min_effect_pct=min_effect_pct, min_cohort=min_cohort, min_cases=min_cases,
                      max_share=max_share, split_driver=split_driver, both_sides=both_sides, max_age_h=max_age_h)
    note = first_gpu_facts_note([_facts_of(r) for r in runs])
    notes = ([note] if note else []) + busy
    return FleetReport(len({node_of(r) for r in runs}), list(by_gpu.values()), infos,
                       [f for f in flags if count[id(f.gpu)] >= min_cases],
                       problems, thresholds, [f for f in flags if count[id(f.gpu)] < min_cases], crowds, notes)


def _facts_of(run: NodeRun) -> BenchmarkFile:
    """A run's context as a file without cases, for the functions that read facts."""
    return BenchmarkFile(run.source, run.context, {}, str(run.context.get("gpu_bench.schema") or "") or None)
