"""The report's sections as HTML: the headline tables, the comparison against the first file, its answer,
the topology of multi-GPU nodes and their peer peaks."""

from __future__ import annotations

from ..compare.record import Cell, Comparison
from ..compare.render import (
    answer_heading,
    fmt_cell,
    fmt_num,
    fmt_ratio,
    fmt_verdict,
    group_label,
    group_parts,
    group_sizes,
)
from ..reading.load import TOPOLOGY_FACTS, BenchmarkFile, canonical_metric, gpu_count, gpu_fact, topology
from ..reading.multigpu import peer_shares
from .numbers import (
    PLUS_MINUS_LEGEND,
    DETECTS_LEGEND,
    NOT_REPEATABLE,
    NOT_REPEATABLE_LEGEND,
    VARIES_WITH,
    VARIES_LEGEND,
    _e,
    project_paths,
    fmt_pct,
    repeatable,
    fmt_interval,
    fmt_varying,
)
from .headlines import Headline


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
