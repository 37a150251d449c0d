#!/usr/bin/env python3
"""CLI tests of gpu_bench that need no GPU: help, listing, the no-GPU path, bad flags.

usage: run_cli_tests.py PATH/TO/gpu_bench PATH/TO/gpu_bench_probe
       run_cli_tests.py --write-cases PATH/TO/gpu_bench   (records the case lists in tests/cli/cases.json)
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

EXE = None
PROBE_EXE = None
NAME = re.compile(r"^[A-Z][A-Za-z]*(/[a-z][a-z0-9_]*:[a-z0-9_]+)+/manual_time$")


def memory_nodes():
    """How many NUMA nodes have memory, as the kernel lists them (1 where it does not say)."""
    try:
        with open("/sys/devices/system/node/has_memory") as f:
            text = f.read().strip()
    except OSError:
        return 1
    count = 0
    for item in filter(None, text.split(",")):
        first, _, last = item.partition("-")
        count += int(last or first) - int(first) + 1
    return max(count, 1)


CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.json")
# The flags whose case counts cases.json records per family, beside the default list's names.
COUNTED = ("--full", "--sizes=pow2", "--sizes=64K", "--full --sizes=64K", "--list_gpus=8")


def family_names():
    return [line.split("\t")[0] for line in run("--families").stdout.splitlines()]


def case_lists():
    """What gpu_bench says of its families without a GPU: the default case names by family, each family's
    count under COUNTED's flags (Transfer's numa:remote twins, which only a host with several NUMA nodes
    lists, left out), its line of --families and its section of --help."""
    def listed(*flags):
        r = run("--benchmark_list_tests", *flags, env={"CUDA_VISIBLE_DEVICES": ""})
        assert r.returncode == 0, r.stderr
        by_family = {}
        for n in r.stdout.split():
            if "/numa:remote/" not in n:
                by_family.setdefault(n.split("/")[0], []).append(n)
        return by_family
    rows = {line.split("\t")[0]: line.split("\t")[1:] for line in run("--families").stdout.splitlines()}
    return {"names": listed(),
            "counts": {flags: {fam: len(v) for fam, v in listed(*flags.split()).items()} for flags in COUNTED},
            "families": rows, "help": family_help(rows)}


def family_help(names):
    """Each family's section of --help: its summary line, name patterns, axes and counters."""
    text = run("--help").stdout.split("\nfamilies:\n", 1)[1].split("\nExit status:", 1)[0]
    sections, name = {}, None
    for line in text.splitlines(keepends=True):
        head = line.split(": ", 1)[0]
        if head in names:
            name = head
        if name:
            sections[name] = sections.get(name, "") + line
    return sections


def run(*args, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([EXE, *args], capture_output=True, text=True, env=e, timeout=120)


class Help(unittest.TestCase):
    def test_help_lists_families_axes_and_flags(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for needle in ("Transfer/dir:{h2d,d2h,bidir,d2d}", "--device=N", "--sizes=SPEC", "counted once", "GB = 1e9",
                       "Overlap/schedule:", "ideal = max((in + out) / S + middle,", "HostBlocking/mem:", "--timeline=FILE",
                       "--device=all",
                       "Peer/src:{i}/dst:{j}/peer_access:{on,off}/dir:{oneway,bidir}[/access:read][/engine:sm]/bytes:{N}",
                       "PeerLatency/src:{i}/dst:{j}/peer_access:{on,off}/bytes:4",
                       "AllHost/dir:{h2d,d2h,bidir}[/pattern:{one_to_all,all_to_one}]/bytes:{N}", "Batch/api:{loop,batch,kernel}",
                       "PeerPattern/pattern:{one_to_all,all_to_one,all_pairs}", "/engine:{ce,sm}",
                       "gbps_gpu{i}", "latency_us", "--gate=off", "--link_rounds=N", "--link_max_rounds=N",
                       "--target_detectable=PCT", "--list_gpus=N",
                       "PeerPattern/pattern:{one_to_all,all_to_one,all_pairs}[/engine:sm][/release:together]/bytes:{N}"):
            self.assertIn(needle, r.stdout)


class FamiliesDoc(unittest.TestCase):
    DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")

    @staticmethod
    def name_patterns(lines):
        """The name patterns among lines laid out as --help lays them out: two spaces, then Family/..."""
        patterns = []
        for i, line in enumerate(lines):
            if re.match(r"^  [A-Z][A-Za-z]+/", line):
                p = line.strip()
                while p.endswith("/") and i + 1 < len(lines):  # a pattern wrapped over two lines
                    i += 1
                    p += lines[i].strip()
                patterns.append(p)
        return patterns

    def test_every_name_pattern_of_the_help_is_in_the_docs_as_written(self):
        # docs/families.md (and docs/multi_gpu.md for the multi-GPU families) hold each family's name
        # pattern, in a code span or in a block of --help text; the help is the source, so the two cannot
        # drift apart.
        r = run("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        patterns = self.name_patterns(r.stdout.split("\nfamilies:\n", 1)[1].splitlines())
        self.assertGreater(len(patterns), 15)
        docs = ""
        for name in ("families.md", "multi_gpu.md"):
            with open(os.path.join(self.DOCS, name)) as f:
                docs += f.read()
        in_blocks = set(self.name_patterns(docs.splitlines()))
        missing = [p for p in patterns if f"`{p}`" not in docs and p not in in_blocks]
        self.assertEqual(missing, [], "name patterns of --help missing from docs/families.md or docs/multi_gpu.md")


class Listing(unittest.TestCase):
    def test_lists_the_default_transfer_matrix_without_a_gpu(self):
        r = run("--benchmark_list_tests", env={"CUDA_VISIBLE_DEVICES": ""})
        self.assertEqual(r.returncode, 0, r.stderr)
        names = r.stdout.split()
        transfer = [n for n in names if n.startswith("Transfer/")]
        # h2d: 7 memory kinds, d2h and bidir: 6 each, d2d: 1 with a cold and a warm cache; 15 sizes from 4 B
        # to 1 GiB. Where the host has several NUMA nodes (and the build has libnuma) the 15 placeable pairs
        # gain a numa:remote twin.
        # The other engine's twins (pinned, registered, mapped for h2d, d2h and bidir; d2d) at 1 MiB and 256 MiB.
        remote = [n for n in transfer if "/numa:" in n]
        twins = [n for n in transfer if "/engine:" in n]
        self.assertEqual(len(twins), 10 * 2)
        self.assertEqual(len(transfer), 21 * 15 + len(remote) + len(twins))
        self.assertIn(len(remote), (0, 15 * 15))
        if memory_nodes() < 2:
            self.assertEqual(remote, [], "a numa axis on a host with one NUMA node")
        for n in remote:
            self.assertRegex(n, r"^Transfer/dir:(h2d|d2h|bidir)/mem:(pageable|pinned|write_combined|registered|mapped)"
                                r"/numa:remote/bytes:\d+/manual_time$")
        self.assertEqual(len(set(transfer)), len(transfer))
        for n in names:
            self.assertRegex(n, NAME)
        self.assertIn("Transfer/dir:h2d/mem:pinned/bytes:268435456/manual_time", names)
        self.assertIn("Transfer/dir:d2d/mem:device/cache:cold/bytes:4/manual_time", names)
        self.assertIn("Transfer/dir:d2d/mem:device/cache:warm/bytes:1073741824/manual_time", names)
        self.assertNotIn("Transfer/dir:d2h/mem:managed_fault/bytes:4/manual_time", names)

    def test_every_family_lists_the_cases_recorded_for_it(self):
        # tests/cli/cases.json holds what gpu_bench lists (by --write-cases): the default case names,
        # each family's count under other flags, its line of --families and its section of --help. A family not yet recorded there is new, and is checked
        # only for the form of its names (above) until its cases are recorded.
        with open(CASES) as f:
            recorded = json.load(f)
        now = case_lists()
        families = family_names()
        self.assertFalse(set(recorded["families"]) - set(families), "recorded families gpu_bench no longer has")
        for fam in families:
            if fam not in recorded["families"]:
                print(f"note: {fam} is not recorded in {CASES}")
                continue
            self.assertEqual(now["names"].get(fam, []), recorded["names"].get(fam, []), fam)
            self.assertEqual(now["families"][fam], recorded["families"][fam], f"{fam}'s line of --families")
            self.assertEqual(now["help"][fam], recorded["help"][fam], f"{fam}'s --help")
            for flags, counts in recorded["counts"].items():
                self.assertEqual(now["counts"][flags].get(fam, 0), counts.get(fam, 0), f"{fam} with {flags}")

    def test_dense_sweep_and_explicit_sizes(self):
        r = run("--benchmark_list_tests", "--sizes=pow2", "--benchmark_filter=Transfer/dir:h2d/mem:pinned/bytes")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.split()), 29)
        r = run("--benchmark_list_tests", "--sizes=4,1M", "--benchmark_filter=Transfer/dir:h2d/mem:pinned/bytes")
        self.assertEqual(r.stdout.split(), ["Transfer/dir:h2d/mem:pinned/bytes:4/manual_time",
                                            "Transfer/dir:h2d/mem:pinned/bytes:1048576/manual_time"])

    def test_filter_that_matches_nothing_fails(self):
        r = run("--benchmark_list_tests", "--benchmark_filter=Transfer/.*mem:floppy")
        self.assertNotEqual(r.returncode, 0)


class NoGpu(unittest.TestCase):
    def test_one_line_exit_1_and_no_output_file(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.json")
            r = run("--benchmark_filter=Transfer/dir:h2d/mem:pinned/bytes:4/", f"--benchmark_out={out}",
                    env={"CUDA_VISIBLE_DEVICES": ""})
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertIn("no CUDA GPU is visible", lines[0])
            self.assertNotIn("Traceback", r.stderr)
            self.assertFalse(os.path.exists(out))
            self.assertNotIn("Transfer/", r.stdout)


class BadInput(unittest.TestCase):
    def check_one_line(self, *args, code=2, mention=""):
        r = run(*args)
        self.assertEqual(r.returncode, code, f"{args}: {r.stdout}{r.stderr}")
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, f"{args}: {r.stderr}")
        self.assertTrue(lines[0].startswith("gpu_bench: "), lines[0])
        self.assertIn(mention, lines[0])

    def test_unknown_flag(self):
        self.check_one_line("--bogus", mention="--bogus")

    def test_bad_sizes(self):
        self.check_one_line("--sizes=5", mention="multiple of 4")
        self.check_one_line("--sizes=-4", mention="-4")
        self.check_one_line("--sizes=3T", mention="1 TiB")

    def test_footprint_under_a_line_is_refused_where_latency_runs(self):
        # Refused before the GPU is looked for, an earlier output file untouched; a run that selects no
        # Latency case takes the size (and here goes on to find no GPU).
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.json")
            with open(out, "w") as f:
                f.write("old results")
            for flt in ("Latency", "Latency/mem:pinned/pattern:random/bytes:64/", ""):
                r = run("--sizes=64,1M", f"--benchmark_filter={flt}", f"--benchmark_out={out}",
                        env={"CUDA_VISIBLE_DEVICES": ""})
                self.assertEqual(r.returncode, 2, f"{flt!r}: {r.stderr}")
                lines = r.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertIn("--sizes asks for 64 B", lines[0])
                self.assertIn("Latency case takes at least 128 B", lines[0])
            with open(out) as f:
                self.assertEqual(f.read(), "old results")
            self.assertEqual(os.listdir(d), ["out.json"])
        r = run("--sizes=64,1M", "--benchmark_filter=Transfer", env={"CUDA_VISIBLE_DEVICES": ""})
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertNotIn("--sizes", r.stderr)
        r = run("--sizes=128", "--benchmark_filter=Latency", env={"CUDA_VISIBLE_DEVICES": ""})
        self.assertEqual(r.returncode, 1, r.stderr)  # one line fits: on to the missing GPU
        self.assertNotIn("--sizes", r.stderr)
        # A named sweep leaves out the sizes under a line rather than refusing them.
        r = run("--benchmark_list_tests", "--sizes=pow2", "--benchmark_filter=^Latency/")
        sizes = {int(n.split("bytes:")[1].split("/")[0]) for n in r.stdout.split()}
        self.assertEqual(min(sizes), 128)

    def test_bad_link_rounds(self):
        self.check_one_line("--link_rounds=0", mention="--link_rounds")
        self.check_one_line("--link_rounds=21", mention="--link_rounds")
        self.check_one_line("--link_rounds", mention="--link_rounds takes a value")
        self.check_one_line("--link_max_rounds=21", mention="--link_max_rounds")
        self.check_one_line("--target_detectable=0.5", mention="--target_detectable")
        self.check_one_line("--target_detectable", mention="--target_detectable takes a value")

    def test_bad_gate(self):
        self.check_one_line("--gate=maybe", mention="--gate takes on or off, not 'maybe'")
        self.check_one_line("--gate", mention="--gate=on or --gate=off")

    def test_unknown_memory_kind_in_filter(self):
        self.check_one_line("--benchmark_filter=Transfer/.*mem:floppy/", code=1, mention="'floppy' is not a memory kind")

    def test_output_directory_missing(self):
        self.check_one_line("--benchmark_out=/no/such/dir/out.json", mention="does not exist")

    def test_failed_run_keeps_the_old_output_file(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.json")
            with open(out, "w") as f:
                f.write("old results")
            r = run("--benchmark_filter=Transfer/dir:h2d/mem:pinned/bytes:4/", f"--benchmark_out={out}",
                    env={"CUDA_VISIBLE_DEVICES": ""})
            self.assertEqual(r.returncode, 1)
            with open(out) as f:
                self.assertEqual(f.read(), "old results")
            self.assertEqual(os.listdir(d), ["out.json"])

    def test_timeline_needs_a_writable_file(self):
        self.check_one_line("--timeline=", mention="--timeline")
        self.check_one_line("--timeline=/no/such/dir/t.json", mention="does not exist")

    def test_bad_device(self):
        self.check_one_line("--device=-1", mention="--device")
        self.check_one_line("--device=abc", mention="--device")
        self.check_one_line("--device=foo", mention="or all, not 'foo'")
        self.check_one_line("--device=ALL", mention="--device")
        self.check_one_line("--device", mention="--device=all")

    def test_device_that_does_not_exist(self):
        # Without a GPU the missing GPU is what is said (1); with one, that GPU 99 does not exist (2).
        r = run("--device=99", "--benchmark_filter=Transfer/dir:h2d/mem:pinned/bytes:4/")
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        if "no CUDA GPU is visible" in lines[0]:
            self.assertEqual(r.returncode, 1)
        else:
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--device=99 does not exist", lines[0])


class DeviceAll(unittest.TestCase):
    NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}

    def test_listing_needs_a_gpu(self):
        r = run("--benchmark_list_tests", "--device=all", env=self.NO_GPU)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("gpu_bench: --device=all"), lines[0])
        self.assertIn("no CUDA GPU is visible", lines[0])
        self.assertEqual(r.stdout, "")

    def test_help_works_without_a_gpu(self):
        r = run("--help", "--device=all", env=self.NO_GPU)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--device=all", r.stdout)

    def test_run_without_a_gpu_is_one_line_and_no_file(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.json")
            r = run("--device=all", f"--benchmark_out={out}", env=self.NO_GPU)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertIn("no CUDA GPU is visible", lines[0])
            self.assertEqual(os.listdir(d), [])

    def test_the_link_rounds_cases_come_first(self):
        # Each round runs the cases in this order. Those the link rounds run come first, so in a full round
        # they follow the same cases as in a link round. Alloc's cases under 1 GiB are the first of them.
        r = run("--benchmark_list_tests", env=self.NO_GPU)
        self.assertEqual(r.returncode, 0, r.stderr)
        names = [n.replace("/manual_time", "") for n in r.stdout.split()]
        at = {n: i for i, n in enumerate(names)}
        self.assertTrue(names[0].startswith("Alloc/") and names[0].endswith("/bytes:1048576"), names[0])
        link = ("Alloc/op:malloc/bytes:67108864", "Events/op:record/timing:on",
                "HostBlocking/mem:pageable/bytes:16777216/mode:sync_copy", "SyncPlacement/op:add/sync:before",
                "Transfer/dir:h2d/mem:pageable/bytes:67108864", "Transfer/dir:bidir/mem:pinned/bytes:1073741824",
                "Batch/api:batch/copies:1024/bytes:4096")
        rest = ("Batch/api:kernel/copies:1/bytes:65536", "Alloc/op:malloc/bytes:1073741824",
                "Transfer/dir:h2d/mem:pageable/bytes:268435456", "Overlap/")
        first_rest = min(i for n, i in at.items() if n.startswith(rest))
        self.assertLess(max(at[n] for n in link), first_rest)
        self.assertLess(at["Alloc/op:malloc/bytes:67108864"], at["Events/op:record/timing:on"])

    def test_a_numbered_device_keeps_todays_names(self):
        default = run("--benchmark_list_tests", env=self.NO_GPU)
        one = run("--benchmark_list_tests", "--device=1", env=self.NO_GPU)
        self.assertEqual(one.returncode, 0, one.stderr)
        self.assertEqual(one.stdout, default.stdout)
        names = one.stdout.split()
        self.assertFalse([n for n in names if "/device:" in n])
        # The multi-GPU families need the GPU count to register, so without a GPU they have no cases.
        self.assertFalse([n for n in names if n.startswith(("Peer/", "PeerLatency/", "AllHost/"))])

    def test_multi_gpu_filter_without_a_gpu_says_why_nothing_matches(self):
        r = run("--benchmark_list_tests", "--benchmark_filter=^Peer/", env=self.NO_GPU)
        self.assertEqual(r.returncode, 1)
        self.assertIn("only where a GPU is visible", r.stderr)


class ListGpus(unittest.TestCase):
    """--list_gpus=N lists what a machine of N GPUs registers, on a machine without a GPU."""
    NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}

    def families(self, *flags):
        r = run("--benchmark_list_tests", *flags, env=self.NO_GPU)
        self.assertEqual(r.returncode, 0, r.stderr)
        counts = {}
        for n in r.stdout.split():
            self.assertRegex(n, NAME)
            counts[n.split("/")[0]] = counts.get(n.split("/")[0], 0) + 1
        return counts, r.stdout.split()

    def test_the_default_grows_with_the_pairs_only_where_pairs_differ(self):
        # Every ordered pair one way and every pair both ways at 256 MiB, and the sweep of sizes, peer access
        # off, engine:sm and access:read on one pair (every pair is of one link class where no GPU is asked):
        # at G = 8, 56 + 28 + 22 Peer cases rather than the whole matrix's 1092.
        single, _ = self.families()
        for g in (2, 4, 8):
            counts, names = self.families(f"--list_gpus={g}")
            pairs = g * (g - 1)
            self.assertEqual(counts.get("Peer"), pairs + pairs // 2 + 22, g)
            self.assertEqual(counts.get("PeerLatency"), pairs + 1, g)
            self.assertEqual(counts.get("PeerPattern"), 6, g)
            self.assertEqual(counts.get("AllHost"), 5, g)
            # Latency chases GPU 1's memory from GPU 0 too, one peer per link class: both patterns at the
            # four default footprints (a node of four H100s ran these 625 cases on GPU 0).
            peer_chases = [n for n in names if n.startswith("Latency/mem:peer/")]
            self.assertEqual(len(peer_chases), 8, g)
            self.assertTrue(all(n.startswith("Latency/mem:peer/peer:1/") for n in peer_chases), peer_chases)
            for fam, n in single.items():
                self.assertEqual(counts.get(fam), n + (8 if fam == "Latency" else 0), f"{fam} at {g} GPUs")
            if g == 4:
                self.assertEqual(len(names), 632)
            self.assertEqual(len(set(names)), len(names))
            self.assertIn(f"Peer/src:{g - 1}/dst:{g - 2}/peer_access:on/dir:oneway/bytes:268435456/manual_time", names)
            self.assertIn("Peer/src:0/dst:1/peer_access:off/dir:bidir/bytes:1048576/manual_time", names)
            self.assertNotIn("Peer/src:1/dst:0/peer_access:off/dir:oneway/bytes:1048576/manual_time", names)
            self.assertIn("Peer/src:0/dst:1/peer_access:on/dir:oneway/access:read/engine:sm/bytes:1048576/manual_time",
                          names)
            self.assertNotIn("Peer/src:1/dst:0/peer_access:on/dir:oneway/access:read/bytes:268435456/manual_time",
                             names)
            self.assertIn("AllHost/dir:bidir/bytes:268435456/manual_time", names)
        counts, names = self.families("--list_gpus=8", "--full")
        self.assertEqual(counts.get("Peer"), 1092)
        self.assertEqual(counts.get("PeerLatency"), 112)
        self.assertEqual(len([n for n in names if n.startswith("Latency/mem:peer/")]), 8 * 7)

    def test_the_gate_on_every_gpu_of_eight(self):
        counts, names = self.families("--list_gpus=8", "--preset=gate", "--device=all")
        self.assertEqual(counts, {"SmallCopy": 16, "Transfer": 32, "Peer": 28})
        self.assertIn("Transfer/dir:bidir/mem:pinned/bytes:268435456/device:7/manual_time", names)
        self.assertIn("Peer/src:6/dst:7/peer_access:on/dir:bidir/bytes:268435456/manual_time", names)

    def test_only_with_the_listing(self):
        r = run("--list_gpus=8", env=self.NO_GPU)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.strip().splitlines(),
                         ["gpu_bench: --list_gpus=N lists the cases of a machine of N GPUs; give it with "
                          "--benchmark_list_tests"])
        r = run("--benchmark_list_tests", "--list_gpus=0", env=self.NO_GPU)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--list_gpus takes a whole number from 1 to 64", r.stderr)


class SamplingAndPresets(unittest.TestCase):
    def test_help_says_how_sampling_stops(self):
        r = run("--help")
        for needle in ("--noise=PCT", "--max_time_per_case=S", "--samples=on", "--verify=each", "--progress=WHEN",
                       "--preset=NAME", "noise_pct", "Iterations is 1"):
            self.assertIn(needle, r.stdout)

    def test_the_gate_preset_selects_its_short_list(self):
        r = run("--preset=gate", "--benchmark_list_tests", env={"CUDA_VISIBLE_DEVICES": ""})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(r.stdout.split()), sorted([
            "SmallCopy/dir:h2d/mem:pinned/bytes:4/manual_time",
            "SmallCopy/dir:d2h/mem:pinned/bytes:4/manual_time",
            "Transfer/dir:h2d/mem:pinned/bytes:268435456/manual_time",
            "Transfer/dir:d2h/mem:pinned/bytes:268435456/manual_time",
            "Transfer/dir:bidir/mem:pinned/bytes:268435456/manual_time",
            "Transfer/dir:d2d/mem:device/cache:cold/bytes:268435456/manual_time"]))

    def test_every_single_gpu_family_smoke_filter_selects_its_own_cases_at_64k(self):
        # scripts/sanitize.sh and the smoke step run each family's filter with --sizes=64K; one that selects
        # nothing there would be reported as covered without a case having run.
        rows = [line.split("\t") for line in run("--families").stdout.splitlines()]
        single = [(name, flt) for name, scope, flt in rows if scope == "single_gpu"]
        self.assertGreater(len(single), 5)
        for name, flt in single:
            r = run("--benchmark_list_tests", "--sizes=64K", f"--benchmark_filter={flt or '^' + name + '/'}",
                    env={"CUDA_VISIBLE_DEVICES": ""})
            names = r.stdout.split()
            self.assertTrue(names, f"{name}: its smoke filter {flt!r} selects no case at --sizes=64K")
            self.assertEqual({n.split("/")[0] for n in names}, {name}, name)

    def test_conflicting_or_incomplete_flags_are_one_line_and_exit_2(self):
        for args, needle in ((["--preset=gate", "--benchmark_filter=Transfer"], "drop --benchmark_filter"),
                             (["--samples=on"], "give one"),
                             (["--noise=0"], "--noise takes a number"),
                             (["--max_time_per_case=forever"], "--max_time_per_case takes a number"),
                             (["--preset=quick"], "--preset takes default, nightly or gate")):
            with tempfile.TemporaryDirectory() as d:
                r = subprocess.run([EXE, *args], capture_output=True, text=True, cwd=d, timeout=60)
                self.assertEqual(r.returncode, 2, args)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(needle, r.stderr)
                self.assertEqual(os.listdir(d), [])


class NewFamily(unittest.TestCase):
    """A family defined only under tests/family/ (gpu_bench_probe) registers, lists and describes itself."""

    def test_probe_lists_beside_every_other_family_and_only_there(self):
        probe = subprocess.run([PROBE_EXE, "--benchmark_list_tests"], capture_output=True, text=True, timeout=60)
        plain = run("--benchmark_list_tests")
        self.assertEqual(probe.returncode, 0, probe.stderr)
        names = probe.stdout.split()
        self.assertEqual([n for n in names if n.startswith("Probe/")],
                         ["Probe/op:memset/bytes:65536/manual_time", "Probe/op:memset/bytes:16777216/manual_time"])
        self.assertEqual([n for n in names if not n.startswith("Probe/")], plain.stdout.split())
        self.assertNotIn("Probe/", plain.stdout)

    def test_probe_is_in_help_and_in_the_family_listing(self):
        r = subprocess.run([PROBE_EXE, "--help"], capture_output=True, text=True, timeout=60)
        self.assertIn("Probe: a test family", r.stdout)
        r = subprocess.run([PROBE_EXE, "--families"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [line.split("\t") for line in r.stdout.splitlines()]
        self.assertIn("Probe", [row[0] for row in rows])
        self.assertNotIn("Probe", [line.split("\t")[0] for line in run("--families").stdout.splitlines()])


if __name__ == "__main__":
    write_cases = sys.argv[1:2] == ["--write-cases"]
    if write_cases:
        sys.argv.pop(1)
    EXE = os.path.abspath(sys.argv.pop(1))
    if write_cases:  # run_cli_tests.py --write-cases PATH/TO/gpu_bench: records what it lists now
        with open(CASES, "w") as f:
            json.dump(case_lists(), f, indent=1, sort_keys=True)
            f.write("\n")
        sys.exit(0)
    PROBE_EXE = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
