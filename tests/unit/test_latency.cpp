#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "benchmarks/latency/cases.hpp"
#include "benchmarks/latency/cycle.hpp"

using namespace gpu_bench;

namespace {
// Follows the cycle from line 0: the order the chase visits the lines in.
std::vector<std::uint32_t> walk(const std::vector<std::uint32_t>& next) {
  std::vector<std::uint32_t> order;
  std::uint32_t at = 0;
  do {
    order.push_back(at);
    at = next[at];
  } while (at != 0 && order.size() <= next.size());
  return order;
}
}  // namespace

TEST(LatencyCycle, EveryLineOnceInOneCycleForBothPatterns) {
  for (chase_pattern p : {chase_pattern::stride, chase_pattern::random})
    for (std::uint64_t bytes : {128ull, 256ull, 384ull, 4096ull, 16384ull + 64, 1ull << 20, 3ull << 20}) {
      const std::vector<std::uint32_t> next = chase_cycle(bytes, p);
      ASSERT_EQ(next.size(), bytes / kChaseLineBytes) << bytes;
      EXPECT_EQ(cycle_problem(next), "") << to_name(p) << " " << bytes;
      // Walked from line 0 the cycle returns after exactly every line, each seen once.
      const std::vector<std::uint32_t> order = walk(next);
      ASSERT_EQ(order.size(), next.size()) << to_name(p) << " " << bytes;
      std::vector<bool> seen(next.size(), false);
      for (std::uint32_t line : order) {
        EXPECT_FALSE(seen[line]) << line;
        seen[line] = true;
      }
    }
}

TEST(LatencyCycle, StrideIsAddressOrderAndRandomIsNotButFixedBySeed) {
  const std::vector<std::uint32_t> stride = chase_cycle(64 * 128, chase_pattern::stride);
  for (std::uint32_t i = 0; i < 64; ++i) EXPECT_EQ(stride[i], (i + 1) % 64);
  const std::vector<std::uint32_t> random = chase_cycle(1 << 20, chase_pattern::random);
  EXPECT_EQ(random, chase_cycle(1 << 20, chase_pattern::random));  // the same seed, the same cycle
  EXPECT_NE(random, chase_cycle(1 << 20, chase_pattern::random, kChaseSeed + 1));
  // Few steps to the next line in address order: a prefetcher has nothing to follow.
  std::size_t sequential = 0;
  for (std::size_t i = 0; i < random.size(); ++i) sequential += random[i] == (i + 1) % random.size();
  EXPECT_LT(sequential, random.size() / 100);
}

TEST(LatencyCycle, CycleProblemNamesBrokenCycles) {
  EXPECT_NE(cycle_problem({1, 0, 3, 2}), "");  // two cycles of two
  EXPECT_NE(cycle_problem({1, 2, 2}), "");     // a line visited twice
  EXPECT_NE(cycle_problem({1, 5, 0}), "");     // outside the footprint
  EXPECT_NE(cycle_problem({}), "");
  EXPECT_EQ(cycle_problem({0}), "");  // one line: its own successor
  EXPECT_EQ(cycle_problem({2, 0, 1}), "");
}

TEST(LatencyCycle, FootprintUnderOneLineIsRefused) {
  EXPECT_THROW(chase_cycle(64, chase_pattern::stride), std::invalid_argument);
  EXPECT_THROW(chase_cycle(0, chase_pattern::random), std::invalid_argument);
  EXPECT_EQ(chase_cycle(128 + 64, chase_pattern::random).size(), 1u);  // whole lines only
}

TEST(LatencyTiming, TheDifferenceOfTwoLengthsRemovesTheLaunchCost) {
  // t(N) = launch + N * latency: whatever the launch costs, the difference leaves N loads.
  const double latency = 700e-9;
  const std::uint64_t n = 512;
  for (double launch : {0.0, 4e-6, 25e-6}) {
    const double t_n = launch + static_cast<double>(n) * latency;
    const double t_2n = launch + 2.0 * static_cast<double>(n) * latency;
    const double loads_s = chase_difference_s(t_n, t_2n);
    EXPECT_NEAR(loads_s, static_cast<double>(n) * latency, 1e-15) << launch;
    EXPECT_NEAR(latency_ns(loads_s, n), 700.0, 1e-6) << launch;
  }
}

TEST(LatencyTiming, LoadsMakeTheDifferenceLastAboutTheTarget) {
  EXPECT_EQ(chase_loads_for(1e-6, 256e-6), 256u);
  EXPECT_EQ(chase_loads_for(30e-9, 250e-6), 8192u);  // 8333 rounds to the nearest power of two
  EXPECT_EQ(chase_loads_for(1e-3, 250e-6), kMinChaseLoads);
  EXPECT_EQ(chase_loads_for(1e-12, 1.0), kMaxChaseLoads);
  EXPECT_EQ(chase_loads_for(0, 250e-6), kMinChaseLoads);
  // Sized from the footprint alone, so every round of a case times the same loads.
  EXPECT_EQ(chase_loads_for(expected_latency_s(false, 16 << 10), 250e-6), 8192u);
  EXPECT_EQ(chase_loads_for(expected_latency_s(false, 1u << 30), 250e-6), 256u);
  EXPECT_EQ(chase_loads_for(expected_latency_s(true, 1 << 20), 250e-6), 256u);
  EXPECT_LT(expected_latency_s(false, 16 << 10), expected_latency_s(false, 32 << 20));
}

namespace {
// What the GPU does, emulated: the memory's lines hold the cycle written from `table` (a copy of `next`, or
// what a copy still landing leaves of it), and a chase of `loads` from `line` follows them.
std::uint32_t emulate_chase(const std::vector<std::uint32_t>& memory, std::uint32_t line, std::uint64_t loads) {
  for (std::uint64_t i = 0; i < loads; ++i) line = memory[line];
  return line;
}
std::int64_t offset_of(std::uint32_t line) {
  return static_cast<std::int64_t>(line) * static_cast<std::int64_t>(kChaseLineBytes);
}
}  // namespace

TEST(LatencyWalk, TheCheckFollowsWarmWalkAndSamplesAlongTheCycle) {
  for (chase_pattern p : {chase_pattern::stride, chase_pattern::random}) {
    const std::vector<std::uint32_t> next = chase_cycle(1 << 20, p);
    chase_position expected{next};
    // The warm walk is the whole cycle: it ends back at line 0.
    const std::uint64_t warm = chase_warm_loads(false, 1 << 20);
    ASSERT_EQ(warm, next.size());
    std::uint32_t at = emulate_chase(next, 0, warm);
    EXPECT_EQ(at, 0u);
    std::uint64_t walked = warm;
    EXPECT_EQ(expected.problem(offset_of(at), walked), "");
    // Samples of L and 2L, checked after each (--verify=each) and over several times round the cycle.
    const std::uint64_t loads = 1024;
    for (int sample = 0; sample < 200; ++sample) {
      at = emulate_chase(next, at, loads);
      at = emulate_chase(next, at, 2 * loads);
      walked += 3 * loads;
      if (sample % 37 == 0) {
        EXPECT_EQ(expected.problem(offset_of(at), walked), "") << sample;
      }
    }
    EXPECT_EQ(expected.problem(offset_of(at), walked), "");
    // A load uncounted (or counted and not run) puts the chase one line off.
    EXPECT_NE(expected.problem(offset_of(emulate_chase(next, at, 1)), walked), "");
  }
}

TEST(LatencyWalk, ACycleWrittenFromAHalfCopiedTableIsCaught) {
  // The kernel that writes the cycle reads its table from device memory; had it started before the copy
  // of the table landed, the tail of the table would still hold what the memory held before (zeros here):
  // those lines point to line 0, and the chase ends where the counted loads do not lead.
  for (chase_pattern p : {chase_pattern::stride, chase_pattern::random}) {
    const std::vector<std::uint32_t> next = chase_cycle(32 << 20, p);
    std::vector<std::uint32_t> written = next;
    std::fill(written.begin() + static_cast<std::ptrdiff_t>(written.size() * 3 / 4), written.end(), 0u);
    ASSERT_NE(cycle_problem(written), "");
    chase_position expected{next};
    std::uint32_t at = 0;
    std::uint64_t walked = 0;
    std::string problem;
    for (int sample = 0; sample < 130 && problem.empty(); ++sample) {
      at = emulate_chase(written, at, 3 * 1024);
      walked += 3 * 1024;
      problem = expected.problem(offset_of(at), walked);
    }
    EXPECT_NE(problem, "") << to_name(p);
  }
}

TEST(LatencyWalk, AnEndOutsideTheFootprintOrBetweenLinesIsNamed) {
  const std::vector<std::uint32_t> next = chase_cycle(4096, chase_pattern::random);
  chase_position expected{next};
  EXPECT_NE(expected.problem(-128, 0), "");
  EXPECT_NE(expected.problem(4096, 0), "");
  EXPECT_NE(expected.problem(64, 0), "");
  EXPECT_EQ(expected.problem(0, 0), "");
}

TEST(LatencyWalk, TheWholeCycleIsWalkedFirstWhereItIsShort) {
  EXPECT_EQ(chase_warm_loads(false, 16 << 10), 128u);
  EXPECT_EQ(chase_warm_loads(false, 1 << 20), 8192u);
  EXPECT_EQ(chase_warm_loads(false, 32 << 20), 262144u);  // around the L2's size: where the state matters
  EXPECT_EQ(chase_warm_loads(true, 1 << 20), 8192u);
  EXPECT_EQ(chase_warm_loads(false, 1ull << 30), 0u);  // seconds of loads, and no cache holds it
  EXPECT_EQ(chase_warm_loads(true, 256ull << 20), 0u);
  EXPECT_EQ(chase_warm_loads(false, 64), 0u);  // no whole line
  // Never longer than kWarmWalkS at the expected latency.
  for (std::uint64_t bytes = 128; bytes <= (1ull << 31); bytes *= 2)
    for (bool host : {false, true})
      EXPECT_LE(static_cast<double>(chase_warm_loads(host, bytes)) * expected_latency_s(host, bytes), kWarmWalkS);
}

namespace {
// A node whose pairs are all joined alike (NVLink through NVSwitches, say).
std::optional<std::string> one_class(int, int) {
  return std::string("nvlink");
}
// Four GPUs: 0-1 and 2-3 joined by more links than the other pairs; GPU 3's memory mapped by none but GPU 2.
std::optional<std::string> mixed(int from, int to) {
  if (to == 3 && from != 2) return std::nullopt;
  if ((from / 2) == (to / 2)) return std::string("nv4");
  return std::string("nv2");
}
std::vector<std::string> names_of(const std::vector<latency_case>& cases, latency_mem m) {
  std::vector<std::string> out;
  for (const latency_case& c : cases)
    if (c.mem == m) out.push_back(latency_name(c).str());
  return out;
}
}  // namespace

TEST(LatencyCases, TwoGpusListPeerCasesAtTheDeviceFootprints) {
  latency_plan plan;
  plan.device_footprints = {16u << 10, 1u << 20, 32u << 20, 1u << 30};
  plan.host_footprints = {1u << 20, 256u << 20};
  // One GPU: no other GPU's memory to chase through.
  plan.peers = chased_peers(0, 1, false, false, one_class);
  EXPECT_TRUE(plan.peers.empty());
  EXPECT_TRUE(names_of(latency_grid(plan), latency_mem::peer).empty());
  EXPECT_EQ(latency_grid(plan).size(), 20u);  // the one-GPU default: 8 device cases, 4 of each host kind
  // Two GPUs: GPU 0 chases through GPU 1's memory, at every device footprint and both patterns.
  plan.peers = chased_peers(0, 2, false, false, one_class);
  ASSERT_EQ(plan.peers, std::vector<int>{1});
  const std::vector<std::string> peer = names_of(latency_grid(plan), latency_mem::peer);
  ASSERT_EQ(peer.size(), 8u);
  EXPECT_EQ(peer.front(), "Latency/mem:peer/peer:1/pattern:stride/bytes:16384");
  EXPECT_EQ(peer.back(), "Latency/mem:peer/peer:1/pattern:random/bytes:1073741824");
  EXPECT_EQ(latency_grid(plan).size(), 28u);
  // The other kinds' names are those of a one-GPU machine.
  EXPECT_EQ(names_of(latency_grid(plan), latency_mem::device).front(), "Latency/mem:device/pattern:stride/bytes:16384");
  plan.numa_remote = true;
  // Each kind local then remote, each stride then random.
  EXPECT_EQ(names_of(latency_grid(plan), latency_mem::pinned)[4],
            "Latency/mem:pinned/numa:remote/pattern:stride/bytes:1048576");
}

TEST(LatencyCases, OnePairOfEachKindOfLinkUnlessFull) {
  // From GPU 0: GPU 1 over the wider link, GPU 2 over the narrower; GPU 3 cannot be mapped.
  EXPECT_EQ(chased_peers(0, 4, false, false, mixed), (std::vector<int>{1, 2}));
  EXPECT_EQ(chased_peers(0, 4, true, false, mixed), (std::vector<int>{1, 2}));
  EXPECT_EQ(chased_peers(2, 4, true, false, mixed), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(chased_peers(2, 4, false, false, mixed), (std::vector<int>{0, 3}));
  // Under --device=all each kind once in the node: its first pair, 0-1 and 0-2.
  EXPECT_EQ(chased_peers(0, 4, false, true, mixed), (std::vector<int>{1, 2}));
  for (int d : {1, 2, 3}) EXPECT_TRUE(chased_peers(d, 4, false, true, mixed).empty()) << d;
  // --full under --device=all: every pair from every GPU.
  EXPECT_EQ(chased_peers(3, 4, true, true, mixed), (std::vector<int>{0, 1, 2}));
  // Eight GPUs joined alike: one pair in the node, not one from each GPU.
  EXPECT_EQ(chased_peers(0, 8, false, true, one_class), std::vector<int>{1});
  for (int d = 1; d < 8; ++d) EXPECT_TRUE(chased_peers(d, 8, false, true, one_class).empty()) << d;
  EXPECT_EQ(chased_peers(5, 8, false, false, one_class), std::vector<int>{0});
  EXPECT_EQ(chased_peers(5, 8, true, false, one_class).size(), 7u);
  // No GPU can map another's memory: no peer cases.
  EXPECT_TRUE(chased_peers(0, 4, true, false, [](int, int) { return std::optional<std::string>(); }).empty());
}

TEST(LatencyCases, PeerMemoryIsChasedAcrossTheLinkAsHostMemoryIs) {
  EXPECT_TRUE(across_link(latency_mem::peer));
  EXPECT_FALSE(in_host_memory(latency_mem::peer));
  EXPECT_FALSE(across_link(latency_mem::device));
  for (latency_mem m : {latency_mem::pinned, latency_mem::registered, latency_mem::managed})
    EXPECT_TRUE(across_link(m) && in_host_memory(m)) << to_name(m);
  // A peer load takes under a microsecond: its chases are sized as the host's, 256 loads a quarter millisecond.
  EXPECT_EQ(chase_loads_for(expected_latency_s(across_link(latency_mem::peer), 16 << 10), 250e-6), 256u);
}
