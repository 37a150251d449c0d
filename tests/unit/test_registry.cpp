#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/all_host/model.hpp"
#include "benchmarks/latency/cases.hpp"
#include "benchmarks/peer/model.hpp"
#include "harness/run/registry.hpp"

using namespace gpu_bench;

namespace {

// A family declared here only, never registered with the others: dir always, engine sometimes, bytes always.
family_descriptor copy_family() {
  family_descriptor f;
  f.name = "Copy";
  f.summary = "a family of this test";
  f.axes = {{"dir", "{h2d,d2h}"}, optional_axis("engine", "sm"), {"bytes", "{N}"}};
  f.headline = "gbps";
  f.unit = "GB/s";
  f.host_link = "dir:h2d";
  f.plot = "x=bytes;series=dir,engine";
  f.register_cases = [] {};
  return f;
}

// Registers the one case named `name` as a case of copy_family().
void register_one(const case_name& name) {
  family_descriptor f = copy_family();
  f.register_cases = [name] { register_case(name, [](benchmark::State&) {}); };
  register_family(f, 0, false);
}

const family_descriptor& declared(const std::string& name) {
  for (const auto& f : families())
    if (f.name == name) return f;
  throw std::logic_error("no family " + name);
}

}  // namespace

TEST(Registry, RegistersANameOfTheDeclaredAxesInOrder) {
  EXPECT_NO_THROW(register_one(case_name("Copy").add("dir", "h2d").add("bytes", 4)));
  EXPECT_NO_THROW(register_one(case_name("Copy").add("dir", "d2h").add("engine", "sm").add("bytes", 4)));
  EXPECT_EQ(registered_names().back(), "Copy/dir:d2h/engine:sm/bytes:4/manual_time");
}

TEST(Registry, RefusesANameWhoseKeysAreNotTheDeclaredAxesInOrder) {
  const std::size_t before = registered_names().size();
  // Out of order, not declared, an axis every case carries left out, another family's name.
  EXPECT_THROW(register_one(case_name("Copy").add("bytes", 4).add("dir", "h2d")), std::logic_error);
  EXPECT_THROW(register_one(case_name("Copy").add("dir", "h2d").add("mem", "pinned").add("bytes", 4)),
               std::logic_error);
  EXPECT_THROW(register_one(case_name("Copy").add("dir", "h2d")), std::logic_error);
  EXPECT_THROW(register_one(case_name("Copy").add("engine", "sm").add("bytes", 4)), std::logic_error);
  EXPECT_THROW(register_one(case_name("Other").add("dir", "h2d").add("bytes", 4)), std::logic_error);
  EXPECT_EQ(registered_names().size(), before);
  // Outside a family's registration there is no family to check against.
  EXPECT_THROW(register_case(case_name("Copy").add("dir", "h2d").add("bytes", 4), [](benchmark::State&) {}),
               std::logic_error);
}

TEST(Registry, ASingleGpuCaseNamesOnlyTheOtherGpusItUses) {
  // A case of the GPU being registered that also reads GPU 1's memory: accepted, and sampled on both.
  family_descriptor f = copy_family();
  f.register_cases = [] {
    EXPECT_EQ(registering_device(), 2);
    register_case(case_name("Copy").add("dir", "h2d").add("bytes", 8), [](benchmark::State&) {}, {1});
  };
  EXPECT_NO_THROW(register_family(f, 2, true));
  EXPECT_EQ(registered_names().back(), "Copy/dir:h2d/bytes:8/device:2/manual_time");
  EXPECT_EQ(registering_device(), -1);  // outside a registration
  // Naming its own GPU among the others is a mistake of the family's.
  f.register_cases = [] {
    register_case(case_name("Copy").add("dir", "d2h").add("bytes", 8), [](benchmark::State&) {}, {0, 1});
  };
  EXPECT_THROW(register_family(f, 0, false), std::logic_error);
}

TEST(Registry, CaseNameProblemSaysWhy) {
  const family_descriptor f = copy_family();
  EXPECT_EQ(case_name_problem(f, case_name("Copy").add("dir", "h2d").add("bytes", 4)), "");
  EXPECT_NE(case_name_problem(f, case_name("Copy").add("bytes", 4).add("dir", "h2d")).find("key dir"),
            std::string::npos);
  EXPECT_NE(case_name_problem(f, case_name("Copy").add("dir", "h2d")).find("no key bytes"), std::string::npos);
}

TEST(Registry, NamePatternFollowsTheAxes) {
  const family_descriptor f = copy_family();
  EXPECT_EQ(f.name_pattern(), "  Copy/dir:{h2d,d2h}[/engine:sm]/bytes:{N}\n");
  EXPECT_EQ(f.name_pattern({{"dir", "d2h"}, "engine", "bytes"}), "  Copy/dir:d2h/engine:sm/bytes:{N}\n");
  EXPECT_EQ(f.name_pattern({"dir", "bytes"}, "bytes"), "  Copy/dir:{h2d,d2h}/\n       bytes:{N}\n");
  EXPECT_THROW(f.name_pattern({"bytes", "dir"}), std::logic_error);
  EXPECT_THROW(f.name_pattern({"dir", "mem"}), std::logic_error);
}

TEST(Registry, RefusesAMalformedDeclaration) {
  EXPECT_EQ(declaration_problem(copy_family()), "");
  auto with = [](auto change) {
    family_descriptor f = copy_family();
    change(f);
    return declaration_problem(f);
  };
  EXPECT_NE(with([](family_descriptor& f) { f.name = "copy"; }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.axes.push_back({"dir", "{x}"}); }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.axes.push_back({"device", "{N}"}); }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.axes.push_back({"Bytes", "{N}"}); }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.host_link = "mem:pinned"; }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.link_bound = "mem:pinned"; }), "");
  EXPECT_EQ(with([](family_descriptor& f) { f.link_bound = "dir:h2d|engine:sm"; }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.link_span = "mem:pinned"; }), "");
  EXPECT_EQ(with([](family_descriptor& f) { f.link_span = "dir:bidir"; }), "");
  EXPECT_NE(with([](family_descriptor& f) {
              f.machine_variance = "mem:pageable";
              f.machine_variance_cause = "the host CPU";
            }),
            "");
  EXPECT_EQ(with([](family_descriptor& f) {
              f.machine_variance = "dir:h2d|engine:sm";
              f.machine_variance_cause = "the host CPU";
            }),
            "");
  EXPECT_NE(with([](family_descriptor& f) { f.machine_variance = "yes"; }), "");                 // no cause named
  EXPECT_NE(with([](family_descriptor& f) { f.machine_variance_cause = "the host CPU"; }), "");  // a cause of none
  EXPECT_EQ(with([](family_descriptor& f) { f.revisions = "2=dir:bidir;3=dir:h2d|engine:sm"; }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.revisions = "1=dir:bidir"; }), "");  // way 1 is every other case's
  EXPECT_NE(with([](family_descriptor& f) { f.revisions = "dir:bidir"; }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.revisions = "2=mem:pinned"; }), "");  // not an axis of the family
  EXPECT_EQ(with([](family_descriptor& f) { f.revisions = "2=bytes>=1073741824|engine:sm"; }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.revisions = "2=size>=4"; }), "");     // not an axis of the family
  EXPECT_NE(with([](family_descriptor& f) { f.revisions = "2=bytes>=1e9"; }), "");  // not a whole number
  EXPECT_NE(with([](family_descriptor& f) { f.host_link = "bytes>="; }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.plot = "x=bytes;series=mem"; }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.plot = "x=bytes;colour=dir"; }), "");
  EXPECT_EQ(with([](family_descriptor& f) { f.plot = "x=bytes;series=dir,engine;xlabel=copy size"; }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.headline.clear(); }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.register_cases = nullptr; }), "");
  EXPECT_NE(with([](family_descriptor& f) { f.buffers_of_size = 0; }), "");
}

TEST(Registry, ALargestSizeNeedsTheMostBuffersOfTheSelectedFamilies) {
  // A copy holds two buffers of its size, a Latency case one: a Latency-only run of 50 GiB needs 50 GiB,
  // not the 100 GiB that would refuse it on an 80 GB GPU.
  EXPECT_EQ(declared("Transfer").buffers_of_size, 2u);
  EXPECT_EQ(declared("Latency").buffers_of_size, 1u);
  const std::vector<std::string> names{"Transfer/dir:h2d/mem:pinned/bytes:4/manual_time",
                                       "Transfer/dir:d2d/mem:device/bytes:4/manual_time",
                                       "Latency/mem:device/pattern:stride/bytes:128/manual_time",
                                       "Latency/mem:pinned/pattern:random/bytes:128/manual_time"};
  const std::uint64_t g50 = std::uint64_t{50} << 30;
  const size_need latency = memory_for_size(g50, "^Latency/", names);
  EXPECT_EQ(latency.buffers, 1u);
  EXPECT_EQ(latency.bytes, g50);
  EXPECT_EQ(memory_for_size(g50, "mem:pinned/pattern:random", names).bytes, g50);
  for (const std::string filter : {"", "all", "^Transfer/", "mem:pinned", "-mem:device/pattern"}) {
    const size_need copy = memory_for_size(g50, filter, names);
    EXPECT_EQ(copy.buffers, 2u) << filter;
    EXPECT_EQ(copy.bytes, 2 * g50) << filter;
  }
  EXPECT_EQ(memory_for_size(g50, "^Overlap/", names).buffers, 0u);  // selects none of `names`
}

TEST(Registry, TheMultiGpuFamiliesNamesAreTheirDeclaredAxes) {
  // Without GPUs these families register nothing, so their names are checked here against their models.
  const std::vector<std::uint64_t> sizes{4, 1u << 20};
  for (const peer_case& c : peer_grid(4, sizes)) EXPECT_EQ(case_name_problem(declared("Peer"), peer_name(c)), "");
  for (const peer_case& c : peer_latency_grid(4))
    EXPECT_EQ(case_name_problem(declared("PeerLatency"), peer_latency_name(c)), "");
  for (peer_pattern p : all_values<peer_pattern>())
    for (bool sm : {false, true})
      for (bool together : {false, true})
        EXPECT_EQ(case_name_problem(declared("PeerPattern"), peer_pattern_name(p, 4, sm, together)), "");
  for (host_pattern p : all_values<host_pattern>())
    for (direction d : {direction::h2d, direction::d2h})
      EXPECT_EQ(case_name_problem(declared("AllHost"), all_host_name(d, 4, p)), "");
  for (const all_host_case& c : all_host_grid(sizes))
    EXPECT_EQ(case_name_problem(declared("AllHost"), all_host_name(c.dir, c.bytes, c.pattern)), "");
}

TEST(Registry, LatencyListsPeerCasesWhereThereAreTwoGpus) {
  // Without GPUs the family registers no peer case, so the names two GPUs give are checked here.
  latency_plan plan;
  plan.device_footprints = {16u << 10, 1u << 30};
  plan.host_footprints = {1u << 20};
  plan.numa_remote = true;
  plan.peers = chased_peers(0, 2, false, false, [](int, int) { return std::optional<std::string>("nvlink"); });
  std::size_t peer = 0;
  for (const latency_case& c : latency_grid(plan)) {
    EXPECT_EQ(case_name_problem(declared("Latency"), latency_name(c)), "") << latency_name(c).str();
    peer += c.mem == latency_mem::peer;
  }
  EXPECT_EQ(peer, 4u);
  EXPECT_NE(declared("Latency").plot.find("peer"), std::string::npos);  // a line per peer in the plot
}

TEST(Registry, AProcessTouchesTheGpusOfItsSelectedCasesAlone) {
  family_descriptor single = copy_family();
  single.register_cases = [] {
    register_case(case_name("Copy").add("dir", "h2d").add("bytes", 64), [](benchmark::State&) {});
  };
  register_family(single, 5, true);
  family_descriptor pair = copy_family();
  pair.register_cases = [] {
    register_case(case_name("Copy").add("dir", "d2h").add("bytes", 64), [](benchmark::State&) {}, {6, 7});
  };
  register_family(pair, -1, false);
  EXPECT_EQ(gpus_of_selected_cases("^Copy/dir:h2d/bytes:64/device:5"), (std::vector<int>{5}));
  EXPECT_EQ(gpus_of_selected_cases("^Copy/dir:d2h/bytes:64/"), (std::vector<int>{6, 7}));
  EXPECT_EQ(gpus_of_selected_cases("^Copy/dir:(h2d/bytes:64/device:5|d2h/bytes:64/)"), (std::vector<int>{5, 6, 7}));
  EXPECT_TRUE(gpus_of_selected_cases("^Nothing/").empty());
  EXPECT_EQ(cases_on_one_gpu({"Copy/dir:d2h/bytes:64/manual_time", "Copy/dir:h2d/bytes:64/device:5/manual_time",
                              "Copy/dir:bidir/bytes:64/manual_time"}),
            (std::vector<std::string>{"Copy/dir:h2d/bytes:64/device:5/manual_time"}));
}

TEST(Registry, AOneGpuRunKeepsItsGpusBuffersThroughCasesBetweenOthers) {
  // --device=0 on four GPUs: a copy between GPUs 2 and 3 keeps GPU 0's buffers, which the next single-GPU
  // case would otherwise pin and fill again; without a GPU of the run's own (-1), the running case's alone.
  EXPECT_EQ(gpus_kept_for({2, 3}, 0), (std::vector<int>{2, 3, 0}));
  EXPECT_EQ(gpus_kept_for({0, 3}, 0), (std::vector<int>{0, 3}));
  EXPECT_EQ(gpus_kept_for({2, 3}, -1), (std::vector<int>{2, 3}));
  EXPECT_EQ(gpus_kept_for({1}, -1), (std::vector<int>{1}));
}

TEST(Registry, EveryFamilyIsWellDeclared) {
  ASSERT_GT(families().size(), 10u);
  for (const auto& f : families()) EXPECT_EQ(declaration_problem(f), "") << f.name;
}

TEST(Registry, ALinkBoundCaseMatchesTheRuleAndIsAMebibyteOrMore) {
  family_descriptor f = copy_family();
  f.link_bound = "dir:h2d|engine:sm";
  EXPECT_TRUE(is_link_bound(f, "Copy/dir:h2d/bytes:1048576/manual_time"));
  EXPECT_TRUE(is_link_bound(f, "Copy/dir:d2h/engine:sm/bytes:1073741824"));
  EXPECT_FALSE(is_link_bound(f, "Copy/dir:h2d/bytes:1048572/manual_time"));  // below a mebibyte
  EXPECT_FALSE(is_link_bound(f, "Copy/dir:d2h/bytes:1048576/manual_time"));  // no token of the rule
  EXPECT_FALSE(is_link_bound(f, "Copy/dir:h2dx/bytes:1048576"));             // a token only as a whole value
  f.link_bound = "yes";
  EXPECT_TRUE(is_link_bound(f, "Copy/dir:d2h/bytes:4194304"));
  EXPECT_FALSE(is_link_bound(f, "Copy/dir:d2h/bytes:4096"));
  EXPECT_FALSE(is_link_bound(f, "Copy/dir:d2h"));  // no size to judge by
  f.link_bound = "no";
  EXPECT_FALSE(is_link_bound(f, "Copy/dir:h2d/bytes:1073741824"));
}

TEST(Registry, ACaseSpansTheLinksStatesWhereItIsLinkBoundAndItsSpanRuleHolds) {
  family_descriptor f = copy_family();
  f.link_bound = "yes";
  f.link_span = "dir:bidir";
  EXPECT_TRUE(spans_link_states(f, "Copy/dir:bidir/bytes:1048576/manual_time"));
  EXPECT_FALSE(spans_link_states(f, "Copy/dir:h2d/bytes:1048576/manual_time"));
  EXPECT_FALSE(spans_link_states(f, "Copy/dir:bidir/bytes:65536/manual_time"));  // not link-bound
  f.link_bound = "no";
  EXPECT_FALSE(spans_link_states(f, "Copy/dir:bidir/bytes:1073741824/manual_time"));
  f.link_bound = "yes";
  f.link_span = "no";
  EXPECT_FALSE(spans_link_states(f, "Copy/dir:bidir/bytes:1073741824/manual_time"));
}

TEST(Registry, TheDeclaredFamiliesLinkBoundCasesArePinnedAndRegisteredCopiesAndAllHost) {
  EXPECT_TRUE(is_link_bound("Transfer/dir:bidir/mem:pinned/bytes:67108864/manual_time"));
  EXPECT_TRUE(is_link_bound("Transfer/dir:h2d/mem:registered/engine:sm/bytes:1048576/manual_time"));
  EXPECT_TRUE(is_link_bound("AllHost/dir:h2d/bytes:268435456/manual_time"));
  EXPECT_TRUE(is_link_bound("AllHost/dir:bidir/bytes:268435456/manual_time"));
  EXPECT_FALSE(is_link_bound("Transfer/dir:h2d/mem:pageable/bytes:1048576/manual_time"));
  EXPECT_FALSE(is_link_bound("Transfer/dir:h2d/mem:pinned/bytes:65536/manual_time"));
  EXPECT_FALSE(is_link_bound("Transfer/dir:d2d/mem:device/cache:cold/bytes:268435456/manual_time"));
  EXPECT_FALSE(is_link_bound("NoSuchFamily/dir:h2d/mem:pinned/bytes:1048576"));
}

TEST(Registry, AllHostsBidirectionalCopiesSpanTheLinksStates) {
  const auto all_host = std::find_if(families().begin(), families().end(),
                                     [](const family_descriptor& f) { return f.name == "AllHost"; });
  ASSERT_NE(all_host, families().end());
  EXPECT_TRUE(spans_link_states(*all_host, "AllHost/dir:bidir/bytes:268435456/manual_time"));
  EXPECT_FALSE(spans_link_states(*all_host, "AllHost/dir:h2d/bytes:268435456/manual_time"));
}

TEST(Registry, TransfersLinkBoundBidirectionalCopiesSpanTheLinksStates) {
  const auto transfer = std::find_if(families().begin(), families().end(),
                                     [](const family_descriptor& f) { return f.name == "Transfer"; });
  ASSERT_NE(transfer, families().end());
  EXPECT_TRUE(spans_link_states(*transfer, "Transfer/dir:bidir/mem:pinned/bytes:67108864/manual_time"));
  EXPECT_TRUE(spans_link_states(*transfer, "Transfer/dir:bidir/mem:registered/engine:sm/bytes:1048576/manual_time"));
  EXPECT_FALSE(spans_link_states(*transfer, "Transfer/dir:h2d/mem:pinned/bytes:67108864/manual_time"));
  EXPECT_FALSE(spans_link_states(*transfer, "Transfer/dir:bidir/mem:pageable/bytes:67108864/manual_time"));
  EXPECT_FALSE(spans_link_states(*transfer, "Transfer/dir:bidir/mem:pinned/bytes:65536/manual_time"));
}

TEST(Registry, ACaseVariesWithTheMachineWhereItsRuleHolds) {
  family_descriptor f = copy_family();
  EXPECT_FALSE(varies_with_machine(f, "Copy/dir:h2d/bytes:4/manual_time"));  // "no" unless declared
  f.machine_variance = "dir:h2d|engine:sm";
  EXPECT_TRUE(varies_with_machine(f, "Copy/dir:h2d/bytes:4/manual_time"));
  EXPECT_TRUE(varies_with_machine(f, "Copy/dir:d2h/engine:sm/bytes:1073741824"));
  EXPECT_FALSE(varies_with_machine(f, "Copy/dir:d2h/bytes:4/manual_time"));  // no token of the rule
  EXPECT_FALSE(varies_with_machine(f, "Copy/dir:h2dx/bytes:4"));             // a token only as a whole value
  f.machine_variance = "yes";
  EXPECT_TRUE(varies_with_machine(f, "Copy/dir:d2h/bytes:4"));
}

TEST(Registry, TheCostlierHostDrivenFamiliesTakeHostRounds) {
  for (const char* name : {"Batch", "HostBlocking"})
    EXPECT_TRUE(takes_host_rounds(declared(name), std::string(name) + "/any/manual_time")) << name;
  for (const char* name : {"SmallCopy", "Alloc", "Transfer", "Overlap", "Streams", "Latency", "AllHost"})
    EXPECT_FALSE(takes_host_rounds(declared(name), std::string(name) + "/any/manual_time")) << name;
  EXPECT_TRUE(takes_host_rounds("Batch/api:loop/copies:1/bytes:4/manual_time"));
  EXPECT_FALSE(takes_host_rounds("Transfer/dir:h2d/mem:pageable/bytes:1048576/manual_time"));
  EXPECT_FALSE(takes_host_rounds("NoSuchFamily/x"));
}

TEST(Registry, ARulesSizeTokenHoldsFromItsNumberUp) {
  family_descriptor f = copy_family();
  f.host_link = "bytes>=1073741824|engine:sm";
  EXPECT_TRUE(crosses_host_link(f, "Copy/dir:h2d/bytes:1073741824/manual_time"));
  EXPECT_TRUE(crosses_host_link(f, "Copy/dir:h2d/bytes:4294967296/manual_time"));  // any size above
  EXPECT_FALSE(crosses_host_link(f, "Copy/dir:h2d/bytes:1073741823/manual_time"));
  EXPECT_FALSE(crosses_host_link(f, "Copy/dir:h2d/bytes:67108864/manual_time"));
  EXPECT_TRUE(crosses_host_link(f, "Copy/dir:h2d/engine:sm/bytes:4/manual_time"));  // the other token
  EXPECT_FALSE(crosses_host_link(f, "Copy/dir:h2d"));                               // no size to judge by
  EXPECT_FALSE(crosses_host_link(f, "Copy/dir:h2d/bytes:big/manual_time"));         // not a whole number
}

TEST(Registry, ASmallRoundsCaseMatchesTheRuleAndIsUnderItsFamilysSize) {
  family_descriptor f = copy_family();
  f.small_rounds = "dir:h2d";
  EXPECT_TRUE(takes_small_rounds(f, "Copy/dir:h2d/bytes:4/manual_time"));
  EXPECT_TRUE(takes_small_rounds(f, "Copy/dir:h2d/bytes:1048575/manual_time"));
  EXPECT_FALSE(takes_small_rounds(f, "Copy/dir:h2d/bytes:1048576/manual_time"));  // a mebibyte, by default
  EXPECT_FALSE(takes_small_rounds(f, "Copy/dir:d2h/bytes:4/manual_time"));        // no token of the rule
  EXPECT_TRUE(takes_small_rounds(f, "Copy/dir:h2d"));                             // no size to judge by: the rule alone
  EXPECT_EQ(round_kind_of(f, "Copy/dir:h2d/bytes:4/manual_time"), round_kind::link);
  f.host_rounds = "yes";
  EXPECT_EQ(round_kind_of(f, "Copy/dir:h2d/bytes:4/manual_time"), round_kind::link);  // the link rounds first
  EXPECT_EQ(round_kind_of(f, "Copy/dir:d2h/bytes:4/manual_time"), round_kind::host);
  f.small_rounds_below = 64ull << 20;
  EXPECT_TRUE(takes_small_rounds(f, "Copy/dir:h2d/bytes:1048576/manual_time"));
  EXPECT_FALSE(takes_small_rounds(f, "Copy/dir:h2d/bytes:67108864/manual_time"));
  EXPECT_EQ(round_kind_of(f, "Copy/dir:h2d/bytes:67108864/manual_time"), round_kind::host);
}

TEST(Registry, CopiesUnder256MiBButFaultedManagedOnesTakeTheSmallRounds) {
  for (const char* mem : {"pinned", "write_combined", "registered", "mapped", "pageable", "managed_prefetch"}) {
    const std::string kind = mem;
    EXPECT_TRUE(takes_small_rounds("Transfer/dir:h2d/mem:" + kind + "/bytes:4/manual_time")) << mem;
    EXPECT_TRUE(takes_small_rounds("Transfer/dir:bidir/mem:" + kind + "/bytes:67108864/manual_time")) << mem;
    EXPECT_FALSE(takes_small_rounds("Transfer/dir:d2h/mem:" + kind + "/bytes:268435456/manual_time")) << mem;
  }
  EXPECT_TRUE(takes_small_rounds("Transfer/dir:d2d/mem:device/cache:cold/bytes:65536/manual_time"));
  EXPECT_EQ(round_kind_of("Transfer/dir:h2d/mem:pageable/bytes:67108864/manual_time"), round_kind::link);
  // A faulted copy draws a step of its own in each process, whatever its rounds: it keeps the full rounds.
  EXPECT_EQ(round_kind_of("Transfer/dir:h2d/mem:managed_fault/bytes:4/manual_time"), round_kind::full);
  EXPECT_EQ(round_kind_of("Transfer/dir:h2d/mem:pinned/bytes:1073741824/manual_time"), round_kind::link);  // bound
  EXPECT_EQ(round_kind_of("SmallCopy/dir:h2d/mem:pageable/bytes:4/manual_time"), round_kind::link);
  EXPECT_EQ(round_kind_of("SmallCopy/dir:d2h/mem:mapped/bytes:64/manual_time"), round_kind::link);
  EXPECT_EQ(round_kind_of("HostBlocking/mem:pinned/bytes:16777216/mode:async_copy/manual_time"), round_kind::link);
  EXPECT_EQ(round_kind_of("HostBlocking/mem:pageable/bytes:268435456/mode:sync_copy/manual_time"), round_kind::host);
}

TEST(Registry, TheHostTimedMicroOpsRideTheLinkRounds) {
  // Their cases took 1.1 to 1.2 s a round on an H200 (e085eef's default pair): cheap enough for two more rounds.
  for (const char* name : {"SyncPlacement", "Events", "Launch"}) {
    EXPECT_TRUE(takes_small_rounds(declared(name), std::string(name) + "/op:any/manual_time")) << name;
    EXPECT_FALSE(takes_host_rounds(declared(name), std::string(name) + "/op:any/manual_time")) << name;
  }
  EXPECT_EQ(round_kind_of("Events/op:record/timing:off/manual_time"), round_kind::link);
  EXPECT_EQ(round_kind_of("SyncPlacement/op:copy/sync:before/manual_time"), round_kind::link);
  EXPECT_EQ(round_kind_of("Launch/op:graph_replay/kernels:100/manual_time"), round_kind::link);
  // Batch's copies under 64 KiB ride them too; its larger ones keep --host_rounds.
  EXPECT_EQ(round_kind_of("Batch/api:batch/copies:1024/bytes:4096/manual_time"), round_kind::link);
  EXPECT_EQ(round_kind_of("Batch/api:loop/copies:4096/bytes:65536/manual_time"), round_kind::host);
  // Alloc's cases under 1 GiB ride them as their first cases, so they run first in every round.
  EXPECT_EQ(round_kind_of("Alloc/op:malloc_host/bytes:67108864/manual_time"), round_kind::link);
  EXPECT_EQ(round_kind_of("Alloc/op:malloc_host/bytes:1073741824/manual_time"), round_kind::full);
}

TEST(Registry, NvmlReadsNoCaseThatVariesWithTheMachineWhileItRuns) {
  const std::string transfer_name = "Transfer";
  const family_descriptor& transfer = declared(transfer_name);
  EXPECT_EQ(health_poll_ms_for(declared("SyncPlacement"), "SyncPlacement/op:copy/sync:before/manual_time", 10), 0);
  EXPECT_EQ(health_poll_ms_for(declared("Events"), "Events/op:record/timing:off/manual_time", 10), 0);
  EXPECT_EQ(health_poll_ms_for(transfer, "Transfer/dir:h2d/mem:pageable/bytes:1048576/manual_time", 10), 0);
  EXPECT_EQ(health_poll_ms_for(transfer, "Transfer/dir:h2d/mem:pinned/bytes:1048576/manual_time", 10), 10);
  EXPECT_EQ(health_poll_ms_for(transfer, "Transfer/dir:h2d/mem:pinned/bytes:1048576/manual_time", 0), 0);
  EXPECT_EQ(health_poll_ms_for(declared("Overlap"), "Overlap/any", 25), 25);
}

TEST(Registry, TheHostDrivenCasesAndPageableAndManagedCopiesVaryWithTheMachine) {
  for (const char* name : {"SyncPlacement", "Events", "Launch", "HostBlocking", "Alloc", "SmallCopy", "Batch"}) {
    EXPECT_EQ(declared(name).machine_variance, "yes") << name;
    EXPECT_EQ(declared(name).machine_variance_cause, kHostCpuStateCause) << name;
  }
  EXPECT_TRUE(varies_with_machine(declared("SyncPlacement"), "SyncPlacement/op:copy/sync:before/manual_time"));
  const std::string transfer_name = "Transfer";  // a named string: GCC 13 warns of a temporary's reference
  const family_descriptor& transfer = declared(transfer_name);
  EXPECT_TRUE(varies_with_machine(transfer, "Transfer/dir:h2d/mem:pageable/bytes:1048576/manual_time"));
  EXPECT_TRUE(varies_with_machine(transfer, "Transfer/dir:d2h/mem:managed_prefetch/bytes:268435456/manual_time"));
  EXPECT_TRUE(varies_with_machine(transfer, "Transfer/dir:h2d/mem:managed_fault/bytes:4096/manual_time"));
  EXPECT_FALSE(varies_with_machine(transfer, "Transfer/dir:h2d/mem:pinned/bytes:1048576/manual_time"));
  EXPECT_FALSE(varies_with_machine(transfer, "Transfer/dir:d2d/mem:device/cache:cold/bytes:1048576/manual_time"));
  EXPECT_NE(transfer.machine_variance_cause.find("host's memory"), std::string::npos);
  const std::string overlap_name = "Overlap";
  const family_descriptor& overlap = declared(overlap_name);
  EXPECT_TRUE(
      varies_with_machine(overlap, "Overlap/schedule:serial/mem:pageable/streams:1/bytes:536870912/manual_time"));
  EXPECT_FALSE(
      varies_with_machine(overlap, "Overlap/schedule:serial/mem:pinned/streams:1/bytes:536870912/manual_time"));
  EXPECT_EQ(overlap.machine_variance_cause, transfer.machine_variance_cause);
  for (const char* name : {"Streams", "Latency", "AllHost", "Peer", "PeerPattern"})
    EXPECT_EQ(declared(name).machine_variance, "no") << name;
  const family_descriptor& peer_latency = declared("PeerLatency");
  EXPECT_TRUE(varies_with_machine(peer_latency, "PeerLatency/src:0/dst:1/peer_access:off/bytes:4/manual_time"));
  EXPECT_FALSE(varies_with_machine(peer_latency, "PeerLatency/src:0/dst:1/peer_access:on/bytes:4/manual_time"));
  EXPECT_NE(peer_latency.machine_variance_cause.find("staging"), std::string::npos);
}

TEST(Registry, TheContextNamesEachFamilysMachineVarianceAndItsCause) {
  const context_list c = family_context();
  auto value = [&c](const std::string& key) -> std::optional<std::string> {
    for (const auto& [k, v] : c)
      if (k == key) return v;
    return std::nullopt;
  };
  EXPECT_EQ(value("family.syncplacement.machine_variance"), "yes");
  EXPECT_EQ(value("family.syncplacement.machine_variance_cause"), kHostCpuStateCause);
  EXPECT_EQ(value("family.transfer.machine_variance"), "mem:pageable|mem:managed_prefetch|mem:managed_fault");
  EXPECT_EQ(value("family.streams.machine_variance"), "no");
  EXPECT_EQ(value("family.streams.machine_variance_cause"), std::nullopt);  // no cause where none varies
  // The cases measured in a later way than earlier versions did.
  EXPECT_EQ(value("family.transfer.revisions"), "2=dir:bidir;3=mem:pageable;4=mem:managed_prefetch");
  // The CPU stages a pageable copy, and a managed prefetch is timed by the host clock.
  EXPECT_EQ(value("family.transfer.fast_cpu"), "mem:pageable|mem:managed_prefetch");
  EXPECT_EQ(value("family.allhost.revisions"), "2=dir:bidir");
  EXPECT_EQ(value("family.streams.revisions"), std::nullopt);
  // The size from which a case of the small_rounds rule keeps three rounds; none where no case rides them.
  EXPECT_EQ(value("family.transfer.small_rounds_below"), "268435456");
  EXPECT_EQ(value("family.events.small_rounds_below"), "1048576");
  EXPECT_EQ(value("family.alloc.small_rounds_below"), "1073741824");
  EXPECT_EQ(value("family.batch.small_rounds_below"), "65536");
  EXPECT_EQ(value("family.alloc.revisions"), "2=bytes>=1073741824");
}
