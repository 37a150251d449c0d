"""Machine configurations: files of one host, the same GPUs, driver and runtime are one machine's repetitions."""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ..reading.facts import configuration_key, configuration_label
from ..reading.cases import Case
from ..reading.results import BenchmarkFile


@dataclass
class Configuration:
    label: str
    file: BenchmarkFile  # every file of the configuration merged: their repetitions side by side
    paths: list[str]


def merge(files: list[BenchmarkFile]) -> BenchmarkFile:
    """One file holding every repetition of every case of `files` (the first file's context).

    Aggregates are dropped where more than one file is merged: they no longer describe the repetitions.
    """
    if len(files) == 1:
        return files[0]
    cases: dict[str, Case] = {}
    for f in files:
        for key, c in f.cases.items():
            m = cases.get(key)
            if m is None:
                m = cases[key] = Case(key, c.name, c.time_unit, label=c.label)
            scale = 1.0
            if c.time_unit != m.time_unit:
                from ..reading.cases import TIME_UNIT_NS

                scale = TIME_UNIT_NS[c.time_unit] / TIME_UNIT_NS[m.time_unit]
            for s in c.samples:
                s = copy.copy(s)
                s.repetition = len(m.samples)
                s.real_time, s.cpu_time = s.real_time * scale, s.cpu_time * scale
                m.samples.append(s)
            if not c.samples and c.ok and not m.samples:
                m.aggregates, m.aggregate_units = dict(c.aggregates), dict(c.aggregate_units)
            m.errors += c.errors
            m.skips += c.skips
    for m in cases.values():
        if m.samples:
            m.aggregates, m.aggregate_units = {}, {}
    return BenchmarkFile(" + ".join(f.path for f in files), files[0].context, cases, files[0].schema)


def configurations(files: list[BenchmarkFile]) -> list[Configuration]:
    """One Configuration per host + GPU UUIDs + driver + runtime, in the order the files first name them."""
    groups: dict[tuple, list[BenchmarkFile]] = {}
    for f in files:
        groups.setdefault(configuration_key(f), []).append(f)
    labels = [configuration_label(fs[0]) for fs in groups.values()]
    out = []
    for (key, fs), label in zip(groups.items(), labels):
        if labels.count(label) > 1:  # one host name on several machines (virtual machines): tell them by GPU
            label += f" [{key[1][0][:12]}]"
        if len(fs) > 1:
            label += f" ({len(fs)} files)"
        out.append(Configuration(label, merge(fs), [f.path for f in fs]))
    return out
