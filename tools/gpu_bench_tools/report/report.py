"""One self-contained HTML page: machines side by side, headline numbers, the comparison, the plots.

Nothing in the page is fetched: styles are inline and figures are PNG data URIs, so the file can be
mailed, archived as a CI artefact or opened offline.
"""

from __future__ import annotations

import base64
import html
import math
import os
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .. import __version__
from ..compare.cells import case_gpus
from ..compare.record import Cell, Comparison
from ..compare.verdicts import compare
from .configurations import configurations
from ..compare.render import (answer_heading, fmt_cell, fmt_num, fmt_ratio, fmt_verdict, group_label, group_parts,
                              group_sizes)
from ..reading.families import MACHINE_VARIANCE_PCT, FamilyDescriptor, beyond_machine_variance_pct
from ..reading.load import (
    TOPOLOGY_FACTS,
    BenchmarkFile,
    Case,
    Timeline,
    canonical_metric,
    context_rows,
    gpu_count,
    gpu_fact,
    gpu_summary,
    short_gpu_name,
    topology,
)
from ..reading.multigpu import first_gpu_facts_note, peer_shares
from ..plot import available_kinds, human_bytes, make_plots, section_titles
from ..plot.canvas import axis_value_key, headline_scale, headline_unit

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 24px auto;
       max-width: 1400px; padding: 0 16px; color: #1b1f24; background: #fff; line-height: 1.4; }
h1 { font-size: 1.7em; margin-bottom: 0.1em; }
h2 { font-size: 1.3em; margin-top: 1.8em; border-bottom: 2px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 1.05em; margin-top: 1.2em; }
.sub { color: #57606a; margin-top: 0; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 0.88em; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.differs td, td.differs { background: #fff8c5; }
td.link small { color: #57606a; }
td.faster { color: #1a7f37; font-weight: 600; }
td.slower { color: #cf222e; font-weight: 600; }
td.noisy { color: #9a6700; }
td.varies { white-space: normal; min-width: 16em; }
td.error, td.missing { color: #8250df; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.95em; }
figure { margin: 12px 0 24px; }
figure img { max-width: 100%; height: auto; border: 1px solid #eaeef2; }
figcaption { color: #57606a; font-size: 0.9em; }
.note { color: #57606a; font-size: 0.9em; }
details summary { cursor: pointer; color: #0969da; }
.toc a { margin-right: 14px; }
"""


# What a figure's "± h" means, said once under the tables that show one.
PLUS_MINUS_LEGEND = ("± is the interval the next independent run's figure falls in at least 90% of the time "
                     "(noise_pct)")
DETECTS_LEGEND = ("detects N%: the smallest change gpu-bench-compare calls between two runs like these "
                  "(detectable_pct; a smaller change reads as the same, whatever it is)")
# What a figure whose interval reaches zero is written as, said once under the tables that show one.
NOT_REPEATABLE = "not repeatable"
NOT_REPEATABLE_LEGEND = (f"{NOT_REPEATABLE}: the figure's interval is wider than the figure itself, so the next run "
                         "may measure anything from nothing to twice as much")
# What a figure whose spread is the machine's own is written with, in place of its interval, and what that means.
VARIES_WITH = "varies with"
VARIES_LEGEND = (f"{VARIES_WITH} ...: the case's spread between processes passes {MACHINE_VARIANCE_PCT:g}% and is "
                 "the machine's own, which its family's descriptor names and gpu_bench cannot remove")


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


def _e(s: object) -> str:
    return html.escape(str(s), quote=True)


def project_paths(text: str) -> str:
    """`text` with the absolute paths a note may hold made short: the tools' own files (the shipped floors)
    as the project names them, tools/gpu_bench_tools/..., wherever the package is installed; any other
    under the working directory relative to it, as the input files are given."""
    package = Path(__file__).parent.parent
    for root in dict.fromkeys((str(package), str(package.resolve()))):
        text = text.replace(root + os.sep, "tools/gpu_bench_tools/")
    return text.replace(os.getcwd() + os.sep, "")


def noise_half_width(case: Case, value: float | None) -> float | None:
    """The half-width of the interval gpu_bench wrote around the case's headline (noise_pct), in the unit of
    `value`; None where the file has no noise_pct for the case."""
    pct = case.written_noise_pct()
    if pct is None or value is None or not math.isfinite(value):
        return None
    return abs(value) * pct / 100.0


def significant(v: float, digits: int = 2) -> str:
    """v to `digits` significant digits in fixed point: 310, 0.0042, 9700 (never 3.1e+02)."""
    if v == 0 or not math.isfinite(v):
        return fmt_num(v)
    decimals = digits - 1 - math.floor(math.log10(abs(v)))
    return f"{round(v, decimals):.{max(decimals, 0)}f}"


def fmt_pct(p: float) -> str:
    """A percentage to two significant digits, in fixed point: '1.2%', '48%', '9700%'."""
    return significant(p) + "%"


def repeatable(value: float, half: float | None) -> bool:
    """Whether a figure's interval leaves it above zero: one that reaches zero says nothing of the next run."""
    return half is None or not math.isfinite(half) or not math.isfinite(value) or half < abs(value)


def fmt_interval(value: float, half: float | None) -> str:
    """'52.34 ± 0.26': the half-width to two significant digits and the value to the same decimal place,
    so that no digit is shown that the interval says is noise; fmt_num's digits where there is no half-width.
    A figure whose interval is wider than itself reads '310, not repeatable' (two significant digits): rounded
    to the interval's place, it would read 0."""
    if half is None or not math.isfinite(half) or not math.isfinite(value):
        return fmt_num(value)
    if half == 0:
        return f"{fmt_num(value)} ± 0"
    if not repeatable(value, half):
        return f"{significant(value)}, {NOT_REPEATABLE}"
    half = float(f"{half:.1e}")  # rounded first: 0.000999 is 0.0010, two digits, not 0.00100
    decimals = 1 - math.floor(math.log10(half))
    if decimals > 6:  # fixed point would be mostly zeros
        return f"{fmt_num(value)} ± {half:.2g}"
    places = max(decimals, 0)
    return f"{round(value, decimals):.{places}f} ± {round(half, decimals):.{places}f}"


def fmt_varying(value: float, unit: str, cause: str, where: str = "") -> str:
    """A figure whose spread is the machine's own, with its cause in place of its interval, after `where` it is:
    '2.1 us at sync: none, varies with the host CPU's state, ...' (two significant digits)."""
    return f"{significant(value)}{' ' + unit if unit else ''}{where}, {VARIES_WITH} {cause}"


def fmt_figure(value: float, half: float | None, unit: str) -> str:
    """A headline figure with its unit: '52.34 ± 0.26 GB/s', '310 us, not repeatable', '47.67 GB/s'."""
    text = fmt_interval(value, half)
    if not repeatable(value, half):
        return text.replace(",", f" {unit},", 1) if unit else text
    return f"{text} {unit}" if unit else text


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




# ---------------------------------------------------------------------------------------------
# page


def _headline_table(h: Headline, labels: list[str]) -> str:
    """The family's best figures, a column per machine and, for each machine after the first, its ratio to it."""
    head = [""]
    for i, lab in enumerate(labels):
        head.append(f"[{i + 1}] {lab}")
        if i:
            head.append(f"[{i + 1}]/[1]")
    body, classes = [], []
    for (label, cells), nums in zip(h.rows, h.values):
        row, cls = [label], [""]
        for i, cell in enumerate(cells):
            row.append(cell)
            cls.append("num varies" if VARIES_WITH in cell else "num")
            if i:
                row.append(_headline_ratio(h, len(body), i))
                cls.append("num")
        body.append(row)
        classes.append(cls)
    return _table(head, body, classes=classes)


def _headline_ratio(h: Headline, r: int, i: int) -> str:
    """File i's figure over the first's in row r: per GPU where one is a total over more GPUs than the other,
    and '-' where either is missing or not repeatable."""
    a, b = h.values[r][0], h.values[r][i]
    if not a or b is None or not (repeatable(a, h.halves[r][0]) and repeatable(b, h.halves[r][i])):
        return "-"
    ga, gb = (h.gpus[r][0] if h.gpus else None), (h.gpus[r][i] if h.gpus else None)
    if (ga or 1) != (gb or 1):
        return f"{(b / (gb or 1)) / (a / (ga or 1)):.3f} per GPU"
    return f"{b / a:.3f}"


def _caption(p, labels: list[str]) -> str:
    """The figure's title and the machine (or machines) it is drawn from."""
    if p.kind == "timeline":
        return p.title
    if p.machine is not None:
        return f"{p.title}. Machine: [{p.machine + 1}] {labels[p.machine]}"
    return f"{p.title}. Machines: " + "; ".join(f"[{i + 1}] {lab}" for i, lab in enumerate(labels))


def _table(head: list[str], rows: list[list[str]], classes: list[list[str]] | None = None,
           row_classes: list[str] | None = None, raw: bool = False) -> str:
    out = ["<table>", "<tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    for r, row in enumerate(rows):
        rc = f' class="{row_classes[r]}"' if row_classes and row_classes[r] else ""
        cells = []
        for c, cell in enumerate(row):
            cls = classes[r][c] if classes else ""
            cells.append(f'<td class="{cls}">{cell if raw else _e(cell)}</td>' if cls else
                         f"<td>{cell if raw else _e(cell)}</td>")
        out.append(f"<tr{rc}>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _comparison_cell(cell: Cell | None, is_headline: bool) -> str:
    """A comparison figure with its ± interval where gpu_bench wrote the headline's noise; a wide spread of
    the repetitions is shown as their cv, so that ± keeps one meaning on the page."""
    if cell is None or cell.center is None:
        return fmt_cell(cell)
    if cell.machine_cause is not None:
        return fmt_varying(cell.center, "", cell.machine_cause)
    if is_headline and cell.noise_from == "gpu_bench" and cell.noise_pct is not None:
        return fmt_interval(cell.center, abs(cell.center) * cell.noise_pct / 100.0)
    text = fmt_num(cell.center)
    if cell.cv_pct is not None and cell.cv_pct >= 5.0:
        text += f" (cv {cell.cv_pct:.0f}%)"
    return text


def _figure_class(cell: Cell | None) -> str:
    """A comparison figure's cell class: one that says its cause in words wraps."""
    return "num varies" if cell is not None and cell.center is not None and cell.machine_cause else "num"


def _comparison_html(cmp: Comparison, files: list[BenchmarkFile]) -> str:
    n = len(cmp.paths)
    parts = []
    head = ["case", "unit", "[1]"]
    for i in range(2, n + 1):
        head += [f"[{i}]", f"[{i}]/[1]", f"verdict [{i}]", f"detects [{i}]"]

    def is_headline(r, i: int) -> bool:
        d = files[i].descriptor(r.family)
        return d is not None and canonical_metric(r.metric) == canonical_metric(d.headline)

    def render(rs) -> str:
        body, classes = [], []
        for r in rs:
            cells = [f"<code>{_e(r.key)}</code>", _e(r.unit), _e(_comparison_cell(r.cells[0], is_headline(r, 0)))]
            cls = ["", "", _figure_class(r.cells[0])]
            for i in range(1, n):
                v = r.versus[i]
                detect = v.detectable_pct if v is not None and not v.machine_variance else None
                cells += [_e(_comparison_cell(r.cells[i], is_headline(r, i))), _e(fmt_ratio(v)),
                          _e(fmt_verdict(v, with_p=True)), fmt_pct(detect) if detect is not None else "-"]
                cls += [_figure_class(r.cells[i]), "num", v.verdict if v else "", "num"]
            body.append(cells)
            classes.append(cls)
        return _table(head, body, classes, raw=True)

    shown = [_comparison_cell(c, is_headline(r, i)) for r in cmp.rows for i, c in enumerate(r.cells)]
    if any("±" in text for text in shown):
        parts.append(f"<p class='note'>{_e(PLUS_MINUS_LEGEND)}.</p>")
    if any(NOT_REPEATABLE in text for text in shown):
        parts.append(f"<p class='note'>{_e(NOT_REPEATABLE_LEGEND)}.</p>")
    if any(VARIES_WITH in text for text in shown):
        parts.append(f"<p class='note'>{_e(VARIES_LEGEND)}.</p>")
    if any(v is not None and v.detectable_pct is not None for r in cmp.rows for v in r.versus[1:]):
        parts.append(f"<p class='note'>{_e(DETECTS_LEGEND)}.</p>")
    changed = [r for r in cmp.rows if any(v and v.verdict not in ("same",) for v in r.versus[1:])]
    changed.sort(key=lambda r: -max(abs((v.speed or 1.0) - 1.0) for v in r.versus[1:] if v))
    if changed:
        parts.append(f"<h3>Cases that are not the same ({len(changed)} of {len(cmp.rows)})</h3>")
        parts.append(render(changed[:200]))
        if len(changed) > 200:
            parts.append(f"<p class='note'>... and {len(changed) - 200} more in the full table.</p>")
    else:
        parts.append(f"<p>All {len(cmp.rows)} compared cases are the same within "
                     f"{cmp.min_effect_pct:g}%.</p>")
    parts.append(f"<details><summary>Full table ({len(cmp.rows)} cases)</summary>{render(cmp.rows)}</details>")
    if cmp.only_in:
        items = "".join(f"<li><code>{_e(k)}</code> only in {' '.join(f'[{i + 1}]' for i in p)}</li>"
                        for k, p in cmp.only_in)
        parts.append(f"<details><summary>Cases not in every file ({len(cmp.only_in)})</summary><ul>{items}</ul>"
                     "</details>")
    for w in cmp.warnings:
        parts.append(f"<p class='note'>Note: {_e(project_paths(w))}</p>")
    return "\n".join(parts)


def answer_html(cmp: Comparison, labels: list[str]) -> str:
    """Per machine after the first: the verdicts of the comparison per family, memory kind, direction and
    size band, where it differs from the first beyond the noise, by how much, and where it is the same."""
    parts = []
    for i in range(1, len(cmp.paths)):
        if not cmp.groups:
            break
        heading = answer_heading(i)
        parts.append(f"<h3>[{i + 1}] {_e(labels[i])} against [1] {_e(labels[0])}</h3>")
        parts.append(f"<p class='note'>{_e(' '.join(heading))}</p>")
        body = [[_e(group_label(g)), _e(group_sizes(g)), str(g.cases), _e("; ".join(group_parts(g, i)))]
                for g in cmp.groups]
        parts.append(_table(["cases of", "sizes", "cases", "verdicts"], body,
                            classes=[["", "", "num", ""]] * len(body), raw=True))
    return "\n".join(parts)


def topology_html(files: list[BenchmarkFile], labels: list[str]) -> str:
    """Per multi-GPU file: its GPUs, and the link of every ordered pair as a src x dst table.

    A cell that differs from the same pair in the first file is highlighted.
    """
    parts = []
    first = topology(files[0]) if files else {}
    for i, (f, lab) in enumerate(zip(files, labels)):
        n = gpu_count(f) or 1
        if n < 2:
            continue
        parts.append(f"<h3>[{i + 1}] {_e(lab)}</h3>")
        rows = [[f"GPU {k}"] + [gpu_fact(f, k, key) or "unavailable" for key in
                                 ("name", "pci_bus_id", "numa_node", "local_cpus", "profile.host_link", "pcie", "uuid")]
                for k in range(n)]
        parts.append(_table(["GPU", "name", "PCI bus", "NUMA node", "local CPUs", "host link", "PCIe (now / max)",
                             "UUID"], rows))
        topo = topology(f)
        if not topo:
            parts.append("<p class='note'>The file has no topology facts.</p>")
            continue
        body, classes = [], []
        for s in range(n):
            cells, cls = [f"GPU {s}"], [""]
            for d in range(n):
                if s == d:
                    cells.append("-")
                    cls.append("")
                    continue
                facts = topo.get((s, d), {})
                link, p2p, rank, atomics = (_e(facts.get(k, "unavailable")) for k in TOPOLOGY_FACTS)
                cells.append(f"{link}<br><small>p2p {p2p}, rank {rank}, atomics {atomics}</small>")
                differs = i > 0 and first and (gpu_count(files[0]) or 1) > 1 and first.get((s, d)) != facts
                cls.append("link differs" if differs else "link")
            body.append(cells)
            classes.append(cls)
        parts.append(_table(["source \\ destination"] + [f"GPU {d}" for d in range(n)], body, classes, raw=True))
    if parts:
        note = ("Links: nvlink, or the PCIe level the path crosses (pcie_switch, pcie_host_bridge, system); "
                "p2p: whether peer access can be enabled; rank: CUDA's relative performance rank of the link; "
                "atomics: whether native atomics work over it.")
        if len(files) > 1:
            note += " Highlighted links differ from the same pair in [1]."
        parts.insert(0, f"<p class='note'>{note}</p>")
    return "\n".join(parts)


def peer_peak_html(files: list[BenchmarkFile], labels: list[str]) -> str:
    """Per file: every peer figure beside the NVLink peak it is a share of (reading.multigpu.peer_peak)."""
    parts = []
    for i, (f, lab) in enumerate(zip(files, labels)):
        rows = [[f"<code>{_e(c.key)}</code>", fmt_num(value), fmt_num(peak), f"{100 * share:.1f}%"]
                for c, value, peak, share in peer_shares(f)]
        if rows:
            parts.append(f"<h3>[{i + 1}] {_e(lab)}</h3>")
            parts.append(_table(["case", "GB/s", "NVLink peak (GB/s)", "share"], rows,
                                classes=[["", "num", "num", "num"]] * len(rows), raw=True))
    if parts:
        parts.insert(0, "<p class='note'>The peak is the links' own rate as NVML reads it (the pair's NVLinks per "
                        "direction, twice that for bidir; for a pattern, each sending GPU's, or GPU 0's, the "
                        "lesser of its own links and its pairs').</p>")
    return "\n".join(parts)


# What the processes drawing a report's figures share: (files, labels, folder, dpi), set where they start.
_FIGURES: tuple | None = None


def _share_figures(job: tuple) -> None:
    global _FIGURES
    _FIGURES = job


def _draw_kinds(kinds: list[str]) -> list:
    files, labels, out_dir, dpi = _FIGURES
    return make_plots(files, out_dir, formats=("png",), dpi=dpi, kinds=kinds, labels=labels, one_per_kind=True)


def draw_figures(files: list[BenchmarkFile], labels: list[str], out_dir: str, dpi: int) -> list:
    """One PNG per kind of figure (the one of the most points), in reading order.

    Drawing is most of a report's time and each family's figure is drawn apart from the others, so on Linux
    with several CPUs each family's is drawn in a process of its own, as many at once as there are CPUs
    this process may run on (forked: the files are not copied). Elsewhere, or with one CPU, one after the
    other."""
    import multiprocessing
    import sys

    from ..plot import family_modules

    groups: list[list[str]] = []
    modules = family_modules()
    for kind in available_kinds(files):
        sibling = next((list(m.SECTIONS) for m in modules.values() if kind in m.SECTIONS), [kind])
        if not any(kind in g for g in groups):
            groups.append(sibling)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = min(cpus, len(groups))
    if workers < 2 or not sys.platform.startswith("linux"):
        return make_plots(files, out_dir, formats=("png",), dpi=dpi, labels=labels, one_per_kind=True)
    import importlib
    from concurrent.futures import ProcessPoolExecutor

    for module in ("matplotlib.figure", "matplotlib.backends.backend_agg"):  # imported once, before the fork
        importlib.import_module(module)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_share_figures,
                             initargs=((files, labels, out_dir, dpi),)) as pool:
        return [p for drawn in pool.map(_draw_kinds, groups) for p in drawn]


def default_title(files: list[BenchmarkFile]) -> str:
    def unique(values):
        out = []
        for v in values:
            if v and v not in out:
                out.append(v)
        return out

    gpus = unique((gpu_summary(f) if (gpu_count(f) or 1) > 1 else short_gpu_name(f.fact("gpu.name") or ""))
                  for f in files)
    drivers = unique(f.fact("driver.version") for f in files)
    title = "gpu_bench report"
    if gpus:
        title += ": " + " vs. ".join(gpus)
    if len(drivers) > 1:
        title += ", drivers " + " vs. ".join(drivers)
    elif drivers:
        title += f", driver {drivers[0]}"
    return title


def build_report(files: list[BenchmarkFile], timelines: list[Timeline] | None = None, title: str | None = None,
                 with_plots: bool = True, dpi: int = 90) -> str:
    """The whole page as one string."""
    timelines = timelines or []
    configs = configurations(files)
    sources = files
    files = [c.file for c in configs]
    labels = [c.label for c in configs]
    title = title or default_title(files)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sections: list[tuple[str, str, str]] = []

    if files:
        # The answer first (how each machine compares with the first), then each machine's headline figures,
        # then what the machines are, then the details.
        cmp = None
        old_facts = first_gpu_facts_note(sources)
        if len(files) > 1:
            cmp = compare(files)
            cmp.labels = labels
            cmp.warnings = [w for w in cmp.warnings if w != old_facts]  # said with the machines
            answer = answer_html(cmp, labels)
            if answer:
                sections.append(("answer", "How the machines compare", answer))

        parts = []
        heads = headlines(files)
        if any(h.has_intervals for h in heads):
            parts.append(f"<p class='note'>{_e(PLUS_MINUS_LEGEND)}.</p>")
        cells = [cell for h in heads for _, cs in h.rows for cell in cs]
        if any(NOT_REPEATABLE in cell for cell in cells):
            parts.append(f"<p class='note'>{_e(NOT_REPEATABLE_LEGEND)}.</p>")
        if any(VARIES_WITH in cell for cell in cells):
            parts.append(f"<p class='note'>{_e(VARIES_LEGEND)}.</p>")
        if any("(detects " in cell for cell in cells):
            parts.append(f"<p class='note'>{_e(DETECTS_LEGEND)}.</p>")
        if any(g and g > 1 for h in heads for row in h.gpus for g in row) and len(files) > 1:
            parts.append("<p class='note'>A figure over several GPUs is their total; its ratio to a figure over "
                         "fewer GPUs is per GPU.</p>")
        for h in heads:
            parts.append(f"<h3>{_e(h.family)}: {_e(h.what)}</h3>")
            parts.append(_headline_table(h, labels))
        sections.append(("headlines", "Headline numbers", "\n".join(parts)))

        ctx = context_rows(files, per_gpu=False)  # each GPU and link is in the topology section
        head = ["fact"] + [f"[{i + 1}] {lab}" for i, lab in enumerate(labels)]
        rows = [["files"] + [", ".join(Path(p).name for p in c.paths) for c in configs],
                ["run date"] + [str(f.context.get("date", "-")) + (f" (and {len(c.paths) - 1} more)" if len(c.paths) > 1
                                                                  else "") for f, c in zip(files, configs)]]
        rows += [[k] + v for k, v in ctx]
        rows.append(["cases with a figure"] + [f"{len(f.ok_cases())} of {len(f.cases)}" for f in files])
        diff = ["differs" if len(files) > 1 and len(set(r[1:])) > 1 and r[0] not in ("files", "run date") else ""
                for r in rows]
        note = ("<p class='note'>One column per machine configuration (host, GPUs, driver and runtime): files of "
                "the same configuration are taken together as repetitions. Highlighted rows differ between the "
                "machines.</p>")
        if old_facts:
            note += f"<p class='note'>Note: {_e(project_paths(old_facts))}.</p>"
        sections.append(("machines", "Machines", note + _table(head, rows, row_classes=diff)))

        if cmp is not None:
            sections.append(("comparison", "Comparison against [1]", _comparison_html(cmp, files)))
        topo = topology_html(files, labels)
        if topo:
            sections.append(("topology", "GPUs and links", topo))
        peaks = peer_peak_html(files, labels)
        if peaks:
            sections.append(("nvlink", "Peer copies against their NVLink peak", peaks))

        problems = [(i, c) for i, f in enumerate(files) for c in f.cases.values() if not c.ok]
        if problems:
            body = [[f"[{i + 1}]", f"<code>{_e(c.key)}</code>", _e(c.problem)] for i, c in problems]
            sections.append(("problems", f"Cases without a figure ({len(problems)})",
                             _table(["file", "case", "why"], body, raw=True)))
        noted = [(i, c, note) for i, f in enumerate(files) for c in f.cases.values() for note in c.notes()]
        if noted:
            body = [[f"[{i + 1}]", f"<code>{_e(c.key)}</code>", _e(note)] for i, c, note in noted]
            sections.append(("case-notes", f"Notes on cases ({len(noted)})",
                             _table(["file", "case", "what happened"], body, raw=True)))

    if with_plots:
        with tempfile.TemporaryDirectory(prefix="gpu_bench_report_") as tmp:
            # One figure per family, the one with the most points: the tables above hold every figure, and a
            # family's figures for each value of its other axes would multiply the page's size and time
            # (gpu-bench-plot draws them all). Every timeline given is drawn.
            plots = draw_figures(files, labels, tmp, dpi)
            if timelines:
                plots += make_plots(timelines, tmp, formats=("png",), dpi=dpi)
            titles = section_titles(files)
            by_kind: dict[str, list[str]] = {}
            for p in plots:
                data = base64.b64encode(Path(p.paths[0]).read_bytes()).decode("ascii")
                by_kind.setdefault(p.kind, []).append(
                    f'<figure><img alt="{_e(p.title)}" src="data:image/png;base64,{data}">'
                    f"<figcaption>{_e(_caption(p, labels))}</figcaption></figure>"
                )
        for kind, figs in by_kind.items():
            sections.append((f"plots-{kind}", titles.get(kind, kind), "\n".join(figs)))

    toc = " ".join(f'<a href="#{sid}">{_e(t)}</a>' for sid, t, _ in sections)
    body = "\n".join(f'<h2 id="{sid}">{_e(t)}</h2>\n{content}' for sid, t, content in sections)
    sources = ", ".join(_e(Path(x.path).name) for x in list(sources) + list(timelines))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title>
<style>{CSS}</style>
</head>
<body>
<h1>{_e(title)}</h1>
<p class="sub">From {sources}. Made {now} by gpu_bench_tools {__version__}.
Rates in GB/s with 1 GB = 10<sup>9</sup> bytes; times are GPU time from CUDA events.</p>
<p class="toc">{toc}</p>
{body}
</body>
</html>
"""
