import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import synth
from gpu_bench_tools.reading import load
from gpu_bench_tools.reading.load import InputError, load_file, parse_name


def test_parse_name_drops_manual_time_and_splits_axes():
    n = parse_name("Transfer/dir:h2d/mem:pinned/bytes:1048576/manual_time")
    assert n.family == "Transfer"
    assert n.axes == (("dir", "h2d"), ("mem", "pinned"), ("bytes", "1048576"))
    assert n.timing == "manual_time"
    assert n.key == "Transfer/dir:h2d/mem:pinned/bytes:1048576"


def test_parse_name_google_benchmark_options_and_positional_args():
    n = parse_name("BM_memcpy/8/64/threads:4/real_time")
    assert n.family == "BM_memcpy"
    assert n.axes == (("arg0", "8"), ("arg1", "64"))
    assert n.options == (("threads", "4"),)
    assert n.key == "BM_memcpy/8/64/threads:4"


def test_parse_name_trailing_device_axis():
    n = parse_name("Peer/src:0/dst:1/peer_access:on/bytes:4096/device:1/manual_time")
    assert n.axis("device") == "1" and n.axis("peer_access") == "on"


def test_repetitions_aggregates_and_errors(data):
    f = load_file(data["base"])
    assert f.is_gpu_bench and f.schema == "1"
    c = f.cases["Transfer/dir:h2d/mem:pinned/bytes:1048576"] if "Transfer/dir:h2d/mem:pinned/bytes:1048576" in f.cases \
        else f.cases["Transfer/dir:h2d/mem:pinned/bytes:8192"]
    assert len(c.samples) == 5 and [s.repetition for s in c.samples] == [0, 1, 2, 3, 4]
    assert set(c.aggregates) == {"mean", "median", "stddev", "cv"}
    assert c.aggregate_units["cv"] == "percentage"
    assert c.center("gbps") == pytest.approx(sorted(c.values("gbps"))[2])
    assert 0 < c.spread("gbps") < 5
    small = f.cases["SmallCopy/dir:h2d/mem:pinned/bytes:4"]
    assert {"p50", "p99"} <= set(small.aggregates)
    assert small.time_unit == "us"


def test_errored_case_is_kept_with_its_message():
    doc = synth.make_run(families=("Transfer",), full=True, reps=2)
    f = load.benchmark_file_from_doc("x.json", doc)
    bad = [c for c in f.cases.values() if not c.ok]
    assert bad and all(c.problem.startswith("error: cannot allocate") for c in bad)
    assert all(c.family == "Transfer" and c.axis("mem") == "registered" for c in bad)


def test_skipped_case_from_benchmark_1_8():
    doc = synth.doc_from_values({"Transfer/dir:h2d/mem:pinned/bytes:1024": [1.0, 2.0]})
    doc["benchmarks"].append({"name": "Transfer/dir:h2d/mem:mapped/bytes:1024/manual_time", "run_type": "iteration",
                              "repetitions": 1, "repetition_index": 0, "threads": 1, "skipped": True,
                              "skip_message": "mapped memory is not supported here", "iterations": 0,
                              "real_time": 0, "cpu_time": 0, "time_unit": "us"})
    f = load.benchmark_file_from_doc("x.json", doc)
    c = f.cases["Transfer/dir:h2d/mem:mapped/bytes:1024"]
    assert not c.ok and c.problem == "skipped: mapped memory is not supported here"


def test_both_benchmark_versions_load(data):
    old, new = load_file(data["gb171"]), load_file(data["base"])
    assert "json_schema_version" not in old.context and new.context["json_schema_version"] == 1
    assert old.cases.keys() == new.cases.keys()


def test_aggregates_only_file_uses_the_median_aggregate():
    doc = synth.make_run(families=("Transfer",), reps=5)
    doc["benchmarks"] = [e for e in doc["benchmarks"] if e["run_type"] == "aggregate"]
    f = load.benchmark_file_from_doc("agg.json", doc)
    c = f.cases["Transfer/dir:h2d/mem:pinned/bytes:268435456"]
    assert c.samples == [] and c.ok
    assert c.center("gbps") == pytest.approx(c.aggregates["median"]["gbps"])
    assert c.spread("gbps") == pytest.approx(c.aggregates["cv"]["gbps"] * 100)


def test_complexity_aggregates_are_ignored():
    doc = synth.doc_from_values({"Alloc/mem:pinned/bytes:4096": [5.0]})
    doc["benchmarks"].append({"name": "Alloc/mem:pinned_BigO", "run_name": "Alloc/mem:pinned", "run_type": "aggregate",
                              "aggregate_name": "BigO", "cpu_coefficient": 1.0, "real_coefficient": 1.0,
                              "big_o": "N", "time_unit": "ns"})
    f = load.benchmark_file_from_doc("x.json", doc)
    assert list(f.cases) == ["Alloc/mem:pinned/bytes:4096"]


def test_unavailable_facts_read_as_missing():
    doc = synth.make_run(families=("SyncPlacement",), unavailable=("gpu.pcie_gen", "driver.version"))
    f = load.benchmark_file_from_doc("x.json", doc)
    assert f.fact("driver.version") is None and f.fact("gpu.pcie_gen") is None
    assert load.machine_label(f) == "H100 80GB HBM3"


def test_file_labels_are_unique():
    a = load.benchmark_file_from_doc("/x/a.json", synth.make_run(families=("SyncPlacement",)))
    b = load.benchmark_file_from_doc("/y/b.json", synth.make_run(families=("SyncPlacement",)))
    c = load.benchmark_file_from_doc("/z/a.json", synth.make_run(families=("SyncPlacement",)))
    labels = load.file_labels([a, b, c])
    assert len(set(labels)) == 3 and all(lab.startswith("H100 80GB HBM3, driver 580.159.04") for lab in labels)


def test_time_units_are_converted_within_a_case():
    doc = synth.doc_from_values({"Launch/kind:empty": [2.0, 2.0]}, counter="x")
    doc["benchmarks"][1]["real_time"] = 0.5  # the same as 500 us, written in ms
    doc["benchmarks"][1]["time_unit"] = "ms"
    f = load.benchmark_file_from_doc("x.json", doc)
    assert f.cases["Launch/kind:empty"].values("time") == [500.0, 500.0]


def test_timeline_loads_cases_and_spans(data):
    tl = load.load_timeline(data["timeline"])
    assert len(tl.cases) == 2
    case = tl.cases[0]
    assert case.name.startswith("Overlap/") and len(case.spans) == 4 * 4 * 3
    assert {s.tid for s in case.spans} == {0, 1, 2, 3}
    assert isinstance(load.load_any(data["timeline"]), load.Timeline)


MALFORMED = {
    "empty": (b"", "empty file"),
    "blank": (b"  \n\n", "empty file"),
    "text": (b"Benchmark  Time  CPU  Iterations\n----\n", "not JSON"),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "not JSON"),
    "array": (b"[1, 2, 3]", "not Google Benchmark output"),
    "no_benchmarks": (b'{"context": {"date": "x"}}', "not Google Benchmark output"),
    "no_context": (b'{"benchmarks": [{"name": "a"}]}', "not Google Benchmark output"),
    "empty_benchmarks": (b'{"context": {}, "benchmarks": []}', "no benchmarks"),
    "schema3": (json.dumps({"context": {"gpu_bench.schema": "3"}, "benchmarks": [{"name": "a"}]}).encode(),
                "gpu_bench.schema '3' is unknown"),
    "gb_schema2": (json.dumps({"context": {"json_schema_version": 2}, "benchmarks": [{"name": "a"}]}).encode(),
                   "json_schema_version"),
    "nameless": (b'{"context": {}, "benchmarks": [{"real_time": 1}]}', "has no name"),
    "string_time": (b'{"context": {}, "benchmarks": [{"name": "a", "real_time": "1", "time_unit": "ns"}]}',
                    "'real_time' is not a number"),
    "bad_unit": (b'{"context": {}, "benchmarks": [{"name": "a", "real_time": 1, "time_unit": "fortnights"}]}',
                 "unknown time_unit"),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_malformed_inputs_raise_one_line(tmp_path, kind):
    content, expected = MALFORMED[kind]
    p = tmp_path / f"{kind}.json"
    p.write_bytes(content)
    with pytest.raises(InputError) as e:
        load_file(p)
    msg = str(e.value)
    assert expected in msg and "\n" not in msg and str(p) in msg


def test_truncated_file_is_called_truncated(data, tmp_path):
    text = open(data["base"]).read()
    for cut in (len(text) // 2, len(text) - 10, 200):
        p = tmp_path / "cut.json"
        p.write_text(text[:cut])
        with pytest.raises(InputError, match="truncated JSON"):
            load_file(p)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_file(tmp_path / "absent.json")
    with pytest.raises(InputError, match="is a directory"):
        load_file(tmp_path)


SMALL = synth.make_run(families=("SyncPlacement", "SmallCopy"), reps=2)
SMALL_TEXT = json.dumps(SMALL)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=len(SMALL_TEXT) - 1))
def test_any_truncation_is_refused_cleanly(cut):
    with pytest.raises(InputError):
        load.parse_json("t.json", SMALL_TEXT[:cut]) if cut == 0 or not SMALL_TEXT[:cut].strip() else \
            load.benchmark_file_from_doc("t.json", load.parse_json("t.json", SMALL_TEXT[:cut]))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=150, deadline=None)
@given(index=st.integers(min_value=0, max_value=len(SMALL["benchmarks"]) - 1),
       key=st.sampled_from(["name", "run_name", "run_type", "real_time", "cpu_time", "time_unit", "aggregate_name",
                            "repetition_index", "iterations", "error_occurred", "gbps", "label", "skipped"]),
       value=json_values)
def test_any_corrupted_field_loads_or_is_refused_cleanly(index, key, value):
    doc = json.loads(SMALL_TEXT)
    doc["benchmarks"][index][key] = value
    try:
        f = load.benchmark_file_from_doc("m.json", doc)
    except InputError as e:
        assert "\n" not in str(e)
        return
    for c in f.cases.values():  # what loads must also be usable
        c.center("time"), c.spread("time"), c.ok


@settings(max_examples=60, deadline=None)
@given(ctx=st.dictionaries(st.sampled_from(["gpu_bench.schema", "gpu.name", "driver.version", "date",
                                            "json_schema_version", "gpu.pcie_gen"]), json_values, max_size=4))
def test_any_context_loads_or_is_refused_cleanly(ctx):
    doc = json.loads(SMALL_TEXT)
    doc["context"].update(ctx)
    try:
        f = load.benchmark_file_from_doc("m.json", doc)
    except InputError:
        return
    load.file_labels([f]), load.context_rows([f])


def test_a_run_with_the_gate_off_differs_in_context(tmp_path):
    on = synth.make_run(seed=1)
    old = synth.make_run(seed=1)
    off = synth.make_run(seed=1)
    on["context"]["gpu_bench.gate"] = "on"
    off["context"]["gpu_bench.gate"] = "off"
    files = [load_file(synth.write(tmp_path / f"{n}.json", d)) for n, d in (("on", on), ("old", old), ("off", off))]
    assert ("gate", ["on", "on"]) in load.context_rows(files[:2])  # no key: a run from before --gate=off
    assert load.context_differences(files[:2]) == []
    assert ("gate", ["on", "on", "off"]) in load.context_differences(files)
