"""The headline numbers per family: each family's cases grouped into rows by their axes, one figure per file."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..compare.cells import case_gpus
from ..reading.families import FamilyDescriptor, beyond_machine_variance_pct
from ..reading.load import BenchmarkFile, Case
from ..plot import human_bytes
from ..plot.points import axis_value_key, headline_scale, headline_unit
from .numbers import noise_half_width, fmt_pct, repeatable, fmt_varying, fmt_figure


@dataclass
class Headline:
    family: str
    what: str
    rows: list[tuple[str, list[str]]]
    values: list[list[float | None]] = field(default_factory=list)  # per row, per file: the number in the cell
    higher_is_better: bool = True
    halves: list[list[float | None]] = field(default_factory=list)  # per row, per file: the ± half-width
    gpus: list[list[int | None]] = field(default_factory=list)  # per row, per file: GPUs the figure is a total of

    @property
    def has_intervals(self) -> bool:
        return any(h is not None for row in self.halves for h in row)


# ---------------------------------------------------------------------------------------------
# headline numbers


def _group(files: list[BenchmarkFile], family: str, axes: tuple[str, ...]) -> dict[tuple, list[list[Case]]]:
    """Cases per value of axes and the device ('-' where a case has none), one list per file."""
    groups: dict[tuple, list[list[Case]]] = {}
    for i, f in enumerate(files):
        for c in f.cases.values():
            if c.family == family:
                key = tuple(c.axis(a, "-") for a in axes + ("device",))
                groups.setdefault(key, [[] for _ in files])[i].append(c)
    return groups


def _row_label(key: tuple[str, ...], axes: tuple[str, ...]) -> str:
    """'h2d pinned', 'h2d pinned, GPU 1', 'GPU 0 -> GPU 1'."""
    d = {a: v for a, v in zip(axes, key) if v != "-"}
    parts = []
    if "src" in d or "dst" in d:
        parts.append(f"GPU {d.pop('src', '?')} -> GPU {d.pop('dst', '?')}")
    text = " ".join(v for a, v in d.items() if a != "device")
    if text:
        parts.append(text)
    if "device" in d:
        parts.append(f"GPU {d['device']}")
    return ", ".join(parts) or "all cases"


def row_axes(desc: FamilyDescriptor) -> tuple[str, ...]:
    """The axes a family's headline table has a row per value of: its descriptor's panel and series hints,
    else (no hints, or a file without descriptors) its first two axes, never the x axis, the size or the device."""
    # A hint may name several axes ('mem,engine'): each is an axis of the row.
    hinted = tuple(a.strip() for h in (desc.plot.get("panel"), desc.plot.get("series")) if h
                   for a in h.split(",") if a.strip())
    if hinted and not desc.inferred:
        return tuple(dict.fromkeys(hinted))
    skip = {desc.plot.get("x"), "bytes", "device"}
    return tuple(a for a in desc.axes if a not in skip)[:2]


def _where(c: Case, axes: tuple[str, ...], varying: set[str]) -> str:
    """' at 256 MiB' or ' at streams: 8, 64 MiB': the axes that vary within a row, for its best case."""
    parts = []
    for k, v in c.name.axes:
        if k in axes or k == "device" or k not in varying:
            continue
        parts.append(human_bytes(int(v)) if k == "bytes" and v.isdigit() else f"{k}: {v}")
    return f" at {', '.join(parts)}" if parts else ""


def headlines(files: list[BenchmarkFile]) -> list[Headline]:
    """Per family: the best headline figure per row (see row_axes), one cell per file."""
    out: list[Headline] = []
    fams: list[str] = []
    for f in files:
        for c in f.cases.values():
            if c.family not in fams:
                fams.append(c.family)
    for fam in fams:
        desc = next(f.descriptor(fam) for f in files if f.descriptor(fam))
        axes = row_axes(desc)
        groups = _group(files, fam, axes)
        unit = headline_unit(desc)
        rows, numbers, halves, gpus = [], [], [], []
        for key in sorted(groups, key=lambda k: tuple(axis_value_key(a, v) for a, v in zip(axes + ("device",), k))):
            per_file = groups[key]
            varying = {k for k, _ in set(kv for cases in per_file for c in cases for kv in c.name.axes)
                       if len({c.axis(k) for cases in per_file for c in cases}) > 1}
            cells, nums, hws, ngpus = [], [], [], []
            for i, cases in enumerate(per_file):
                vals = [(headline_scale(desc, c)(c.center(desc.headline)), c) for c in cases
                        if c.ok and c.has_metric(desc.headline) and c.center(desc.headline) is not None]
                if not vals:
                    cells.append("-")
                    nums.append(None)
                    hws.append(None)
                    ngpus.append(None)
                    continue
                v, c = (max if desc.higher_is_better else min)(vals, key=lambda vc: vc[0])
                # The noise is that of the file's own headline: another version may head the family otherwise.
                own = files[i].descriptor(fam)
                half = noise_half_width(c, v) if own is not None and own.headline == desc.headline else None
                detect = c.written_detectable_pct() if half is not None and repeatable(v, half) else None
                cause = own.machine_cause(c.key) if own is not None and half is not None else None
                wide = cause is not None and beyond_machine_variance_pct(c.written_noise_pct(), detect)
                seen = f" (detects {fmt_pct(detect)})" if detect is not None and not wide else ""
                n = case_gpus(c)
                over = f" over {n} GPUs" if n and n > 1 else ""
                where = _where(c, axes, varying)
                cells.append((fmt_varying(v, unit, cause, f"{over}{where}") if wide else
                              f"{fmt_figure(v, half, unit)}{over}{seen}{where}").replace("  ", " "))
                nums.append(v)
                hws.append(half)
                ngpus.append(n)
            rows.append((_row_label(key, axes + ("device",)), cells))
            numbers.append(nums)
            halves.append(hws)
            gpus.append(ngpus)
        what = "best " + ("bandwidth" if desc.headline == "gbps" else "time" if desc.is_time else desc.headline)
        what += f" ({desc.better} is better, median of repetitions)"
        out.append(Headline(fam, what, rows, numbers, desc.higher_is_better, halves, gpus))
    return out
