"""NVML's error counters of each GPU, read by gpu_bench as its run started and as it ended.

The context holds gpu.N.errors.COUNTER.start and gpu.N.errors.COUNTER.end (N is CUDA's index; COUNTER such
as pcie_replay or nvlink_replay), each a decimal integer. A counter NVML did not answer is absent, and so
are a GPU's NVLink counters where it has no NVLink. A counter that went down was reset, which says nothing
of the link.

A rise is a fault of the link where NVIDIA's DCGM fails a GPU for it (its health watch): any NVLink replay
or recovery; NVLink CRC errors at 100 a second or more; PCIe replays at 8 a minute or more. The link
corrects CRC errors and replays PCIe packets itself. Healthy NVLinks of H200s count a few CRC errors a
second with or without traffic, so a rise below those rates is only reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

_KEY = re.compile(r"^gpu\.(\d+)\.errors\.([a-z0-9_]+)\.(start|end)$")
# Per counter, the rate of rise (per second) from which it is a fault, after DCGM's limits
# (DCGM_LIMIT_MAX_NVLINK_CRC_ERROR, DCGM_LIMIT_MAX_PCIREPLAY_RATE). A counter not named faults at any rise.
FAULT_RATE_PER_S = {"nvlink_crc_flit": 100.0, "nvlink_crc_data": 100.0, "pcie_replay": 8 / 60}
NONE_RECORDED = ("no error counters were recorded (gpu.N.errors.*): a file from before gpu_bench read them, or "
                 "NVML did not answer")


@dataclass(frozen=True)
class CounterChange:
    gpu: int  # CUDA's index, as the key has it
    nvml_index: str | None  # gpu.N.nvml_index, where the run read it
    counter: str
    start: int
    end: int
    seconds: float | None = None  # how long the run took between the two readings (gpu_bench.elapsed_s)

    @property
    def rise(self) -> int:
        return self.end - self.start

    @property
    def fault_rate(self) -> float | None:
        """The rate per second from which this counter's rise is a fault; None where any rise is."""
        return FAULT_RATE_PER_S.get(self.counter)

    @property
    def fault(self) -> bool:
        """Whether the rise is a fault of the link. Without the run's duration, any rise is."""
        if self.rise <= 0:
            return False
        limit = self.fault_rate
        return limit is None or not self.seconds or self.rise / self.seconds >= limit

    @property
    def where(self) -> str:
        """'GPU 2', or 'GPU 2 (NVML index 3)' where the run read NVML's index of CUDA's GPU 2."""
        return f"GPU {self.gpu}" + (f" (NVML index {self.nvml_index})" if self.nvml_index is not None else "")

    def rose_text(self, during: str = "the run") -> str:
        text = f"{self.where}: {self.counter} rose by {self.rise} during {during} ({self.start} to {self.end})"
        if self.fault_rate is None or not self.seconds:
            return text
        return text + f", {_per(self.rise / self.seconds, self.fault_rate)}"

    def reset_text(self, during: str = "the run") -> str:
        return (f"{self.where}: {self.counter} went down during {during} ({self.start} to {self.end}), as after a "
                "reset: not judged")


def _per(rate: float, limit: float) -> str:
    """A rate and its limit in words, per second or, for limits under one a second, per minute."""
    if limit >= 1:
        return f"{rate:.3g} a second; a fault from {limit:g} a second"
    return f"{rate * 60:.3g} a minute; a fault from {limit * 60:g} a minute"


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
    try:
        seconds = float(context.get("gpu_bench.elapsed_s", ""))
    except ValueError:
        seconds = None
    if seconds is not None and not seconds > 0:
        seconds = None
    out = []
    for (gpu, counter), both in sorted(ends.items()):
        if "start" in both and "end" in both:
            nvml = str(context.get(f"gpu.{gpu}.nvml_index", "")).strip()
            out.append(CounterChange(gpu, nvml if nvml.isdigit() else None, counter, both["start"], both["end"],
                                     seconds))
    return out
