"""What a benchmark file holds once read: its context facts, its cases and its families' descriptors."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from .cases import Case
from .context_values import UNAVAILABLE
from .families import DEFAULT_SPREAD_AXES, FamilyDescriptor, descriptors_of


@dataclass
class BenchmarkFile:
    path: str
    context: dict[str, Any]
    cases: dict[str, Case]
    schema: str | None
    runs: int = 1  # how many runs of one command this stands for (gpu-bench-compare --per-side)

    @property
    def is_gpu_bench(self) -> bool:
        return self.schema is not None

    @property
    def stem(self) -> str:
        return Path(self.path).stem

    def fact(self, key: str) -> str | None:
        """A context fact as text, or None where it is missing or written as 'unavailable'."""
        v = self.context.get(key)
        if v is None:
            return None
        v = str(v).strip()
        if not v or v == UNAVAILABLE:
            return None
        return v

    @property
    def chosen_filter(self) -> str:
        """The --benchmark_filter the run was given (gpu_bench.filter), empty for every case of its preset. A
        gate run picks its own cases; files before the key read as unfiltered."""
        return "" if self.fact("gpu_bench.preset") == "gate" else self.fact("gpu_bench.filter") or ""

    def event_tick_s(self) -> float:
        """The CUDA event timer's tick the run measured (gpu.event_tick_ns), in seconds; 0 where unknown."""
        try:
            return float(self.fact("gpu.event_tick_ns") or 0.0) * 1e-9
        except ValueError:
            return 0.0

    def spread_axes(self, family: str) -> tuple[str, ...]:
        """The axes that, with the size band, make a case of `family` its spread group (its descriptor's)."""
        d = self.descriptor(family)
        return d.spread_axes if d is not None else DEFAULT_SPREAD_AXES

    def way(self, case_key: str) -> int:
        """How this file's gpu_bench measured the case (FamilyDescriptor.way): 1 where its family has no
        descriptor."""
        d = self.descriptor(case_key.split("/", 1)[0])
        return d.way(case_key) if d is not None else 1

    def ok_cases(self) -> list[Case]:
        return [c for c in self.cases.values() if c.ok]

    @cached_property
    def families(self) -> dict[str, FamilyDescriptor]:
        """Family name -> FamilyDescriptor, from the context (schema 2) or inferred from the cases."""
        return descriptors_of(self.path, self.context, self.schema, self.cases.values())

    def descriptor(self, family: str) -> FamilyDescriptor | None:
        return self.families.get(family)
