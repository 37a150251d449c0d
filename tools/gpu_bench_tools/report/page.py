"""One self-contained HTML page: machines side by side, headline numbers (headlines.py), the comparison
(sections.py), the plots (figures.py).

Nothing in the page is fetched: styles are inline and figures are PNG data URIs, so the file can be
mailed, archived as a CI artefact or opened offline.
"""

from __future__ import annotations

import base64
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from .. import __version__
from ..compare.verdicts import compare
from .configurations import configurations
from ..reading.load import BenchmarkFile, Timeline, context_rows, gpu_count, gpu_summary, short_gpu_name
from ..reading.multigpu import first_gpu_facts_note
from ..plot import make_plots, section_titles
from .numbers import (
    PLUS_MINUS_LEGEND,
    DETECTS_LEGEND,
    NOT_REPEATABLE,
    NOT_REPEATABLE_LEGEND,
    VARIES_WITH,
    VARIES_LEGEND,
    _e,
    project_paths,
)
from .headlines import headlines
from .sections import _headline_table, _caption, _table, _comparison_html, answer_html, topology_html, peer_peak_html
from .figures import draw_figures


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
