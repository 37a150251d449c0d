#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "harness/measure/stats.hpp"

namespace gpu_bench {
namespace {

TEST(Stats, PercentilesInterpolateBetweenRanks) {
  EXPECT_DOUBLE_EQ(p50({}), 0.0);
  EXPECT_DOUBLE_EQ(p50({7}), 7.0);
  EXPECT_DOUBLE_EQ(p50({3, 1, 2}), 2.0);      // unsorted input
  EXPECT_DOUBLE_EQ(p50({1, 2, 3, 10}), 2.5);  // between the middle two
  EXPECT_DOUBLE_EQ(percentile({0, 10}, 0.25), 2.5);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 9}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 9}, 1.0), 9.0);
  std::vector<double> v;
  for (int i = 1; i <= 101; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(p99(v), 100.0);
  EXPECT_THROW(percentile(v, 1.5), std::invalid_argument);
}

// numpy.percentile's default (linear) on the same values: v = [0.31, 0.12, 0.77, 0.25, 0.95, 0.44, 0.58, 0.19]
// gives 0.375, 0.824 and 0.9374 at 50, 90 and 99; 1..1000 gives 500.5, 900.1 and 990.01.
TEST(Stats, PercentilesOfOneSortAreNumpysLinearOnes) {
  const std::vector<double> v = {0.31, 0.12, 0.77, 0.25, 0.95, 0.44, 0.58, 0.19};
  const std::vector<double> q = percentiles(v, {0.50, 0.90, 0.99});
  ASSERT_EQ(q.size(), 3u);
  EXPECT_NEAR(q[0], 0.375, 1e-12);
  EXPECT_NEAR(q[1], 0.824, 1e-12);
  EXPECT_NEAR(q[2], 0.9374, 1e-12);
  std::vector<double> w;
  for (int i = 1000; i >= 1; --i) w.push_back(i);
  const std::vector<double> qw = percentiles(w, {0.50, 0.90, 0.99});
  EXPECT_NEAR(qw[0], 500.5, 1e-9);
  EXPECT_NEAR(qw[1], 900.1, 1e-9);
  EXPECT_NEAR(qw[2], 990.01, 1e-9);
  EXPECT_EQ(percentiles({}, {0.5, 0.99}), (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(percentiles({4.0}, {0.5, 0.9, 0.99}), (std::vector<double>{4.0, 4.0, 4.0}));
  EXPECT_THROW(percentiles(v, {0.5, -0.1}), std::invalid_argument);
  // One definition for both: each of percentiles' answers is percentile's.
  for (const double p : {0.0, 0.1, 0.5, 0.9, 0.99, 1.0}) EXPECT_EQ(percentiles(v, {p}).front(), percentile(v, p));
}

TEST(Stats, SamplePercentilesNeverCross) {
  // Skewed samples as a copy's are: most near one time, a tail of slow ones.
  std::vector<double> v;
  unsigned x = 12345;
  for (int i = 0; i < 997; ++i) {
    x = x * 1103515245u + 12345u;
    const double u = static_cast<double>((x >> 8) % 10000) / 10000.0;
    v.push_back(i % 50 == 0 ? 10.0 + u : 1.0 + 0.01 * u);
    const std::vector<double> q = percentiles(v, {0.50, 0.90, 0.99});
    ASSERT_LE(q[0], q[1]) << v.size();
    ASSERT_LE(q[1], q[2]) << v.size();
  }
}

TEST(Stats, TheMedianIgnoresAMinorityOfSlowIterations) {
  // 10 iterations at 1 ms, 4 at 1.6 ms (a neighbour sharing the link): the mean moves 17%, the median not.
  std::vector<double> v(10, 1.0);
  v.insert(v.end(), 4, 1.6);
  EXPECT_DOUBLE_EQ(p50(v), 1.0);
}

}  // namespace
}  // namespace gpu_bench

namespace gpu_bench {
namespace {

TEST(Stats, MedianConfidenceRanksMatchTheBinomialTables) {
  // Published ranks for a 95% interval of the median (1-based lower rank): n=6 -> 1, n=10 -> 2, n=20 -> 6,
  // n=50 -> 18, n=100 -> 40.
  EXPECT_EQ(median_ci_ranks(5), std::make_pair(std::size_t{0}, std::size_t{4}));  // too few: the extremes
  EXPECT_EQ(median_ci_ranks(6), std::make_pair(std::size_t{0}, std::size_t{5}));
  EXPECT_EQ(median_ci_ranks(10), std::make_pair(std::size_t{1}, std::size_t{8}));
  EXPECT_EQ(median_ci_ranks(20), std::make_pair(std::size_t{5}, std::size_t{14}));
  EXPECT_EQ(median_ci_ranks(50), std::make_pair(std::size_t{17}, std::size_t{32}));
  EXPECT_EQ(median_ci_ranks(100), std::make_pair(std::size_t{39}, std::size_t{60}));
  // The normal approximation takes over smoothly.
  const auto exact = median_ci_ranks(2000), approx = median_ci_ranks(2001);
  EXPECT_NEAR(static_cast<double>(approx.first), static_cast<double>(exact.first), 1.0);
}

TEST(Stats, NoiseIsTheIntervalsHalfWidthOverTheMedian) {
  std::vector<double> v;
  for (int i = 1; i <= 10; ++i) v.push_back(100.0 + i);  // 101 .. 110, median 105.5
  // ranks 1 and 8 (0-based): 102 and 109.
  EXPECT_NEAR(median_noise_pct(v), 100.0 * (109 - 102) / 2.0 / 105.5, 1e-12);
  EXPECT_DOUBLE_EQ(median_noise_pct(std::vector<double>(20, 3.0)), 0.0);
  EXPECT_DOUBLE_EQ(median_noise_pct({5.0}), 0.0);
}

TEST(Stats, APlacedMedianWeighsEveryPlacementAlike) {
  // Placement 0 at 1.0 (five samples), placement 1 at 4.0 (one): the center is their geometric mean, 2.0,
  // not the pooled median (1.0).
  const placed_median m = median_over_placements({1, 1, 1, 1, 1, 4}, {0, 0, 0, 0, 0, 1});
  EXPECT_NEAR(m.center, 2.0, 1e-12);
  // Each sample sits on its placement's median: nothing spreads within a placement.
  EXPECT_DOUBLE_EQ(m.noise_pct, 0.0);
}

TEST(Stats, APlacedMediansNoiseIsTheSpreadWithinPlacements) {
  // Two placements 10% apart, each with the same spread within it: the noise is that spread's, as one
  // placement alone would give, not the 10% between them.
  const std::vector<double> within = {0.98, 0.99, 1.00, 1.00, 1.01, 1.02, 0.99, 1.00, 1.01, 1.00};
  std::vector<double> seconds;
  std::vector<int> placement;
  for (double x : within) {
    seconds.push_back(x);
    placement.push_back(0);
    seconds.push_back(1.1 * x);
    placement.push_back(1);
  }
  const placed_median m = median_over_placements(seconds, placement);
  EXPECT_NEAR(m.center, std::sqrt(1.1), 1e-12);
  std::vector<double> sorted = within;
  sorted.insert(sorted.end(), within.begin(), within.end());
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NEAR(m.noise_pct, median_noise_pct(sorted), 1e-9);
  std::vector<double> pooled = seconds;
  std::sort(pooled.begin(), pooled.end());
  EXPECT_GT(median_noise_pct(pooled), 2 * m.noise_pct);
}

TEST(Stats, OnePlacementIsTheMedian) {
  const placed_median m = median_over_placements({3, 1, 2, 5, 4}, {0, 0, 0, 0, 0});
  EXPECT_DOUBLE_EQ(m.center, 3.0);
  EXPECT_DOUBLE_EQ(m.noise_pct, median_noise_pct({1, 2, 3, 4, 5}));
  EXPECT_THROW(median_over_placements({1, 2}, {0}), std::invalid_argument);
}

}  // namespace
}  // namespace gpu_bench

#include "harness/run/progress.hpp"

namespace gpu_bench {
namespace {

TEST(Progress, LinesSayWhereTheRunIsAndHowLongIsLeft) {
  EXPECT_EQ(format_duration(45), "45s");
  EXPECT_EQ(format_duration(100), "1m40s");
  EXPECT_EQ(format_duration(7500), "2h05m");
  const progress quiet(462, 0.5, nullptr);
  EXPECT_EQ(quiet.opening(),
            "gpu_bench: 462 case runs selected; about 4m37s at most (--max_time_per_case=0.5 s each, longer where "
            "a case's minimum of samples or of sampling time a round takes longer)");
  EXPECT_EQ(quiet.line("Transfer", 120, 100.0), "gpu_bench: [Transfer 120/462, 1m40s, ~4m45s left]");
  EXPECT_EQ(quiet.line("Alloc", 462, 200.0), "gpu_bench: [Alloc 462/462, 3m20s]");
}

}  // namespace
}  // namespace gpu_bench
