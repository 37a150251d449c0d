"""Multi-GPU runs: --device=all names, Peer / PeerLatency / AllHost, GPU count and topology in the context."""

import json
import re
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import synth
from conftest import run_cli
from gpu_bench_tools.cli import compare as cli_compare, history as cli_history, plot as cli_plot, report as cli_report
from gpu_bench_tools.history import render as history_render
from gpu_bench_tools.reading import load, multigpu
from gpu_bench_tools import plot
from gpu_bench_tools.compare.verdicts import compare
from gpu_bench_tools.compare.render import render_table
from gpu_bench_tools.reading.load import benchmark_file_from_doc, load_file, metric_for, parse_name
from gpu_bench_tools.report.page import build_report
from gpu_bench_tools.report.headlines import headlines


def svg_text(path):
    return " ".join(ET.parse(path).getroot().itertext())


def png_is_a_picture(path):
    from matplotlib.image import imread

    img = imread(path)
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 300
    rgb = img[..., :3]
    ink = (rgb.mean(axis=2) < 0.9).mean()
    assert 0.01 < ink < 0.8, ink
    assert rgb.std() > 0.05


def verdicts(result, i=1):
    return {r.key: r.versus[i].verdict for r in result.rows}


# ---------------------------------------------------------------------------------------------
# load


def test_device_axis_is_an_axis_like_any_other():
    n = parse_name("Transfer/dir:h2d/mem:pinned/bytes:1048576/device:1/manual_time")
    assert n.family == "Transfer" and n.timing == "manual_time"
    assert n.axes == (("dir", "h2d"), ("mem", "pinned"), ("bytes", "1048576"), ("device", "1"))
    assert n.key == "Transfer/dir:h2d/mem:pinned/bytes:1048576/device:1"
    p = parse_name("Peer/src:0/dst:3/peer_access:off/dir:bidir/bytes:268435456/manual_time")
    assert p.family == "Peer" and dict(p.axes) == {"src": "0", "dst": "3", "peer_access": "off", "dir": "bidir",
                                                   "bytes": "268435456"}


def test_multi_gpu_file_loads_per_device_and_picks_each_familys_metric(data):
    f = load_file(data["multi4"])
    per_device = [c for c in f.cases.values() if c.family == "Transfer" and c.axis("bytes") == "268435456"
                  and c.axis("dir") == "h2d" and c.axis("mem") == "pinned"]
    assert sorted(c.axis("device") for c in per_device) == ["0", "1", "2", "3"]
    assert all(len(c.samples) == 5 and c.center("gbps") > 50 for c in per_device)
    fams = {c.family for c in f.cases.values()}
    assert fams == {"Transfer", "Peer", "PeerLatency", "AllHost"}
    by_fam = {c.family: c for c in f.cases.values()}
    assert {fam: metric_for(f, c, None) for fam, c in by_fam.items()} == {
        "Transfer": "gbps", "Peer": "gbps", "AllHost": "gbps", "PeerLatency": "real_time"}
    allhost = f.cases["AllHost/dir:h2d/bytes:268435456"]
    assert allhost.center("gpus") == 4 and allhost.has_metric("gbps_gpu3") and not allhost.has_metric("gbps_gpu4")
    lat = f.cases["PeerLatency/src:0/dst:1/peer_access:on/bytes:4"]
    assert lat.center("latency_us") == pytest.approx(lat.center("time"), rel=1e-9)  # time unit us


def test_gpu_count_summary_and_topology_from_the_context(data):
    f, g, one = load_file(data["multi4"]), load_file(data["multi4_slow_link"]), load_file(data["base"])
    assert load.gpu_count(f) == 4 and load.gpu_count(one) == 1
    assert load.gpu_summary(f) == "4 x H100 80GB HBM3" and load.gpu_summary(one) == "1 x H100 80GB HBM3"
    assert load.machine_label(f) == "4 x H100 80GB HBM3, driver 580.159.04"
    assert load.machine_label(one) == "H100 80GB HBM3, driver 580.159.04"
    topo = load.topology(g)
    assert len(topo) == 12
    assert topo[(0, 1)] == {"peer_access": "yes", "perf_rank": "1", "native_atomics": "no", "link": "pcie_switch"}
    assert topo[(2, 3)]["link"] == "nvlink"
    assert load.gpu_fact(f, 3, "pci_bus_id") == "0000:5d:00.0" and load.gpu_fact(f, 0, "cc") == "9.0"
    # A single-GPU file shows no multi-GPU rows at all.
    assert [lab for lab, _ in load.context_rows([one])] == [lab for _, lab in load.FACTS]


@settings(max_examples=60, deadline=None)
@given(ctx=st.dictionaries(st.sampled_from(["gpu.count", "gpu.0.name", "gpu.7.numa_node", "gpu.99999.name",
                                            "topology.0-1.link", "topology.1-0.peer_access", "topology.0-0.link",
                                            "topology.5-2.perf_rank", "topology.0-1.other"]),
                           st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
                           | st.lists(st.integers(), max_size=2), max_size=5))
def test_any_multi_gpu_context_loads_cleanly(ctx):
    doc = synth.make_run(families=("SyncPlacement",), reps=1)
    doc["context"].update(ctx)
    f = benchmark_file_from_doc("m.json", doc)
    n = load.gpu_count(f)
    assert n is None or 1 <= n <= load.MAX_GPUS
    load.gpu_summary(f), load.topology(f), load.file_labels([f]), load.context_rows([f, f])


# ---------------------------------------------------------------------------------------------
# compare


def test_a_slower_peer_link_is_flagged_where_it_is_slower(data, capsys):
    res = compare([load_file(data["multi4"]), load_file(data["multi4_slow_link"])])
    v = verdicts(res)
    on_01 = re.compile(r"^Peer(Latency)?/src:(0/dst:1|1/dst:0)/peer_access:on/")
    slowed = {k for k in v if on_01.search(k)}
    assert len(slowed) == 2 * 2 * 3 + 2  # both ways, oneway and bidir, three sizes; and the two latencies
    assert {v[k] for k in slowed} == {"slower"}
    assert {v[k] for k in v if k not in slowed} == {"same"}, [k for k in v if k not in slowed and v[k] != "same"]
    fam = {f.family: f for f in res.families}
    assert fam["Peer"].geomean_speed[1] < 0.95 and fam["PeerLatency"].geomean_speed[1] < 0.97
    assert fam["AllHost"].geomean_speed[1] == pytest.approx(1.0, abs=0.01)
    assert fam["Transfer"].geomean_speed[1] == pytest.approx(1.0, abs=0.01)
    assert fam["Peer"].counts[1] == {"slower": 12, "same": 132}

    head = render_table(res).split("\n\n")[2]  # after the files and the answer
    assert re.search(r"2 GPU pairs \(0->1, 1->0\)\s+nvlink, p2p yes, rank 0, atomics yes\s+pcie_switch, p2p yes, "
                     r"rank 1, atomics no", head)
    assert "0->2" not in head and "GPUs " not in head  # only what differs

    code, _, err = run_cli(cli_compare.main, ["--one-round", data["multi4"], data["multi4_slow_link"], "--fail-on-regression", "5"],
                           capsys)
    assert code == 1 and "14 regression(s) beyond 5%" in err
    assert "Peer/src:0/dst:1/peer_access:on/dir:oneway/bytes:268435456" in err


def test_device_indexed_cases_compare_per_device(data, tmp_path):
    slow = synth.make_multi_run(gpus=4, seed=12, slow={r"^Transfer/dir:h2d/mem:pinned/.*/device:2$": 0.9},
                                families=("Transfer",))
    a = load_file(data["multi4"])
    b = benchmark_file_from_doc("slow.json", slow)
    res = compare([a, b], case_filter="^Transfer/")
    v = verdicts(res)
    assert {k for k, x in v.items() if x != "same"} == {
        f"Transfer/dir:h2d/mem:pinned/bytes:{n}/device:2" for n in (1 << 12, 1 << 18, 1 << 24, 1 << 28)}
    assert {x for k, x in v.items() if "device:2" in k and "h2d/mem:pinned" in k} == {"slower"}


def test_gpu_count_difference_is_in_the_header_and_missing_devices_are_listed(data):
    res = compare([load_file(data["multi2"]), load_file(data["multi4"])], case_filter="^Transfer/dir:h2d")
    diff = dict(res.context_diff)
    assert diff["GPUs"] == ["2", "4"]
    assert diff["GPU 2"] == ["-", "NVIDIA H100 80GB HBM3"] and diff["GPU 1 NUMA node"] == ["1", "0"]
    assert diff["GPU 2 -> 3"] == ["-", "nvlink, p2p yes, rank 0, atomics yes"]
    only = dict(res.only_in)
    assert only["Transfer/dir:h2d/mem:pinned/bytes:4096/device:3"] == [1]
    assert all(r.versus[1].verdict == "same" for r in res.rows)


def test_a_file_without_device_axis_against_one_with_it_gets_a_note(data):
    res = compare([load_file(data["base"]), load_file(data["multi2"])])
    assert any("/device:N axis" in w for w in res.warnings)
    assert not any("/device:N axis" in w for w in compare([load_file(data["multi4"]),
                                                           load_file(data["multi4_night2"])]).warnings)


def test_two_nights_of_a_multi_gpu_machine_are_the_same(data):
    res = compare([load_file(data["multi4"]), load_file(data["multi4_night2"])])
    assert set(verdicts(res).values()) == {"same"} and not res.context_diff


# ---------------------------------------------------------------------------------------------
# plot


MULTI_KINDS = ("transfer", "peer_matrix", "peer_latency", "all_host")


@pytest.fixture(scope="module")
def multi_plots(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("multi_plots")
    files = [load_file(data["multi4"]), load_file(data["multi4_slow_link"])]
    return plot.make_plots(files, out, kinds=MULTI_KINDS, dpi=70), out


def test_multi_gpu_kinds_are_drawn_as_png_and_svg(multi_plots):
    made, out = multi_plots
    assert [p.kind for p in made] == ["transfer", "transfer", "peer_matrix", "peer_matrix", "peer_latency",
                                      "peer_latency", "all_host"]
    assert [p.stem for p in made] == ["transfer_dir-h2d", "transfer_dir-d2h", "peer_matrix_multi4",
                                      "peer_matrix_multi4_slow_link", "peer_latency_multi4",
                                      "peer_latency_multi4_slow_link", "all_host"]
    for p in made:
        assert [Path(x).suffix for x in p.paths] == [".png", ".svg"]
        assert Path(p.paths[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.points > 0
        png_is_a_picture(p.paths[0])


def test_peer_matrix_is_annotated_per_pair_with_the_diagonal_blank(multi_plots):
    made, out = multi_plots
    p = next(p for p in made if p.stem == "peer_matrix_multi4_slow_link")
    assert p.points == 4 * 12  # four panels (peer access on/off x one way/both ways), 12 ordered pairs each
    assert p.title.startswith("Peer copy bandwidth (GB/s): 4 x H100 80GB HBM3")
    text = svg_text(p.paths[1])
    for s in ("Peer copy bandwidth (GB/s): 4 x H100 80GB HBM3", "multi4_slow_link.json, driver 580.159.04",
              "peer access on, one way, 256 MiB", "peer access off, both ways at once (sum), 256 MiB",
              "destination", "source", "GPU 3", "bandwidth (GB/s, 1 GB = 1e9 B), higher is better"):
        assert s in text, s
    # The pairs on the PCIe switch are labelled as such in the peer-access-on panels only.
    assert text.count("pcie_switch") == 4 and text.count("nvlink") == 2 * 10
    lat = svg_text(out / "peer_latency_multi4.svg")
    assert "Peer copy latency (us): 4 x H100 80GB HBM3" in lat and "peer access on, 4 B" in lat
    assert "latency (us), lower is better" in lat


def test_peer_matrix_shows_failed_pairs(tmp_path):
    doc = synth.make_multi_run(gpus=3, links={(1, 2): "system"}, reps=1, families=("Peer", "PeerLatency"),
                               peer_sizes=(1 << 20,))
    made = plot.make_plots([benchmark_file_from_doc("sys.json", doc)], tmp_path, formats=("svg",),
                           kinds=("peer_matrix", "peer_latency"))
    assert [p.kind for p in made] == ["peer_matrix", "peer_latency"]
    assert made[0].points == 4 * 6 - 2 * 2  # GPU 1 <-> GPU 2 fail with peer access on, one way and both ways
    assert made[1].points == 2 * 6 - 2
    text = svg_text(made[0].paths[0])
    assert text.count("failed") == 4 and "system" not in text  # a failed pair has no figure to label
    assert "3 x H100 80GB HBM3" in text and "1 MiB" in text


def test_peer_matrix_keeps_each_way_of_copying_apart(tmp_path):
    # A pair's plain cell is its copy engines' write; the SMs' and the reads' figures have panels of their own.
    f = benchmark_file_from_doc("variants.json", synth.make_multi_run(gpus=2, seed=5, reps=1, families=("Peer",),
                                                                      peer_sizes=(1 << 28,), variants=True))
    from gpu_bench_tools.plot.heatmap import _pair_grid
    grid = _pair_grid(f, "Peer", max)
    assert grid[(("on", ()), "oneway")][1][(0, 1)].key == "Peer/src:0/dst:1/peer_access:on/dir:oneway/bytes:268435456"
    assert grid[(("on", ("access:read", "engine:sm")), "oneway")][1][(1, 0)].key == \
        "Peer/src:1/dst:0/peer_access:on/dir:oneway/access:read/engine:sm/bytes:268435456"
    made = plot.make_plots([f], tmp_path, formats=("svg",), kinds=("peer_matrix",))
    # Peer access on: one way and both ways, each also by SMs; one way read, by copy engines and by SMs; off:
    # one way and both ways. Two ordered pairs each.
    assert made[0].points == 8 * 2
    text = svg_text(made[0].paths[0])
    for title in ("peer access on, one way, 256 MiB", "peer access on, one way, by SMs, 256 MiB",
                  "peer access on, one way, read by the destination, 256 MiB",
                  "peer access on, one way, read by the destination, by SMs, 256 MiB",
                  "peer access on, both ways at once (sum), by SMs, 256 MiB", "peer access off, one way, 256 MiB"):
        assert title in text, title


def test_all_host_bidir_shows_each_directions_total(tmp_path):
    f = benchmark_file_from_doc("bidir.json", synth.make_multi_run(gpus=4, seed=6, families=("AllHost",),
                                                                   variants=True))
    made = plot.make_plots([f], tmp_path, formats=("svg",), kinds=("all_host",))
    text = svg_text(made[0].paths[0])
    for s in ("both directions at once", "h2d, all GPUs", "d2h, all GPUs", "host to device",
              "one direction, all GPUs (each copy over its own time, added)"):
        assert s in text, s
    # h2d and d2h: the aggregate and 4 GPUs; bidir: the aggregate, the two directions' totals and 4 GPUs.
    assert made[0].points == 2 * 5 + 7
    # The shared value axis reaches bidir's aggregate, the tallest bar, though its panel is drawn last.
    from gpu_bench_tools.plot.families.all_host import all_host_plots
    (_, canvas), = all_host_plots([f], ["bidir"])
    assert canvas.axes[0][-1].get_ylim()[1] >= f.cases["AllHost/dir:bidir/bytes:268435456"].center("gbps")


def test_transfer_has_a_line_per_device_and_file(multi_plots):
    _, out = multi_plots
    text = svg_text(out / "transfer_dir-h2d.svg")
    # A colour per GPU (the memory kind is the panel: these files have no series), a line style per file.
    for dev in range(4):
        assert f"GPU {dev}" in text
    assert "colour: GPU; line style and marker: file" in text
    assert "4 x H100 80GB HBM3, driver 580.159.04 (multi4)" in text
    assert "4 x H100 80GB HBM3, driver 580.159.04 (multi4_slow_link)" in text
    # A file without a device profile (schema 1) has no peak to draw.
    assert "mem: pinned" in text and "mem: pageable" in text and "peak" not in text


def test_all_host_bars_show_the_aggregate_and_each_gpu(multi_plots):
    made, out = multi_plots
    text = svg_text(out / "all_host.svg")
    for s in ("All GPUs copying to or from the host at once", "all at once", "GPU 0", "GPU 3", "host to device",
              "device to host", "4 GPUs, bytes: 256 MiB", "bandwidth (GB/s, 1 GB = 1e9 B)"):
        assert s in text, s
    assert next(p for p in made if p.kind == "all_host").points == 2 * 2 * 5  # 2 dirs x 2 files x (all + 4 GPUs)


def test_one_per_kind_names_the_multi_gpu_kinds(data, tmp_path, capsys):
    code, out, err = run_cli(cli_plot.main, [data["multi2"], data["multi2_pcie"], "--out", str(tmp_path),
                                             "--one-per-kind", "--dpi", "60", "--kind", "peer_matrix", "--kind", "peer",
                                             "--kind", "peer_latency", "--kind", "all_host", "--kind", "transfer"],
                             capsys)
    assert code == 0, err
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(f"{k}.{x}" for k in ("transfer", "peer_matrix", "peer", "peer_latency", "all_host")
                           for x in ("png", "svg"))
    assert re.search(r"^peer_matrix\s+\S+peer_matrix\.png, \S+peer_matrix\.svg$", out, re.M)
    peer = svg_text(tmp_path / "peer.svg")
    assert re.search(r"Peer copy bandwidth vs. size: peer_access: o(n|ff), dir: (oneway|bidir)", peer)
    assert "src: 0, dst: 1" in peer


def test_peer_at_one_size_is_the_matrix_alone(tmp_path):
    one = synth.write(tmp_path / "one.json", synth.make_multi_run(gpus=2, seed=3, families=("Peer",),
                                                                  peer_sizes=(1 << 28,)))
    two = synth.write(tmp_path / "two.json", synth.make_multi_run(gpus=2, seed=3, families=("Peer",)))
    kinds = ("peer_matrix", "peer")
    assert [p.kind for p in plot.make_plots([load_file(one)], tmp_path / "a", kinds=kinds, dpi=50)] == ["peer_matrix"]
    assert "peer" in [p.kind for p in plot.make_plots([load_file(two)], tmp_path / "b", kinds=kinds, dpi=50)]


# ---------------------------------------------------------------------------------------------
# report


@pytest.fixture(scope="module")
def multi_report(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("multi_report") / "report.html"
    code = cli_report.main([data["multi2"], data["multi2_pcie"], "--out", str(out)])
    assert code == 0
    return out.read_text()


def test_report_shows_the_topology_and_the_heat_maps(multi_report):
    page = multi_report
    for section in ("GPUs and links", "Peer bandwidth between GPUs", "Peer copy latency",
                    "All GPUs and the host at once", "Peer copies by size", "Transfer"):
        assert f">{section}</h2>" in page, section
    assert "gpu_bench report: 2 x H100 80GB HBM3, driver 580.159.04" in page
    topo = page.split(">GPUs and links</h2>")[1].split("<h2")[0]
    assert topo.count("<table>") == 4  # GPUs and links for each file
    assert '<td class="link">nvlink<br><small>p2p yes, rank 0, atomics yes</small></td>' in topo
    assert '<td class="link differs">pcie_switch<br><small>p2p yes, rank 1, atomics no</small></td>' in topo
    assert "0000:3b:00.0" in topo and "GPU-6f1e2d3c-81aa-4000-8000-000000000101" in topo
    assert re.search(r'<tr class="differs"><td>GPUs</td>', page) is None  # both have 2
    assert re.search(r"<tr><td>GPUs</td><td>2</td><td>2</td></tr>", page)
    assert '<img alt="Peer copy bandwidth (GB/s): 2 x H100 80GB HBM3' in page
    assert '<img alt="All GPUs copying to or from the host at once' in page


def test_single_gpu_report_has_no_topology_section(data):
    page = build_report([load_file(data["base"])], with_plots=False)
    assert "GPUs and links" not in page and "<td>GPUs</td>" not in page


def test_multi_gpu_headlines(data):
    h = {x.family: x for x in headlines([load_file(data["multi4"]), load_file(data["multi4_slow_link"])])}
    assert set(h) == {"Transfer", "Peer", "PeerLatency", "AllHost"}
    transfer = dict(h["Transfer"].rows)
    assert "h2d pinned, GPU 3" in transfer and transfer["h2d pinned, GPU 3"][0].endswith("GB/s at 256 MiB")
    peer = dict(h["Peer"].rows)
    a, b = (float(x.split()[0]) for x in peer["GPU 0 -> GPU 1"])
    assert b < a / 5  # the best over peer access and direction: NVLink against a PCIe switch
    assert list(peer)[0] == "GPU 0 -> GPU 1" and peer["GPU 0 -> GPU 1"][0].endswith(
        "GB/s at peer_access: on, dir: bidir, 256 MiB")
    lat = dict(h["PeerLatency"].rows)["GPU 1 -> GPU 0"]
    assert lat[0].endswith("us at peer_access: on") and float(lat[1].split()[0]) > float(lat[0].split()[0])
    allhost = dict(h["AllHost"].rows)
    assert allhost["h2d"][0].endswith("GB/s over 4 GPUs at 256 MiB")


# ---------------------------------------------------------------------------------------------
# history


def test_history_keeps_each_device_apart_and_finds_the_slow_one(tmp_path, capsys):
    db = str(tmp_path / "h.sqlite")
    paths = []
    for n in range(1, 5):
        slow = {"/device:1$": 0.85} if n == 4 else None
        doc = synth.make_multi_run(gpus=2, seed=300 + n, date=f"2025-01-{n:02d}T02:00:00+00:00", slow=slow,
                                   families=("Transfer", "AllHost"))
        paths.append(synth.write(tmp_path / f"n{n}.json", doc))
    code, out, err = run_cli(cli_history.main, ["--db", db, "ingest", *paths], capsys)
    assert code == 0 and "4 run(s) added" in out, err
    with sqlite3.connect(db) as c:
        names = {r[0] for r in c.execute("SELECT cases.name FROM results JOIN cases ON cases.id = results.case_id "
                                         "WHERE run_id = 1")}
        assert (c.execute("SELECT COUNT(*) FROM machines").fetchone()[0]) == 1
    assert "Transfer/dir:h2d/mem:pinned/bytes:4096/device:0" in names
    assert "Transfer/dir:h2d/mem:pinned/bytes:4096/device:1" in names
    assert "AllHost/dir:d2h/bytes:268435456" in names
    doc = json.loads(Path(paths[0]).read_text())
    assert len(names) == len({e["run_name"].rsplit("/", 1)[0] for e in doc["benchmarks"]})

    code, out, _ = run_cli(cli_history.main, ["--db", db, "check"], capsys)
    assert code == 1, out
    reg = [ln for ln in out.splitlines() if ln.strip().startswith("REGRESSION")]
    # Every large-enough Transfer case of GPU 1 got 15% slower; GPU 0 and AllHost did not.
    assert reg and all("/device:1 " in ln for ln in reg)
    assert not any("/device:0" in ln or "AllHost" in ln for ln in out.splitlines() if "REGRESSION" in ln)
    written = history_render.trend(db, r"Transfer/dir:h2d/mem:pinned/bytes:268435456/device:\d$", tmp_path / "trend")
    assert sorted(Path(p).name for p in written) == [
        "trend_transfer-dir-h2d-mem-pinned-bytes-268435456-device-0.png",
        "trend_transfer-dir-h2d-mem-pinned-bytes-268435456-device-1.png"]


# ---------------------------------------------------------------------------------------------
# NVLink peaks


def with_nvlinks(doc, gpus, links=18, rate=25.0):
    """The NVLink facts gpu_bench writes since it reads them from NVML: every GPU `links` links of `rate` GB/s,
    every pair joined by all of them (as behind NVSwitches)."""
    ctx = doc["context"]
    peak = f"{links * rate:g}"
    for i in range(gpus):
        ctx.update({f"gpu.{i}.nvlinks": str(links), f"gpu.{i}.nvlink_link_gbps": f"{rate:g}",
                    f"gpu.{i}.profile.nvlink_gbps": peak})
        for j in range(gpus):
            if i != j:
                ctx.update({f"topology.{i}-{j}.nvlinks": str(links), f"topology.{i}-{j}.nvlink_gbps": peak})
    return doc


def test_every_peer_figure_has_its_share_of_the_nvlink_peak(tmp_path):
    doc = with_nvlinks(synth.make_multi_run(gpus=2, seed=21, families=("Peer",), reps=1, aggregates=False), 2)
    peer = next(b for b in doc["benchmarks"] if b["name"].startswith("Peer/src:0/dst:1/peer_access:on/dir:oneway/"))
    pattern = dict(peer, name="PeerPattern/pattern:all_pairs/bytes:268435456/manual_time", gbps=720.0)
    pattern["run_name"] = pattern["name"]
    doc["benchmarks"].append(pattern)
    f = benchmark_file_from_doc(str(tmp_path / "nvlink.json"), doc)
    assert multigpu.nvlink_peak(f, 0, 1) == 450.0 and multigpu.nvlink_peak(f, 1, 1) is None
    shares = {c.key: (value, peak, share) for c, value, peak, share in multigpu.peer_shares(f)}
    oneway = shares["Peer/src:0/dst:1/peer_access:on/dir:oneway/bytes:268435456"]
    assert oneway[1] == 450.0 and 0.8 < oneway[2] < 0.83  # the model's 370 GB/s of 450
    assert shares["Peer/src:0/dst:1/peer_access:on/dir:bidir/bytes:268435456"][1] == 900.0  # both ways
    assert not [k for k in shares if "/peer_access:off/" in k]  # staged through the host: no NVLink peak
    # all_pairs: each GPU sends at most its own links' worth: 2 x min(450, 450).
    assert shares["PeerPattern/pattern:all_pairs/bytes:268435456"] == (720.0, 900.0, 0.8)
    page = build_report([f], with_plots=False)
    section = page.split(">Peer copies against their NVLink peak</h2>")[1].split("<h2")[0]
    assert "<code>PeerPattern/pattern:all_pairs/bytes:268435456</code></td><td class=\"num\">720" in section
    assert "80.0%" in section
    assert multigpu.gpu_fact(f, 1, "nvlink") == "18 x 25 GB/s = 450 GB/s per direction"


def test_a_file_without_nvlink_facts_has_no_shares(data):
    f = load_file(data["multi4"])
    assert multigpu.peer_shares(f) == [] and multigpu.gpu_fact(f, 0, "nvlink") is None
    assert "against their NVLink peak" not in build_report([f], with_plots=False)
