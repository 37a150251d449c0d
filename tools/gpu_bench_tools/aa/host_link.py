"""The host link between runs and within a run: how the pinned and registered copies of 1 MiB and more
moved from one run to the next, and how each round of them reads by the kind of process it ran in; and, for
every family, how its full rounds read and spread against its link rounds."""

from __future__ import annotations

import math
import statistics

from ..reading.results import BenchmarkFile
from .agreement import LinkDrift, RoundKinds, family_of
from .figures import headline_and_noise, is_detection_copy, round_times, slower_pct

DRIFT_MIN_CASES = 6  # fewer changes than this are not tested


def link_drift(files: list[BenchmarkFile]) -> list[LinkDrift]:
    """Per consecutive pair of runs and direction, the median change of the pinned and registered copies of
    1 MiB and more that both runs measured (+ where the later run is slower) and Wilcoxon's signed-rank test
    of those changes against zero."""
    from scipy.stats import wilcoxon

    out: list[LinkDrift] = []
    for k, (a, b) in enumerate(zip(files, files[1:]), 1):
        for direction in ("h2d", "d2h", "bidir"):
            changes = []
            for key, case in a.cases.items():
                if case.axis("dir") != direction or not is_detection_copy(a, case) or key not in b.cases:
                    continue
                va, vb = headline_and_noise(a, case)[0], headline_and_noise(b, b.cases[key])[0]
                if not va or not vb or va <= 0 or vb <= 0:
                    continue
                changes.append(slower_pct(a, case, va, vb))
            if not changes:
                continue
            p = math.nan
            if sum(1 for c in changes if c != 0) >= DRIFT_MIN_CASES:
                p = float(wilcoxon(changes).pvalue)
            out.append(LinkDrift(k, direction, len(changes), statistics.median(changes), p))
    return out


def _round_labels(f: BenchmarkFile) -> list[str]:
    """The labels of `f`'s child rounds in the order they ran (round_K, link_K, host_K, extra_K)."""
    return [p.partition("=")[0] for p in str(f.fact("gpu_bench.round_processes") or "").split()]


def _planned_kinds(labels: list[str]) -> list[str]:
    """The kinds of the child rounds that run copies, in order: 'full' for round_K, 'link' for link_K."""
    return ["full" if label.startswith("round_") else "link" for label in labels
            if label.startswith(("round_", "link_"))]


def _full_and_link_rounds(f: BenchmarkFile):
    """Each case of `f` that took every full and every link round and no extra one, with its full rounds' times
    (the last included) and its link rounds'. Nothing for a run without link rounds, or with rounds of the
    host-driven cases alone (--host_rounds): their cases' count of rounds could match a link round's case's."""
    labels = _round_labels(f)
    planned = _planned_kinds(labels)
    if "link" not in planned or any(label.startswith("host_") for label in labels):
        return
    kinds = planned + ["full"]
    for key, case in f.cases.items():
        times = round_times(f, key)
        if len(times) != len(kinds) or min(times) <= 0:
            continue
        yield (case, [t for t, k in zip(times, kinds) if k == "full"],
               [t for t, k in zip(times, kinds) if k == "link"])


def full_over_link(files: list[BenchmarkFile]) -> dict[str, list[float]]:
    """Per family (family_of) and run: each case that took every full and every link round, its middle full
    round over its middle link round, as a change in percent (+ where the full rounds read slower); the median
    over the family's cases, NaN in a run where none did. A case that meets the same cases before it in both
    kinds of process reads about 0."""
    out: dict[str, list[float]] = {}
    for run, f in enumerate(files):
        for case, full, link in _full_and_link_rounds(f):
            changes = out.setdefault(family_of(case), [[] for _ in files])
            changes[run].append(100.0 * (statistics.median(full) / statistics.median(link) - 1.0))
    return {fam: [statistics.median(c) if c else math.nan for c in runs] for fam, runs in sorted(out.items())}


def spread_by_kind(files: list[BenchmarkFile]) -> dict[str, tuple[float, float]]:
    """Per family: how far a case's full rounds spread, and how far its link rounds do, each as the sd of
    their log times in percent; the medians over the family's cases and runs that took two or more of each.
    Link rounds are short processes of the cases that take --link_rounds alone, run back to back: where they
    spread more than full rounds, extra link rounds narrow a case less than extra full rounds would."""
    spreads: dict[str, tuple[list[float], list[float]]] = {}
    for f in files:
        for case, full, link in _full_and_link_rounds(f):
            if len(full) >= 2 and len(link) >= 2:
                fam = spreads.setdefault(family_of(case), ([], []))
                fam[0].append(100.0 * statistics.stdev(math.log(t) for t in full))
                fam[1].append(100.0 * statistics.stdev(math.log(t) for t in link))
    return {fam: (statistics.median(a), statistics.median(b)) for fam, (a, b) in sorted(spreads.items())}


def round_kinds(f: BenchmarkFile, run: int) -> RoundKinds | None:
    """`f`'s copies' rounds by the kind of process each ran in; None for a file without
    gpu_bench.round_processes. A copy's rounds are in the order they ran: every child round it was in (every
    full and link round, then the first of the extra rounds), then the last; a round of the host-driven cases
    alone (host_K) holds no copy. A copy whose count of rounds fits no such order (one of its rounds failed) is
    left out."""
    labels = _round_labels(f)
    if not labels:
        return None
    planned = _planned_kinds(labels)
    extras = sum(1 for label in labels if label.startswith("extra_"))
    excess: dict[str, dict[str, list[float]]] = {}
    for key, case in f.cases.items():
        if not is_detection_copy(f, case):
            continue
        times = round_times(f, key)
        extra = len(times) - len(planned) - 1
        if not times or min(times) <= 0 or not 0 <= extra <= extras:
            continue
        group = excess.setdefault("bidir" if case.axis("dir") == "bidir" else "one way", {})
        fastest = min(times)
        for kind, t in zip(planned + ["extra"] * extra + ["last"], times):
            group.setdefault(kind, []).append(100.0 * (t / fastest - 1.0))
    return RoundKinds(run, {g: {k: statistics.median(v) for k, v in kinds.items()} for g, kinds in excess.items()},
                      {g: {k: len(v) for k, v in kinds.items()} for g, kinds in excess.items()})
