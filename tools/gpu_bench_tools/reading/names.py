"""Case names: ``Family/key:value/.../manual_time`` split into family, axes and Google Benchmark options."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# Google Benchmark appends these to a name to say which clock it reports; they are not axes.
TIMING_SUFFIXES = ("manual_time", "real_time", "process_time")
# Options Google Benchmark appends as key:value; part of a case's identity but not one of its axes.
RUN_OPTION_KEYS = ("iterations", "repeats", "threads", "min_time", "min_warmup_time")


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


def snake(family: str) -> str:
    """'SmallCopy' -> 'small_copy': how a family names its plot kind and files."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", family).lower()


def human_bytes(n: float) -> str:
    """A size as people read it: '4 B', '64 KiB', '1.5 MiB', '1 GiB'."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n:.0f} B"
