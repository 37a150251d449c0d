"""The one loader: everything the tools read, in one import.

Reading a file's text and parsing JSON and TOML lives in :mod:`.files`, Google Benchmark JSON into
results in :mod:`.benchmark_json`, case names in :mod:`.names`, what a file holds in :mod:`.results`
and its cases in :mod:`.cases`, family descriptors in :mod:`.families`, machine facts in :mod:`.facts`
and :mod:`.multigpu`, --timeline traces in :mod:`.timeline`.
"""

from __future__ import annotations

import os

from .benchmark_json import (
    KNOWN_SCHEMAS,
    benchmark_file_from_doc,
    load_file,
    load_files,
)
from .cases import (
    TIME_UNIT_NS,
    Case,
    Sample,
    canonical_metric,
    higher_is_better,
    metric_title,
    metric_unit,
)
from .context_values import UNAVAILABLE
from .errors import InputError
from .facts import (
    FACTS,
    configuration_key,
    configuration_label,
    context_differences,
    context_rows,
    display_fact,
    file_labels,
    gate,
    host_link_peak,
    machine_label,
)
from .families import FamilyDescriptor
from .files import parse_json, read_json
from .multigpu import (
    GPU_FACTS,
    MAX_GPUS,
    TOPOLOGY_FACTS,
    gpu_count,
    gpu_fact,
    gpu_summary,
    gpu_uuids,
    gpus_used,
    link_text,
    multi_gpu_rows,
    short_gpu_name,
    topology,
)
from .names import CaseName, parse_name, snake
from .results import BenchmarkFile
from .timeline import Span, Timeline, TimelineCase, is_timeline, load_timeline, timeline_from_doc

__all__ = [
    "FACTS", "GPU_FACTS", "KNOWN_SCHEMAS", "MAX_GPUS", "TIME_UNIT_NS", "TOPOLOGY_FACTS", "UNAVAILABLE",
    "BenchmarkFile", "Case", "CaseName", "FamilyDescriptor", "InputError", "Sample", "Span", "Timeline",
    "TimelineCase", "benchmark_file_from_doc", "canonical_metric", "configuration_key", "configuration_label",
    "context_differences", "context_rows", "display_fact", "file_labels", "gate", "gpu_count", "gpu_fact",
    "gpu_summary", "gpu_uuids", "gpus_used", "headline_of", "higher_is_better", "host_link_peak", "is_timeline",
    "link_text", "load_any", "load_file", "load_files", "load_timeline", "machine_label", "metric_for",
    "metric_title", "metric_unit", "multi_gpu_rows", "parse_json", "parse_name", "read_json",
    "short_gpu_name", "snake", "timeline_from_doc", "topology", "unit_and_direction",
]


def load_any(path: str | os.PathLike):
    """A benchmark file or a gpu_bench --timeline trace, whichever the content is."""
    doc = read_json(path)
    if is_timeline(doc):
        return timeline_from_doc(path, doc)
    return benchmark_file_from_doc(path, doc)


def headline_of(f: BenchmarkFile, family: str) -> str:
    """The family's headline metric in this file ('gbps', 'real_time', ...)."""
    d = f.descriptor(family)
    return d.headline if d else "real_time"


def metric_for(f: BenchmarkFile, case: Case, requested: str | None) -> str:
    """The metric a case is judged on: the one asked for, else its family's headline."""
    return canonical_metric(requested) if requested else headline_of(f, case.family)


def unit_and_direction(f: BenchmarkFile, family: str, metric: str, time_unit: str) -> tuple[str, bool]:
    """(unit, higher is better) of a metric of a family: the descriptor's for its headline, else by name."""
    d = f.descriptor(family)
    m = canonical_metric(metric)
    if d and m == d.headline:
        return d.unit or time_unit, d.higher_is_better
    return metric_unit(m, time_unit), higher_is_better(m)
