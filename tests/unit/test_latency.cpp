#include <gtest/gtest.h>

#include <cstdint>
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
