import copy
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import synth
from conftest import run_cli
from gpu_bench_tools.cli import plot as cli_plot
from gpu_bench_tools import plot
from gpu_bench_tools.reading.load import benchmark_file_from_doc, load_file, load_timeline


def png_is_a_picture(path):
    from matplotlib.image import imread

    img = imread(path)
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 300
    rgb = img[..., :3]
    ink = (rgb.mean(axis=2) < 0.9).mean()  # share of pixels that are not (nearly) white
    assert 0.01 < ink < 0.6, ink
    assert rgb.std() > 0.05


def svg_text(path):
    root = ET.parse(path).getroot()
    return " ".join(t for t in root.itertext())


@pytest.fixture(scope="module")
def plots(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("plots")
    inputs = [load_file(data["base"]), load_file(data["h200"]), load_timeline(data["timeline"])]
    return plot.make_plots(inputs, out), out


def test_every_kind_is_drawn_as_png_and_svg(plots):
    made, out = plots
    kinds = {p.kind for p in made}
    assert kinds == {"transfer", "overlap", "sync_placement", "small_copy", "host_blocking", "timeline"}
    for p in made:
        assert [Path(x).suffix for x in p.paths] == [".png", ".svg"]
        assert Path(p.paths[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert p.points > 0
    names = {Path(x).name for p in made for x in p.paths}
    assert {"transfer_dir-h2d.png", "transfer_dir-d2d.svg", "sync_placement_op-add.png",
            "small_copy_dir-d2h.png", "overlap_mem-pinned_bytes-67108864_work-10.png"} <= names


def test_pictures_are_not_blank(plots):
    made, _ = plots
    for p in made:
        png_is_a_picture(p.paths[0])


def test_transfer_figure_has_title_units_legend_per_file_and_no_peak_without_a_profile(plots):
    made, out = plots
    text = svg_text(out / "transfer_dir-h2d.svg")
    assert "Transfer bandwidth vs. size: dir: h2d" in text
    # The label of the value axis, too tall for the panel on one line, over two.
    assert "bandwidth (GB/s, 1 GB = 1e9 B)," in text and "higher is better" in text
    assert "transfer size (log2 scale)" in text
    assert "H100 80GB HBM3, driver 580.159.04" in text and "H200, driver 570.86.15" in text
    assert "mem: pinned" in text and "256 MiB" in text and "1 KiB" in text
    # Schema 1 files have no device profile, so no peak line is drawn (docs/json.md).
    assert "peak" not in text and "peak" not in svg_text(out / "transfer_dir-bidir.svg")


def test_host_link_peak_comes_from_the_device_profile(tmp_path):
    doc = synth.make_run(schema="2", families=("Transfer",))
    made = plot.make_plots([benchmark_file_from_doc("t.json", doc)], tmp_path, formats=("svg",))
    by_stem = {p.stem: p for p in made}
    assert set(by_stem) == {"transfer"}  # the descriptor's hint: a panel per dir, a line per mem
    text = svg_text(by_stem["transfer"].paths[0])
    assert "host link peak: PCIe gen5 x16 63.0 GB/s per direction" in text
    assert "host link peak: 2 x PCIe gen5 x16 126.0 GB/s" in text  # the bidir panel
    assert text.count("host link peak") == 3  # h2d, d2h, bidir; not d2d, whose cases stay on the GPU
    assert "dir: h2d" in text and "mem: pinned" in text and "host and device copies" in text
    no_profile = synth.make_run(schema="2", families=("Transfer",), extra_context={
        "profile.host_link_gbps": "unavailable"})
    made = plot.make_plots([benchmark_file_from_doc("u.json", no_profile)], tmp_path / "u", formats=("svg",))
    assert "host link peak" not in svg_text(made[0].paths[0])


def test_overlap_sync_smallcopy_and_timeline_labels(plots):
    _, out = plots
    ov = svg_text(out / "overlap_mem-pinned_bytes-67108864_work-10.svg")
    for s in ("speedup over serial (x)", "efficiency (ideal time / time)", "schedule: breadth_first", "streams",
              "ideal speedup (speedup / efficiency)", "sync: end", "sync: per_stream"):
        assert s in ov
    sp = svg_text(out / "sync_placement_op-add.svg")
    assert "host clock error vs. events (%)" in sp and "CUDA events" in sp and "none" in sp
    sc = svg_text(out / "small_copy_dir-h2d.svg")
    assert "time (us), lower is better" in sc and "thin line without markers: p99" in sc
    tl = svg_text(out / "timeline_timeline_0.svg")
    assert "copy host to device" in tl and "kernel" in tl and "stream 3" in tl and "Overlap/schedule" in tl


def test_one_per_kind_and_cli(data, tmp_path, capsys):
    code, out, err = run_cli(cli_plot.main, [data["base"], data["timeline"], "--out", str(tmp_path), "--one-per-kind",
                                             "--format", "png", "--kind", "transfer", "--kind", "timeline"], capsys)
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["timeline.png", "transfer.png"]
    png_is_a_picture(tmp_path / "transfer.png")


def test_cli_refuses_an_unknown_kind_and_bad_format(tmp_path, capsys):
    only_launch = synth.write(tmp_path / "l.json", synth.doc_from_values(
        {f"Launch/kind:k{i}": [1.0] for i in range(60)}, counter="x"))
    code, _, err = run_cli(cli_plot.main, [only_launch, "--out", str(tmp_path / "o"), "--kind", "peer_matrix"],
                           capsys)
    assert code == 2 and "--kind peer_matrix: not a kind these inputs have; they have launch" in err
    code, out, err = run_cli(cli_plot.main, [only_launch, "--out", str(tmp_path / "o")], capsys)
    assert code == 0 and out.count("launch ") == 2  # 60 cases: two bar charts of at most 40
    code, _, err = run_cli(cli_plot.main, [only_launch, "--out", str(tmp_path / "o"), "--format", "gif"], capsys)
    assert code == 2 and "unknown format gif" in err


def test_other_families_get_a_bar_chart(tmp_path):
    doc = synth.doc_from_values({"Events/op:record": [2.0, 2.1], "Events/op:query": [1.0, 1.1]}, counter="x")
    made = plot.make_plots([benchmark_file_from_doc("e.json", doc)], tmp_path, formats=("svg",))
    assert [p.kind for p in made] == ["events"]
    assert "Events: time per case" in svg_text(made[0].paths[0]) and "op:record" in svg_text(made[0].paths[0])


def test_peer_copies_get_bandwidth_figures(tmp_path):
    cases = {f"Peer/src:{s}/dst:{d}/peer_access:{a}/bytes:{1 << k}": [20.0 + k + (30 if a == "on" else 0)] * 3
             for s, d in ((0, 1), (1, 0)) for a in ("on", "off") for k in range(12, 28, 4)}
    made = plot.make_plots([benchmark_file_from_doc("p.json", synth.doc_from_values(cases))], tmp_path,
                           formats=("svg",))
    assert [p.stem for p in made] == ["peer_matrix_p", "peer_peer_access-on", "peer_peer_access-off"]
    text = svg_text(made[1].paths[0])
    assert "Peer copy bandwidth vs. size: peer_access: on" in text and "src: 0, dst: 1" in text


# ---------------------------------------------------------------------------------------------
# A family at one size: a bar chart with twins side by side; the value axis label fits its panel


def _engine_twins(doc, factor=0.9):
    """The document with an engine:sm twin of every pinned and device case (after all the others, as gpu_bench
    writes them) and an engine:ce twin of every pageable one, each a little slower, and the engines a series."""
    twins = []
    for b in doc["benchmarks"]:
        for mem, engine in (("pinned", "sm"), ("device", "sm"), ("pageable", "ce")):
            if f"/mem:{mem}/" in b["name"]:
                t = copy.deepcopy(b)
                for k in ("name", "run_name"):
                    t[k] = t[k].replace(f"/mem:{mem}/", f"/mem:{mem}/engine:{engine}/")
                if "gbps" in t:
                    t["gbps"] *= factor
                twins.append(t)
    doc["benchmarks"] += twins
    doc["context"]["family.transfer.plot"] = "x=bytes;series=mem,engine;panel=dir"  # as gpu_bench's
    return doc


def _generic(files, family="Transfer"):
    from gpu_bench_tools.plot.points import PlotContext
    from gpu_bench_tools.plot.generic import generic_plots

    ctx = PlotContext(files, [f"file {i}" for i in range(len(files))])
    return generic_plots(ctx, ctx.descriptor(family))


def _overlaps(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_a_family_at_one_size_is_a_bar_chart_with_each_twin_after_its_case(tmp_path):
    from matplotlib.container import BarContainer

    size = 268435456
    files = [benchmark_file_from_doc(f"{n}.json", _engine_twins(synth.make_run(
        schema="2", families=("Transfer",), sizes=(size,), errors=False, seed=seed)))
        for n, seed in (("a", 1), ("b", 2))]
    made = _generic(files)
    assert len(made) == 1  # one chart, not a figure per cache value or a panel per direction
    p, canvas = made[0]
    assert p.kind == "transfer" and p.title == "Transfer: bandwidth per case, bytes: 256 MiB"
    ax = canvas.axes[0][0]
    bars = [b for b in ax.containers if isinstance(b, BarContainer)]
    # Colour: the case's memory kind and engine, the same in both files; hatching: the file.
    hatches, fills = {}, {}
    for b in bars:
        who, series = b.get_label().split(", ", 1)
        hatches.setdefault(who, set()).update(p.get_hatch() for p in b.patches)
        fills.setdefault(series, set()).update(p.get_facecolor() for p in b.patches)
    assert len(hatches) == 2 and hatches["file 0"] != hatches["file 1"]
    assert all(len(h) == 1 for h in hatches.values()) and all(len(c) == 1 for c in fills.values())
    assert len({c for cs in fills.values() for c in cs}) == len(fills)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == len(files[0].ok_cases())
    assert not any("bytes" in t for t in labels)  # the size is in the title
    for n, t in enumerate(labels):
        if "/engine:" in t:  # right after the case it is the twin of
            assert labels[n - 1] == t.replace("/engine:sm", "").replace("/engine:ce", ""), labels
    # By direction, then memory kind in their usual orders (pinned first), not as the file has them.
    assert labels[:4] == ["dir:h2d/mem:pinned", "dir:h2d/mem:pinned/engine:sm", "dir:h2d/mem:pageable",
                          "dir:h2d/mem:pageable/engine:ce"]
    assert labels.index("dir:h2d/mem:managed_prefetch") < labels.index("dir:d2h/mem:pinned")
    assert labels[-2:] == ["dir:d2d/mem:device", "dir:d2d/mem:device/engine:sm"]
    # Each bar says its value, so that a twin's rate compares with its case's at a glance.
    assert len(ax.texts) == 2 * len(labels) and all(float(t.get_text()) > 0 for t in ax.texts)
    made = plot.make_plots(files, tmp_path, formats=("svg",))
    assert [m.stem for m in made] == ["transfer"]
    text = svg_text(made[0].paths[0])
    assert "Transfer: bandwidth per case, bytes: 256 MiB" in text and "dir:bidir/mem:pinned/engine:sm" in text


def test_a_family_at_several_sizes_keeps_its_line_plots_and_one_without_x_its_file_order():
    files = [benchmark_file_from_doc("a.json", _engine_twins(synth.make_run(
        schema="2", families=("Transfer",), errors=False)))]
    made = _generic(files)
    assert [p.stem for p, _ in made] == ["transfer"]
    ax = made[0][1].axes[0][0]
    assert ax.get_xscale() == "log" and not ax.containers
    assert all(len(line.get_xdata()) == len(synth.small_sizes()) for line in ax.get_lines()
               if not line.get_label().startswith("_"))
    # Without an x hint the cases stay in the order the file names them (record before query).
    doc = synth.doc_from_values({"Events/op:record": [2.0, 2.1], "Events/op:query": [1.0, 1.1],
                                 "Events/op:query/timing:off": [0.9, 1.0]}, counter="x")
    (p, canvas), = _generic([benchmark_file_from_doc("e.json", doc)], "Events")
    assert [t.get_text() for t in canvas.axes[0][0].get_yticklabels()] == [
        "op:record", "op:query", "op:query/timing:off"]
    assert p.title == "Events: time per case" and not canvas.axes[0][0].texts


def test_the_value_label_is_on_the_first_column_over_two_lines_where_one_does_not_fit_the_panel():
    files = [benchmark_file_from_doc("a.json", synth.make_run(schema="2", families=("Transfer", "SmallCopy")))]
    for family, label in (("Transfer", "bandwidth (GB/s, 1 GB = 1e9 B),\nhigher is better"),
                          ("SmallCopy", "time (us), lower is better")):  # short enough for one line
        for _, canvas in _generic(files, family):
            canvas.settle()  # as saving the figure does
            canvas.fig.canvas.draw()
            renderer = canvas.fig.canvas.get_renderer()
            title = canvas.fig._suptitle.get_window_extent(renderer)
            visible = [(r, c, ax) for r, row in enumerate(canvas.axes) for c, ax in enumerate(row)
                       if ax.get_visible()]
            assert len(visible) > 1, family
            for r, c, ax in visible:
                assert ax.get_ylabel() == (label if c == 0 else ""), (family, r, c)
                box = ax.get_tightbbox(renderer)
                assert not _overlaps(box, title), (family, r, c)  # the title stays above every panel
                if c == 0:
                    assert ax.yaxis.label.get_window_extent(renderer).height <= ax.get_window_extent(renderer).height
                for r2, c2, other in visible:
                    if (r2, c2) != (r, c):
                        assert not _overlaps(box, other.get_tightbbox(renderer)), (family, r, c, r2, c2)
            # The peak's label stays inside its panel.
            for _, _, ax in visible:
                inside = ax.get_window_extent(renderer)
                for t in ax.texts:
                    b = t.get_window_extent(renderer)
                    assert inside.y0 <= b.y0 and b.y1 <= inside.y1 + 0.5, (family, t.get_text())


def test_a_long_subtitle_is_wrapped_to_a_narrow_figure():
    from gpu_bench_tools.plot.canvas import Canvas, set_title

    canvas = Canvas(1, 1)
    set_title(canvas, "Transfer bandwidth vs. size: cache: cold", "one copy per iteration: host<->GPU for every "
              "host memory kind, both ways at once, and GPU<->GPU")
    canvas.fig.canvas.draw()
    box = canvas.fig._suptitle.get_window_extent(canvas.fig.canvas.get_renderer())
    assert canvas.fig._suptitle.get_text().count("\n") == 2
    assert 0 <= box.x0 and box.x1 <= canvas.fig.bbox.width


# ---------------------------------------------------------------------------------------------
# Intervals: each headline figure with the interval gpu_bench wrote around it (noise_pct)


def _with_noise(doc, pct_of):
    """The document with each entry's noise_pct set to pct_of(name), or removed where that is None."""
    for e in doc["benchmarks"]:
        pct = pct_of(e["name"])
        e.pop("noise_pct", None)
        if pct is not None:
            e["noise_pct"] = pct
    return doc


def _bands(ax):
    from matplotlib.collections import PolyCollection

    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def _whisker_segments(ax):
    """Every drawn whisker of the axes' error bars as ((x0, y0), (x1, y1)); undrawn (NaN) ones left out."""
    import numpy as np
    from matplotlib.container import ErrorbarContainer

    out = []
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer):
            for lines in c.lines[2]:
                out += [tuple(map(tuple, s)) for s in lines.get_segments() if len(s) == 2 and np.all(np.isfinite(s))]
    return out


def _band_at(band, x):
    """(lowest, highest) y of a fill_between band where it crosses x."""
    ys = [y for vx, y in band.get_paths()[0].vertices if vx == pytest.approx(x)]
    return min(ys), max(ys)


def _noise_of_size(name):
    """3% at 64 B, none at 1 KiB (as an older file's case), 1% elsewhere."""
    return 3.0 if "/bytes:64/" in name else None if "/bytes:1024/" in name else 1.0


def test_line_plots_shade_the_noise_pct_interval_of_each_headline_figure():
    doc = _with_noise(synth.make_run(schema="2", families=("SmallCopy",), reps=1, errors=False), _noise_of_size)
    f = benchmark_file_from_doc("a.json", doc)
    (_, canvas), = _generic([f], "SmallCopy")
    checked = 0
    for ax in (a for row in canvas.axes for a in row if a.get_visible()):
        direction = ax.get_title().split(": ")[1]
        bands = _bands(ax)
        lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_") and "(p99)" not in ln.get_label()]
        assert len(bands) == len(lines) == 2, direction  # a band per line (pinned, pageable)
        for line, band in zip(lines, bands):
            mem = line.get_label().rsplit("mem: ", 1)[1]
            for x, y in zip(line.get_xdata(), line.get_ydata()):
                case = f.cases[f"SmallCopy/dir:{direction}/mem:{mem}/bytes:{int(x)}"]
                assert y == pytest.approx(case.center("real_time"))
                pct = _noise_of_size(case.key + "/")
                lo, hi = _band_at(band, x)
                if pct is None:  # no noise_pct: the band closes on the line
                    assert lo == pytest.approx(y) and hi == pytest.approx(y)
                else:
                    assert lo == pytest.approx(y * (1 - pct / 100)) and hi == pytest.approx(y * (1 + pct / 100))
                checked += 1
    assert checked == 20
    assert "band: interval of the next run's figure (noise_pct)" in canvas.fig.legends[0].get_title().get_text()


def test_a_file_without_noise_pct_gets_no_interval():
    doc = synth.make_run(families=("SmallCopy", "Transfer"), reps=1, errors=False)  # schema 1: no noise_pct
    f = benchmark_file_from_doc("old.json", doc)
    for family in ("SmallCopy", "Transfer"):
        for _, canvas in _generic([f], family):
            assert not any(_bands(ax) or _whisker_segments(ax) for row in canvas.axes for ax in row), family
            legend = canvas.fig.legends[0]
            assert not any("noise_pct" in t.get_text() for t in legend.get_texts() + [legend.get_title()])
    one_size = synth.make_run(families=("Transfer",), reps=1, errors=False, sizes=(1 << 28,))
    (_, canvas), = _generic([benchmark_file_from_doc("old.json", one_size)])
    ax = canvas.axes[0][0]
    assert not _whisker_segments(ax) and "noise_pct" not in ax.get_xlabel()


def test_bar_charts_have_a_whisker_per_figure_with_noise_pct_and_none_without():
    size = 1 << 28

    def pct_of(name):
        return None if "/mem:pageable/" in name else 2.0 if "/dir:h2d/" in name else 0.5

    files = [benchmark_file_from_doc(f"{n}.json", _with_noise(synth.make_run(
        schema="2", families=("Transfer",), sizes=(size,), errors=False, reps=1, seed=seed), pct_of))
        for n, seed in (("a", 1), ("b", 2))]
    (_, canvas), = _generic(files)
    ax = canvas.axes[0][0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    whiskers = _whisker_segments(ax)
    with_noise = [k for k in labels if "mem:pageable" not in k]
    assert len(whiskers) == len(files) * len(with_noise)
    from matplotlib.container import BarContainer

    checked = 0
    for container in (b for b in ax.containers if isinstance(b, BarContainer)):
        f = files[int(container.get_label().split(",")[0].split()[1])]  # "file 1, mem: pinned"
        for bar in container.patches:
            y = bar.get_y() + bar.get_height() / 2
            k = labels[round(y)]
            checked += 1
            case = f.cases[f"Transfer/{k}/bytes:{size}"]
            v = case.center("gbps")
            assert bar.get_width() == pytest.approx(v)
            mine = [s for s in whiskers if s[0][1] == pytest.approx(y)]
            pct = pct_of(case.key + "/")
            if pct is None:
                assert not mine, k
            else:
                (x0, _), (x1, _) = mine[0]
                assert (x0, x1) == (pytest.approx(v * (1 - pct / 100)), pytest.approx(v * (1 + pct / 100))), k
    assert checked == len(files) * len(labels)
    assert "whiskers: interval of the next run's figure (noise_pct)" in ax.get_xlabel()
    # Each value is written past its whisker, not across it.
    canvas.fig.canvas.draw()
    renderer = canvas.fig.canvas.get_renderer()
    right = max(ax.transData.transform((x1, 0))[0] for (_, _), (x1, _) in whiskers)
    assert right <= max(t.get_window_extent(renderer).x0 for t in ax.texts) + 0.5


def test_only_the_headline_gets_an_interval_in_a_family_figure():
    from gpu_bench_tools.plot.families.overlap import overlap_plots
    from gpu_bench_tools.plot.families.sync_placement import sync_placement_plots

    # Overlap's descriptor heads it with speedup here: the speedup row is banded, the efficiency row is not.
    doc = _with_noise(synth.make_run(schema="2", families=("Overlap",), reps=1), lambda n: 2.0)
    f = benchmark_file_from_doc("o.json", doc)
    (_, canvas), = overlap_plots([f], ["o"])
    for ax in canvas.axes[0]:
        assert _bands(ax)
        for line, band in zip([ln for ln in ax.get_lines() if not ln.get_label().startswith("_")], _bands(ax)):
            x, y = line.get_xdata()[-1], line.get_ydata()[-1]
            assert _band_at(band, x) == (pytest.approx(y * 0.98), pytest.approx(y * 1.02))
    assert not any(_bands(ax) for ax in canvas.axes[1])
    # As gpu_bench heads it (gbps, which the figure does not draw): no band at all.
    doc["context"]["family.overlap.headline"] = "gbps"
    (_, canvas), = overlap_plots([benchmark_file_from_doc("o.json", doc)], ["o"])
    assert not any(_bands(ax) for row in canvas.axes for ax in row)

    # SyncPlacement's headline here is error_pct: whiskers on the error panel only.
    doc = _with_noise(synth.make_run(schema="2", families=("SyncPlacement",), reps=1), lambda n: 5.0)
    f = benchmark_file_from_doc("s.json", doc)
    made = sync_placement_plots([f], ["s"])
    assert len(made) == 2
    for _, canvas in made:
        ax_t, ax_e = canvas.axes[0]
        assert not _whisker_segments(ax_t)
        heights = sorted(abs(b.get_height()) for b in ax_e.patches)
        spans = sorted(abs(y1 - y0) for (_, y0), (_, y1) in _whisker_segments(ax_e))
        assert spans == pytest.approx([h * 0.1 for h in heights])
        assert "noise_pct" in ax_e.get_ylabel() and "noise_pct" not in ax_t.get_ylabel()


def test_all_host_aggregate_bar_has_its_interval_and_each_gpus_bar_none():
    from gpu_bench_tools.plot.families.all_host import all_host_plots

    doc = _with_noise(synth.make_multi_run(gpus=2, reps=1, families=("AllHost",)), lambda n: 4.0)
    f = benchmark_file_from_doc("m.json", doc)
    (_, canvas), = all_host_plots([f], ["m"])
    for ax in canvas.axes[0]:
        aggregate = ax.patches[0]
        v = aggregate.get_height()
        (x0, y0), (x1, y1) = _whisker_segments(ax)[0]
        assert len(_whisker_segments(ax)) == 1  # the aggregate's; no noise is known for a GPU's own rate
        assert x0 == pytest.approx(aggregate.get_x() + aggregate.get_width() / 2)
        assert (y0, y1) == (pytest.approx(v * 0.96), pytest.approx(v * 1.04))
    assert "whiskers: interval of the next run's figure (noise_pct)" in canvas.fig._suptitle.get_text().replace("\n", " ")


LATENCY_DESCRIPTOR = dict(  # as gpu_bench declares the family
    name="Latency", scope="single_gpu", axes="mem,numa,pattern,bytes", headline="latency_ns", unit="ns",
    better="lower", headline_kind="time", host_link="mem:pinned|mem:registered|mem:managed",
    plot="x=bytes;series=mem,numa,pattern;xlabel=footprint", host_side="no")


def _latency_doc():
    """The default Latency matrix: device from L1 to HBM, host kinds across the link; 2% noise, 5% at 1 GiB."""
    tiers = {16 << 10: 30.0, 1 << 20: 250.0, 32 << 20: 300.0, 1 << 30: 650.0}
    cases = {}
    for pattern, slower in (("stride", 1.0), ("random", 1.2)):
        for n, ns in tiers.items():
            cases[f"Latency/mem:device/pattern:{pattern}/bytes:{n}"] = [ns * slower]
        for mem, ns in (("pinned", 1100.0), ("registered", 1120.0), ("managed", 1300.0)):
            for n in (1 << 20, 256 << 20):
                cases[f"Latency/mem:{mem}/pattern:{pattern}/bytes:{n}"] = [ns * slower * (1.1 if n > 1 << 20 else 1)]
    doc = synth.doc_from_values(cases, counter="latency_ns", time_unit="us", schema="2")
    for e in doc["benchmarks"]:
        e["real_time"] = e["latency_ns"] * 256 / 1000  # 256 loads, in us
        e["noise_pct"] = 5.0 if "/bytes:1073741824/" in e["name"] else 2.0
    for k, v in LATENCY_DESCRIPTOR.items():
        doc["context"][f"family.latency.{k}"] = v
    return doc


def test_latency_is_drawn_against_the_footprint_on_a_log_axis_a_line_per_kind_and_pattern_with_intervals(tmp_path):
    f = benchmark_file_from_doc("latency.json", _latency_doc())
    made = _generic([f], "Latency")
    assert len(made) == 1  # one figure, one panel: the whole staircase together
    p, canvas = made[0]
    ax = canvas.axes[0][0]
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel().startswith("footprint") and "vs. footprint" in p.title
    lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    labels = sorted(ln.get_label().split(", ", 1)[1] for ln in lines)
    assert labels == sorted(f"mem: {m}, pattern: {pt}" for m in ("device", "pinned", "registered", "managed")
                            for pt in ("stride", "random"))
    bands = _bands(ax)
    assert len(bands) == len(lines) == 8
    for line, band in zip(lines, bands):
        mem, pattern = (part.split(": ")[1] for part in line.get_label().split(", ")[1:])
        xs = list(line.get_xdata())
        assert len(xs) == (4 if mem == "device" else 2)
        for x, y in zip(xs, line.get_ydata()):
            case = f.cases[f"Latency/mem:{mem}/pattern:{pattern}/bytes:{int(x)}"]
            assert y == pytest.approx(case.center("latency_ns"))
            pct = 5.0 if int(x) == 1 << 30 else 2.0
            lo, hi = _band_at(band, x)
            assert lo == pytest.approx(y * (1 - pct / 100)) and hi == pytest.approx(y * (1 + pct / 100))
    assert "ns" in ax.get_ylabel() or "ns" in " ".join(t.get_text() for t in canvas.fig.texts)
    # The plot tool and the report draw it.
    out = plot.make_plots([f], tmp_path, formats=("svg",))
    assert "latency" in [m.stem for m in out]


def test_latency_numa_twins_are_lines_of_their_own_in_the_same_figure():
    doc = _latency_doc()
    twins = []
    for b in doc["benchmarks"]:
        if "/mem:pinned/" in b["name"]:
            t = copy.deepcopy(b)
            for k in ("name", "run_name"):
                t[k] = t[k].replace("/mem:pinned/", "/mem:pinned/numa:remote/")
            t["latency_ns"] *= 1.15
            twins.append(t)
    doc["benchmarks"] += twins
    made = _generic([benchmark_file_from_doc("latency.json", doc)], "Latency")
    assert len(made) == 1
    labels = [ln.get_label() for ln in made[0][1].axes[0][0].get_lines() if not ln.get_label().startswith("_")]
    assert len(labels) == 10 and sum("numa: remote" in lab for lab in labels) == 2


def test_the_report_shows_the_latency_staircase_and_its_headline():
    from gpu_bench_tools.report.page import build_report

    page = build_report([benchmark_file_from_doc("latency.json", _latency_doc())], dpi=40)
    assert 'id="plots-latency"' in page and "Latency latency_ns vs. footprint" in page and "<img" in page
    assert "Latency: best latency_ns (lower is better" in page


def test_each_lines_legend_says_what_change_its_runs_can_show():
    # gpu_bench's detectable_pct (docs/methodology.md): the legend gives each line's median, so a reader knows
    # what a "same" verdict between two such runs is worth; a file without it says nothing of it.
    doc = _with_noise(synth.make_run(schema="2", families=("SmallCopy",), reps=1, errors=False), _noise_of_size)
    for e in doc["benchmarks"]:
        e["detectable_pct"] = 2.5 if "/mem:pageable/" in e["name"] else 1.0
    (_, canvas), = _generic([benchmark_file_from_doc("a.json", doc)], "SmallCopy")
    legend = [t.get_text() for t in canvas.fig.legends[0].get_texts()]
    assert any(t.endswith("mem: pinned (detects \u22651%)") for t in legend), legend
    assert any(t.endswith("mem: pageable (detects \u22652.5%)") for t in legend), legend
    plain = synth.make_run(schema="2", families=("SmallCopy",), reps=1, errors=False)
    (_, canvas), = _generic([benchmark_file_from_doc("b.json", plain)], "SmallCopy")
    assert not any("detects" in t.get_text() for t in canvas.fig.legends[0].get_texts())


# ---------------------------------------------------------------------------------------------
# Figures a reader reads at a glance: two real default runs of two machines (an H100 and an H200)


REAL_PAIR = ("results/aa/h100_default_7c29fd0/default_h100_run1.json",
             "results/aa/h200_default_b010260/default_h200_run1.json")
MOST_ENTRIES = 12


def _figures(files):
    """Every figure make_plots draws for the files, with its canvas, laid out as saving lays it out."""
    out = [pc for _, make in plot._makers(files, []) for pc in make()]
    for _, canvas in out:
        canvas.settle()
    return out


@pytest.fixture(scope="module")
def real_figures():
    from conftest import REPO

    files = [load_file(REPO / p) for p in REAL_PAIR]
    return files, _figures(files)


def _panels(canvas):
    return [ax for row in canvas.axes for ax in row if ax.get_visible()]


def _entries(canvas):
    (legend,) = canvas.fig.legends
    return [(t.get_text(), h) for t, h in zip(legend.get_texts(), legend.legend_handles) if t.get_text()]


def _data_lines(ax):
    """The lines that draw figures: each labelled (file and series) and with markers."""
    return [ln for ln in ax.get_lines() if not ln.get_label().startswith("_") and ln.get_marker() not in ("", "None")]


def _bar_groups(ax):
    from matplotlib.container import BarContainer

    return [b for b in ax.containers if isinstance(b, BarContainer)]


def test_every_figure_has_one_legend_of_at_most_a_dozen_entries(real_figures):
    _, figures = real_figures
    assert {p.kind for p, _ in figures} >= {"transfer", "events", "overlap", "small_copy", "sync_placement"}
    for p, canvas in figures:
        assert not any(ax.get_legend() for ax in _panels(canvas)), p.stem  # none per panel
        assert 2 <= len(_entries(canvas)) <= MOST_ENTRIES, (p.stem, [t for t, _ in _entries(canvas)])


def test_a_gpu_is_a_colour_while_the_colours_are_few_else_a_figure_of_its_own():
    doc = synth.make_run(schema="2", families=("Transfer",), errors=False, reps=1)
    doc["benchmarks"] = [dict(b, name=f"{b['name']}/device:{d}", run_name=f"{b['run_name']}/device:{d}")
                         for b in doc["benchmarks"] for d in range(8)]
    figures = _generic([benchmark_file_from_doc("eight.json", doc)])
    assert len(figures) == 8  # a memory kind is a colour: 7 kinds times 8 GPUs are too many to tell apart
    for n, (p, canvas) in enumerate(figures):
        assert "device: " + str(n) in p.title and len(_entries(canvas)) <= MOST_ENTRIES
    doc["benchmarks"] = [b for b in doc["benchmarks"] if "/mem:pinned/" in b["name"]]
    (p, canvas), = _generic([benchmark_file_from_doc("eight.json", doc)])
    texts = [t for t, _ in _entries(canvas)]
    assert [f"mem: pinned, GPU {d}" in texts for d in range(8)] == [True] * 8


def _style(handle):
    from matplotlib.patches import Patch

    return handle.get_hatch() if isinstance(handle, Patch) else (handle.get_linestyle(), handle.get_marker())


def test_each_file_has_a_style_of_its_own_that_the_legend_names(real_figures):
    from gpu_bench_tools.reading.load import file_labels

    files, figures = real_figures
    labels = file_labels(files)
    for p, canvas in figures:
        # Each file's lines in one line style and marker, its bars in one hatching, none another file's.
        styles = {}
        for ax in _panels(canvas):
            for i, lab in enumerate(labels):
                styles.setdefault(i, set()).update(
                    [(ln.get_linestyle(), ln.get_marker()) for ln in _data_lines(ax) if ln.get_label().startswith(lab)]
                    + [b.patches[0].get_hatch() for b in _bar_groups(ax) if b.get_label().startswith(lab)])
            # Two lines (or bar groups) of one colour in one panel never share the style.
            drawn = [(ln.get_color(), ln.get_linestyle()) for ln in _data_lines(ax)]
            assert len(drawn) == len(set(drawn)), (p.stem, ax.get_title())
            bars = [(b.patches[0].get_facecolor(), b.patches[0].get_hatch()) for b in _bar_groups(ax) if b.patches]
            assert len(bars) == len(set(bars)), (p.stem, ax.get_title())
        assert styles[0] and styles[1] and not styles[0] & styles[1], (p.stem, styles)
        assert all(len({type(x) for x in s}) == len(s) for s in styles.values()), (p.stem, styles)
        # The legend has an entry per file in (one of) its styles.
        for i, lab in enumerate(labels):
            (handle,) = [h for t, h in _entries(canvas) if t.startswith(lab)]
            assert _style(handle) in styles[i], (p.stem, lab)
        title = canvas.fig.legends[0].get_title().get_text()
        assert "line style and marker: file" in title or "hatching: file" in title, p.stem


def _figures_drawn(ax) -> tuple[list[float], str]:
    """The figures a panel draws (its lines' medians, its bars' lengths) and the axis they are on."""
    values, which = [], "y"
    for ln in _data_lines(ax):
        values += [float(v) for v in ln.get_ydata()]
    for b in _bar_groups(ax):
        horizontal = b.orientation == "horizontal"
        which = "x" if horizontal else "y"
        values += [r.get_width() if horizontal else r.get_height() for r in b.patches]
    return [v for v in values if v == v], which


def test_an_axis_is_logarithmic_where_its_figures_span_two_decades_and_alike_in_sibling_panels(real_figures):
    _, figures = real_figures
    logs = set()
    for p, canvas in figures:
        for row in canvas.axes:
            panels = [ax for ax in row if ax.get_visible()]
            # Panels labelled once for the row (the first) show one quantity: one scale and one range.
            if all(not ax.get_ylabel() for ax in panels[1:]):
                assert len({ax.get_yscale() for ax in panels}) == 1, p.stem
                assert len({ax.get_ylim() for ax in panels}) == 1, p.stem
        for ax in _panels(canvas):
            values, which = _figures_drawn(ax)
            scale = ax.get_xscale() if which == "x" else ax.get_yscale()
            if values and min(values) > 0 and max(values) >= 100 * min(values):
                assert scale == "log", (p.stem, ax.get_title())
                logs.add(p.stem)
    assert {"transfer", "events"} <= logs  # h2d and d2h as bidir; elapsed_resolution's 5 ms beside 0.3 us


def test_overlap_draws_a_placement_run_at_one_stream_count_as_bars_not_a_lone_point(real_figures):
    files, figures = real_figures
    overlap = [(p, canvas) for p, canvas in figures if p.kind == "overlap"]
    assert overlap
    for p, canvas in overlap:
        for ax in _panels(canvas):
            lines = _data_lines(ax)
            assert not lines or max(len(ln.get_xdata()) for ln in lines) > 1, (p.stem, ax.get_title())
    # Every case is drawn: a speedup per case, on a line or a bar.
    cases = sum(1 for f in files for c in f.ok_cases() if c.family == "Overlap" and c.has_metric("speedup"))
    assert sum(p.points for p, _ in overlap) == cases
    sweep = next(canvas for p, canvas in overlap if p.stem == "overlap_mem-pinned_bytes-536870912_work-1")
    assert [ax.get_title() for ax in sweep.axes[0]] == ["sync: end", "each sync at one stream count"]
    assert [t.get_text() for t in sweep.axes[0][1].get_xticklabels()] == ["end", "per_stream", "per_chunk",
                                                                           "event_join"]


def test_figures_are_laid_out_without_a_layout_engine_and_nothing_overlaps(real_figures):
    _, figures = real_figures
    for p, canvas in figures:
        assert canvas.fig.get_layout_engine() is None, p.stem
        canvas.fig.set_dpi(30)  # enough to place every text; quicker to draw
        canvas.fig.canvas.draw()
        renderer = canvas.fig.canvas.get_renderer()
        legend = canvas.fig.legends[0].get_window_extent(renderer)
        title = canvas.fig._suptitle.get_window_extent(renderer)
        page = canvas.fig.bbox
        for box in (legend, title):
            assert page.x0 <= box.x0 + 1 and box.x1 <= page.x1 + 1 and page.y0 <= box.y0 + 1, p.stem
        for ax in _panels(canvas):
            box = ax.get_tightbbox(renderer)
            assert not _overlaps(box, legend) and not _overlaps(box, title), (p.stem, ax.get_title())
