"""NVML's error counters of each GPU, read by gpu_bench as its run started and as it ended.

The context holds gpu.N.errors.COUNTER.start and gpu.N.errors.COUNTER.end (N is CUDA's index; COUNTER such
as pcie_replay or nvlink_replay), each a decimal integer. A counter NVML did not answer is absent, and so
are a GPU's NVLink counters where it has no NVLink. A counter that rose during a run is a link that erred
while it was measured; one that went down was reset, which says nothing of the link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

_KEY = re.compile(r"^gpu\.(\d+)\.errors\.([a-z0-9_]+)\.(start|end)$")
NONE_RECORDED = ("no error counters were recorded (gpu.N.errors.*): a file from before gpu_bench read them, or "
                 "NVML did not answer")


@dataclass(frozen=True)
class CounterChange:
    gpu: int  # CUDA's index, as the key has it
    nvml_index: str | None  # gpu.N.nvml_index, where the run read it
    counter: str
    start: int
    end: int

    @property
    def rise(self) -> int:
        return self.end - self.start

    @property
    def where(self) -> str:
        """'GPU 2', or 'GPU 2 (NVML index 3)' where the run read NVML's index of CUDA's GPU 2."""
        return f"GPU {self.gpu}" + (f" (NVML index {self.nvml_index})" if self.nvml_index is not None else "")

    def rose_text(self, during: str = "the run") -> str:
        return f"{self.where}: {self.counter} rose by {self.rise} during {during} ({self.start} to {self.end})"

    def reset_text(self, during: str = "the run") -> str:
        return (f"{self.where}: {self.counter} went down during {during} ({self.start} to {self.end}), as after a "
                "reset: not judged")


def counter_changes(context: Mapping) -> list[CounterChange] | None:
    """Every counter with both its start and its end recorded, by GPU and counter; None where the context
    holds no error counter at all."""
    ends: dict[tuple[int, str], dict[str, int]] = {}
    seen = False
    for key, value in context.items():
        m = _KEY.match(str(key))
        if not m:
            continue
        seen = True
        text = str(value).strip()
        if text.isdigit():
            ends.setdefault((int(m.group(1)), m.group(2)), {})[m.group(3)] = int(text)
    if not seen:
        return None
    out = []
    for (gpu, counter), both in sorted(ends.items()):
        if "start" in both and "end" in both:
            nvml = str(context.get(f"gpu.{gpu}.nvml_index", "")).strip()
            out.append(CounterChange(gpu, nvml if nvml.isdigit() else None, counter, both["start"], both["end"]))
    return out
