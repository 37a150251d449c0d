#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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
