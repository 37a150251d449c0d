import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import synth
from conftest import run_cli
from gpu_bench_tools import cli_plot, plot
from gpu_bench_tools.load import benchmark_file_from_doc, load_file, load_timeline


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
    assert "bandwidth (GB/s, 1 GB = 1e9 B), higher is better" in text and "transfer size (log2 scale)" in text
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
    assert "time (us), lower is better" in sc and "(p99)" in sc
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
