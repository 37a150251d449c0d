import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import synth
from conftest import REPO, SLOW, run_cli
from gpu_bench_tools.cli import report as cli_report
from gpu_bench_tools.reading.load import load_file
from gpu_bench_tools.report.headlines import headlines


@pytest.fixture(scope="module")
def new_driver(tmp_path_factory):
    """The base machine after a driver update that made pinned h2d copies and small d2h copies slower."""
    doc = synth.make_run(seed=2, slow=SLOW, driver="590.44.01")
    return synth.write(tmp_path_factory.mktemp("drv") / "new_driver.json", doc)


@pytest.fixture(scope="module")
def report(data, new_driver, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    # base and night2: one machine in one configuration (two files, one column); the same machine under
    # another driver (its own column); an H200.
    code = cli_report.main([data["base"], data["night2"], new_driver, data["h200"], "--timeline", data["timeline"],
                            "--out", str(out)])
    assert code == 0
    return out


def test_page_is_self_contained(report):
    page = report.read_text()
    assert page.startswith("<!DOCTYPE html>")
    refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page)
    assert refs and all(r.startswith(("data:image/png;base64,", "#")) for r in refs), set(refs) - {""}
    assert not re.search(r"https?://|url\(|@import|<link|<script", page)
    # A figure per family (five), and the timeline's charts.
    assert page.count('<img alt="') >= 6 + 1


def test_page_has_machines_headlines_comparison_and_plots(report):
    page = report.read_text()
    for section in ("Machines", "Headline numbers", "Comparison against [1]", "Transfer",
                    "Copy/compute overlap", "Sync placement", "SmallCopy", "HostBlocking", "Timelines"):
        assert f">{section}</h2>" in page
    assert "gpu_bench report: H100 80GB HBM3 vs. H200, drivers 580.159.04 vs. 590.44.01 vs. 570.86.15" in page
    assert re.search(r'<tr class="differs"><td>GPU</td><td>NVIDIA H100 80GB HBM3</td>', page)
    assert '<td class="slower">slower (p=' in page
    assert "Transfer: best bandwidth (higher is better" in page and "GB/s at 256 MiB" in page


def test_headlines_per_family(data):
    files = [load_file(data["base"]), load_file(data["slow"])]
    h = {x.family: x for x in headlines(files)}
    rows = dict(h["Transfer"].rows)
    base, slow = (float(v.split()[0]) for v in rows["h2d pinned"])
    assert slow == pytest.approx(base * 0.9, rel=0.02)
    # A file without descriptors: every Overlap case has gbps, so that is its headline.
    assert dict(h["Overlap"].rows)["breadth_first pinned"][0].endswith("GB/s at streams: 8, sync: end")
    assert re.search(r"^\d+\.\d+ us at \d+ B$", dict(h["SmallCopy"].rows)["h2d pinned"][0])
    assert set(h) == {"Transfer", "Overlap", "SyncPlacement", "SmallCopy", "HostBlocking"}


def test_single_file_report_without_plots(data, tmp_path, capsys):
    out = tmp_path / "one.html"
    code, text, _ = run_cli(cli_report.main, [data["base"], "--out", str(out), "--no-plots"], capsys)
    assert code == 0 and "wrote" in text
    page = out.read_text()
    assert "<img" not in page and "Comparison" not in page and "Headline numbers" in page


def test_a_case_whose_link_errors_rose_is_marked_in_words(tmp_path):
    """link_errors_rose (docs/json.md) puts the case among the notes on cases, with one file or several."""
    import gatefiles as gf
    from gpu_bench_tools.reading.load import benchmark_file_from_doc
    from gpu_bench_tools.report.page import build_report

    doc = gf.read(gf.GATE_H100)
    gf.entry(doc, "Transfer/dir:d2h/mem:pinned/")["link_errors_rose"] = 12.0
    planted = benchmark_file_from_doc(gf.write(tmp_path / "planted.json", doc), doc)
    for files in ([planted], [load_file(gf.GATE_H100), planted]):
        page = build_report(files, with_plots=False)
        assert '<h2 id="case-notes">Notes on cases (1)</h2>' in page
        section = page[page.index('id="case-notes"'):]
        assert "<code>Transfer/dir:d2h/mem:pinned/bytes:268435456</code>" in section
        assert "link error counters rose during this case (by 12)" in section
    assert "case-notes" not in build_report([load_file(gf.GATE_H100)], with_plots=False)


def test_report_refuses_a_directory_as_output(data, tmp_path, capsys):
    code, _, err = run_cli(cli_report.main, [data["base"], "--out", str(tmp_path), "--no-plots"], capsys)
    assert code == 2 and "is a directory" in err


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browse(*args, timeout=120):
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
           "--no-first-run", "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed (apt-get install chromium)")
def test_report_in_a_real_headless_browser(report, tmp_path):
    from matplotlib.image import imread

    # 1. Every inline figure decodes, and the page fetched nothing.
    probe = tmp_path / "probe.html"
    probe.write_text(report.read_text().replace("</body>", """<script>
window.addEventListener('load', () => {
  const imgs = Array.from(document.images);
  const fetched = performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith('data:'));
  document.body.setAttribute('data-probe', JSON.stringify({
    images: imgs.length, decoded: imgs.filter(i => i.complete && i.naturalWidth > 300).length,
    fetched: fetched, tables: document.querySelectorAll('table').length, height: document.documentElement.scrollHeight}));
});
</script></body>"""))
    p = browse("--virtual-time-budget=15000", "--dump-dom", probe.as_uri())
    m = re.search(r"data-probe=\"([^\"]*)\"", p.stdout)
    assert m, p.stderr[-2000:]
    probe_result = json.loads(m.group(1).replace("&quot;", '"'))
    drawn = len(re.findall(r'<img [^>]*src="data:image/png;base64,', report.read_text()))
    assert drawn >= 6 and probe_result["images"] == drawn and probe_result["decoded"] == drawn
    assert probe_result["fetched"] == []
    assert probe_result["tables"] >= 6

    # 2. What a person sees, top to bottom: tables, then figures; nothing blank.
    height = min(int(probe_result["height"]) + 50, 14000)
    shot = tmp_path / "report.png"
    p = browse(f"--window-size=1400,{height}", f"--screenshot={shot}", report.as_uri())
    assert shot.exists(), p.stderr[-2000:]
    img = imread(shot)[..., :3]
    assert img.shape[:2] == (height, 1400)
    ink = img.mean(axis=2) < 0.5
    bands = [ink[y:y + 1000].mean() for y in range(0, height - 1000, 1000)]
    assert min(bands) > 0.003, [round(b, 4) for b in bands]  # no blank stretch of a screen's height
    assert max(bands) < 0.5
    # The yellow rows that mark facts that differ between the machines (their table follows the answer).
    yellow = (img[..., 0] > 0.95) & (img[..., 1] > 0.9) & (img[..., 2] < 0.85)
    assert yellow.sum() > 4000
    # The figures are drawn: matplotlib's first colour (the baseline file's lines and bars) is on the page.
    blue = (abs(img[..., 0] - 0.12) < 0.08) & (abs(img[..., 1] - 0.47) < 0.08) & (abs(img[..., 2] - 0.71) < 0.08)
    assert blue.sum() > 5000
    keep = Path(os.environ.get("GPU_BENCH_SCREENSHOT_DIR", tmp_path))
    keep.mkdir(parents=True, exist_ok=True)
    if keep != tmp_path:
        shutil.copy(shot, keep / "report.png")


def test_one_column_per_machine_configuration(report):
    page = report.read_text()
    machines = page.split(">Machines</h2>")[1].split("<h2")[0]
    head = re.search(r"<tr><th>fact</th>(.*?)</tr>", machines).group(1)
    assert head.count("<th>") == 3  # base + night2 merged, the new driver apart, the H200
    assert "[1] H100 80GB HBM3 on node-a, driver 580.159.04, CUDA runtime 13.0 (2 files)" in head
    assert "[2] H100 80GB HBM3 on node-a, driver 590.44.01, CUDA runtime 13.0</th>" in head
    assert "<td>files</td><td>base.json, night2.json</td><td>new_driver.json</td><td>h200.json</td>" in machines
    # Merged, the two nights are one column of ten repetitions per case.
    full = page.split(">Comparison against [1]</h2>")[1].split("<h2")[0]
    assert '<td class="slower">slower (p=' in full and "[2]/[1]" in full


def test_headline_tables_have_a_ratio_column_against_the_first_machine(data, new_driver, report):
    page = report.read_text()
    table = page.split("Transfer: best bandwidth")[1].split("</table>")[0]
    assert "<th>[2]/[1]</th>" in table and "<th>[3]/[1]</th>" in table
    row = re.search(r"<tr><td>h2d pinned</td>(.*?)</tr>", table).group(1)
    ratio = float(re.findall(r"<td class=\"num\">([0-9.]+)</td>", row)[0])  # [2]/[1]
    assert ratio == pytest.approx(0.9, rel=0.02)  # the new driver's 10% slower pinned copies


def test_captions_name_the_machines(report):
    page = report.read_text()
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page)
    plots = [c for c in captions if not c.startswith("Timeline")]
    assert plots and all("Machines: [1] H100 80GB HBM3 on node-a" in c and "[3] H200 on node-a" in c for c in plots)


def test_machines_that_share_a_host_name_are_told_apart_by_gpu(tmp_path):
    from gpu_bench_tools.report.configurations import configurations
    from gpu_bench_tools.reading.load import benchmark_file_from_doc

    a = synth.make_run(families=("SyncPlacement",), host="vm", seed=1)
    b = synth.make_run(families=("SyncPlacement",), host="vm", seed=2)
    b["context"]["gpu.uuid"] = "GPU-0000ffff-0000-0000-0000-000000000001"
    c = synth.make_run(families=("SyncPlacement",), host="vm", seed=3)  # a's machine again
    configs = configurations([benchmark_file_from_doc(f"{n}.json", d) for n, d in zip("abc", (a, b, c))])
    assert [x.label for x in configs] == [
        "H100 80GB HBM3 on vm, driver 580.159.04, CUDA runtime 13.0 [GPU-6f1e2d3c] (2 files)",
        "H100 80GB HBM3 on vm, driver 580.159.04, CUDA runtime 13.0 [GPU-0000ffff]"]
    assert [len(x.file.cases["SyncPlacement/op:add/sync:both"].samples) for x in configs] == [10, 5]


# ---------------------------------------------------------------------------------------------
# Each headline figure with its interval (noise_pct) as value ± half-width


def _noisy_run(pct_of, **kw):
    """A schema 2 run of one repetition whose entries carry noise_pct = pct_of(name), or none where None."""
    doc = synth.make_run(schema="2", reps=1, errors=False, **kw)
    for e in doc["benchmarks"]:
        e.pop("noise_pct", None)
        pct = pct_of(e["name"])
        if pct is not None:
            e["noise_pct"] = pct
    return doc


def _plus_minus(cell):
    """(value, half-width) of '52.34 ± 0.26 GB/s at ...', or (value, None) without a ±."""
    m = re.match(r"^(-?[0-9.]+)(?: ± ([0-9.]+))?(?: |$)", cell)
    return float(m.group(1)), (float(m.group(2)) if m.group(2) else None)


def _shows(cell, value, pct):
    """Whether the cell reads value ± value x pct / 100, each rounded to the half-width's last digit."""
    text = re.match(r"^(-?[0-9.]+) ± ([0-9.]+)", cell)
    places = len(text.group(2).split(".")[1]) if "." in text.group(2) else 0
    last = 10.0 ** -places
    shown_value, shown_half = float(text.group(1)), float(text.group(2))
    half = abs(value) * pct / 100
    assert len(text.group(2).replace(".", "").lstrip("0")) == 2 or shown_half == 0, cell  # two significant digits
    return abs(shown_half - half) <= last / 2 + 1e-12 and abs(shown_value - value) <= last / 2 + 1e-12


def test_headline_figures_carry_their_noise_pct_interval():
    from gpu_bench_tools.reading.load import benchmark_file_from_doc

    def pct_of(name):
        return None if "/mem:pageable/" in name else 3.0 if "/dir:h2d/" in name else 0.25

    f = benchmark_file_from_doc("n.json", _noisy_run(pct_of, families=("Transfer",)))
    h, = headlines([f])
    rows = dict(h.rows)
    for label, pct in (("h2d pinned", 3.0), ("d2h pinned", 0.25), ("h2d pageable", None),
                       ("d2h managed_prefetch", 0.25)):
        cell = rows[label][0]
        direction, mem = label.split()
        best = max(c.center("gbps") for c in f.cases.values()
                   if c.key.startswith(f"Transfer/dir:{direction}/mem:{mem}/"))
        assert re.search(r" GB/s at \d+ [KMG]iB$", cell), cell
        if pct is None:
            assert "±" not in cell and _plus_minus(cell) == (pytest.approx(best, rel=1e-3), None), label
        else:
            assert _shows(cell, best, pct), (label, cell, best)
    assert h.has_intervals


def test_headline_and_comparison_tables_say_what_change_the_runs_can_show(tmp_path):
    from gpu_bench_tools.compare.verdicts import compare
    from gpu_bench_tools.reading.load import benchmark_file_from_doc
    from gpu_bench_tools.report.numbers import DETECTS_LEGEND
    from gpu_bench_tools.report.sections import _comparison_html

    doc = _noisy_run(lambda name: 0.5, families=("Transfer",))
    for e in doc["benchmarks"]:
        e["detectable_pct"] = 1.25
        seconds = e["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}[e["time_unit"]]
        e["round_times_s"] = [seconds * 0.999, seconds, seconds * 1.001]
    f = benchmark_file_from_doc("n.json", doc)
    h, = headlines([f])
    assert all("(detects 1.2%)" in cells[0] for _, cells in h.rows), h.rows
    cmp = compare([f, f])
    assert {r.versus[1].detectable_pct for r in cmp.rows} == {1.25}
    html = _comparison_html(cmp, [f, f])
    assert "<th>detects [2]</th>" in html and "<td class=\"num\">1.2%</td>" in html and DETECTS_LEGEND in html


def test_plus_minus_is_rounded_to_the_interval():
    from gpu_bench_tools.report.numbers import fmt_interval

    assert fmt_interval(52.3412, 0.2617) == "52.34 ± 0.26"
    assert fmt_interval(32596.18, 3178.0) == "32600 ± 3200"
    assert fmt_interval(0.206, 0.000999) == "0.2060 ± 0.0010"
    assert fmt_interval(9.613, 8.14) == "9.6 ± 8.1"
    assert fmt_interval(0.7277, 0.0) == "0.7277 ± 0"
    assert fmt_interval(47.671, None) == "47.67"


def test_report_says_what_plus_minus_means_only_where_it_shows_one(data, tmp_path):
    from gpu_bench_tools.reading.load import benchmark_file_from_doc
    from gpu_bench_tools.report.page import build_report

    legend = "± is the interval the next independent run&#x27;s figure falls in at least 90% of the time (noise_pct)"
    a = benchmark_file_from_doc("a.json", _noisy_run(lambda n: 2.0, families=("SmallCopy",), seed=1))
    b = benchmark_file_from_doc("b.json", _noisy_run(lambda n: None if "/dir:d2h/" in n else 2.0,
                                                     families=("SmallCopy",), seed=2, gpu="H200"))
    page = build_report([a, b], with_plots=False)
    heads = page.split(">Headline numbers</h2>")[1].split("<h2")[0]
    assert heads.count(legend) == 1
    row = re.search(r"<tr><td>h2d pinned</td>(.*?)</tr>", heads).group(1)
    cells = re.findall(r'<td class="num">([^<]*)</td>', row)
    for cell, f in zip((cells[0], cells[1]), (a, b)):
        best = min(c.center("real_time") for c in f.cases.values() if c.key.startswith("SmallCopy/dir:h2d/mem:pinned/"))
        assert _shows(cell, best, 2.0), cell
    d2h = re.findall(r'<td class="num">([^<]*)</td>', re.search(r"<tr><td>d2h pinned</td>(.*?)</tr>", heads).group(1))
    assert "±" in d2h[0] and "±" not in d2h[1]  # b wrote no noise_pct for its d2h cases
    # The comparison shows each side's interval, and says what it means.
    full = page.split(">Comparison against [1]</h2>")[1].split("<h2")[0]
    assert full.count(legend) == 1
    row = re.search(r"<code>SmallCopy/dir:h2d/mem:pinned/bytes:4</code></td><td>us</td>(.*?)</tr>", full).group(1)
    first, second = re.findall(r'<td class="num">([^<]*)</td>', row)[:2]
    for cell, f in ((first, a), (second, b)):
        assert _shows(cell, f.cases["SmallCopy/dir:h2d/mem:pinned/bytes:4"].center("real_time"), 2.0), cell
    # Files without noise_pct: no ± anywhere, and no sentence about it.
    old = build_report([load_file(data["base"]), load_file(data["h200"])], with_plots=False)
    assert "±" not in old.split(">Headline numbers</h2>")[1].split("<h2")[0]
    assert legend not in old and "noise_pct" not in old


DEFAULT_RUNS = [REPO / "results" / "aa" / f"{g}_default_110d606" / f"default_{g}_run1.json" for g in ("h100", "h200")]


@pytest.mark.floors
def test_two_default_runs_make_a_lean_page_with_no_warning_and_notes_named_as_the_project_names_them(
        tmp_path, capsys, monkeypatch):
    import warnings

    import gpu_bench_tools

    monkeypatch.chdir(tmp_path)  # the inputs are given by absolute paths, outside the working directory
    out = tmp_path / "report.html"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, text, err = run_cli(cli_report.main, [*map(str, DEFAULT_RUNS), "-o", str(out)], capsys)
    assert code == 0 and "wrote" in text and err == ""
    assert not caught, [str(w.message) for w in caught]  # matplotlib's "constrained_layout not applied" among them
    page = out.read_text()
    # The files' one-round copies are widened to the shipped floors, which the note names as the project does.
    assert "tools/gpu_bench_tools/stats/between_run_floor.toml" in page
    assert str(Path(gpu_bench_tools.__file__).parent) not in page and "site-packages" not in page
    # One figure for each kind of figure, under its own heading.
    sections = re.findall(r'<h2 id="plots-[^"]+">', page)
    assert len(sections) >= 10 and page.count('<img alt="') == len(sections)


# ---------------------------------------------------------------------------------------------
# The answer first; every figure the right one, in words where its interval is wider than itself


def test_a_figure_whose_interval_is_wider_than_itself_reads_not_repeatable():
    from gpu_bench_tools.report.numbers import fmt_interval

    assert fmt_interval(358.2, 200000.0) == "360, not repeatable"  # rounded to the interval, it read 0 ± 200000
    assert fmt_interval(0.0123, 0.5) == "0.012, not repeatable"
    assert fmt_interval(345.0, 340.0) == "340 ± 340"  # within itself: as before
    from gpu_bench_tools.report.numbers import fmt_figure, fmt_pct

    assert fmt_figure(358.2, 200000.0, "us") == "360 us, not repeatable"
    assert fmt_figure(52.3412, 0.2617, "GB/s") == "52.34 ± 0.26 GB/s"
    assert fmt_pct(9700.0) == "9700%" and fmt_pct(1.25) == "1.2%"  # never 9.7e+03%


def test_the_report_of_a_four_gpu_node_and_one_gpu_opens_with_the_answer_and_compares_like_with_like():
    from gpu_bench_tools.report.page import build_report

    node = REPO / "results/aa/h200x4_default_64ce113/default_h200x4_run1.json.gz"
    one = REPO / "results/aa/h100_default_7c29fd0/default_h100_run1.json"
    files = [load_file(str(node)), load_file(str(one))]
    h = {x.family: x for x in headlines(files)}
    # AllHost: a row per direction and pattern (its descriptor hints series=dir,pattern), each node's total
    # said as one, and the ratio per GPU.
    allhost = dict(h["AllHost"].rows)
    assert set(allhost) == {"h2d", "h2d one_to_all", "d2h", "d2h all_to_one"}
    for label, (total, single) in allhost.items():
        assert " GB/s over 4 GPUs" in total and "over" not in single, label
    page = build_report(files, with_plots=False)
    row = re.search(r"<tr><td>d2h</td><td class=\"num\">([^<]*)</td><td class=\"num\">([^<]*)</td>"
                    r"<td class=\"num\">([^<]*)</td>", page)
    total, single = (float(x.split()[0]) for x in row.groups()[:2])
    assert row.group(3) == f"{single / (total / 4):.3f} per GPU"
    # Transfer: a row per direction and memory kind (series=mem,engine), not the best over all of them.
    assert {"h2d pinned", "bidir pinned", "d2h managed_prefetch"} <= set(dict(h["Transfer"].rows))
    # Alloc's free_host spreads over more than itself between runs: said in words, with no ratio.
    free = re.search(r"<tr><td>free_host</td><td class=\"num\">([^<]*)</td><td class=\"num\">([^<]*)</td>"
                     r"<td class=\"num\">([^<]*)</td>", page)
    assert re.fullmatch(r"310 us, not repeatable at 1 MiB", free.group(1)) and free.group(3) == "-"
    from gpu_bench_tools.report.numbers import NOT_REPEATABLE_LEGEND

    assert NOT_REPEATABLE_LEGEND.replace("'", "&#x27;") in page
    assert not re.search(r"(^|[^0-9.])0 ±", page) and "e+0" not in page
    # The answer, then each machine's figures, then what the machines are, then the details.
    ids = re.findall(r'<h2 id="([^"]+)">', page)
    assert ids[:4] == ["answer", "headlines", "machines", "comparison"] and ids.index("nvlink") > 3
    answer = page.split('<h2 id="answer">')[1].split("<h2")[0]
    assert re.search(r"<tr><td>AllHost d2h</td><td>256 MiB</td><td class=\"num\">2</td><td>2 faster 1\.6\d-1\.6\dx</td>",
                     answer)


def test_each_figure_is_laid_out_without_solving_a_layout_and_drawn_once(tmp_path, monkeypatch):
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from gpu_bench_tools.plot import make_plots
    from gpu_bench_tools.reading.load import benchmark_file_from_doc

    measured, drawn = [], []
    tight, draw = Axes.get_tightbbox, Figure.draw
    monkeypatch.setattr(Axes, "get_tightbbox", lambda self, *a, **k: measured.append(self) or tight(self, *a, **k))
    monkeypatch.setattr(Figure, "draw", lambda self, *a, **k: drawn.append(self) or draw(self, *a, **k))
    files = [benchmark_file_from_doc(f"{g}.json", synth.make_run(schema="2", gpu=g, families=("Transfer", "SmallCopy")))
             for g in ("H100", "H200")]
    plots = make_plots(files, tmp_path, formats=("png",), dpi=60, one_per_kind=True)
    assert len(plots) == 2 and len(drawn) == 2  # matplotlib drew each figure twice when it kept a layout engine
    # No panel measured more than once: matplotlib's constrained layout measured each twice, or four times
    # where the value axis's label had to be broken over two lines (the canvas places panels from estimates).
    assert len(measured) == len({id(ax) for ax in measured})


def test_the_report_draws_its_figures_in_a_process_per_cpu_as_one_process_would(tmp_path, monkeypatch):
    import os

    from gpu_bench_tools.plot import make_plots
    from gpu_bench_tools.reading.load import benchmark_file_from_doc
    from gpu_bench_tools.report.figures import draw_figures

    files = [benchmark_file_from_doc(f"{g}.json", synth.make_run(schema="2", gpu=g, seed=i, reps=1,
                                                                 families=("Transfer", "SmallCopy", "Overlap")))
             for i, g in enumerate(("H100", "H200"))]
    labels = ["H100", "H200"]
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    (tmp_path / "one").mkdir()
    (tmp_path / "each").mkdir()
    one = make_plots(files, tmp_path / "one", formats=("png",), dpi=40, labels=labels, one_per_kind=True)
    each = draw_figures(files, labels, str(tmp_path / "each"), 40)
    assert [p.kind for p in each] == [p.kind for p in one] == ["transfer", "overlap", "small_copy"]
    for a, b in zip(one, each):
        assert Path(a.paths[0]).read_bytes() == Path(b.paths[0]).read_bytes(), a.kind
