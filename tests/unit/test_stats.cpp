#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "fixtures/measure/stats.hpp"

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

TEST(Stats, TheMedianIgnoresAMinorityOfSlowIterations) {
  // 10 iterations at 1 ms, 4 at 1.6 ms (a neighbour sharing the link): the mean moves 17%, the median not.
  std::vector<double> v(10, 1.0);
  v.insert(v.end(), 4, 1.6);
  EXPECT_DOUBLE_EQ(p50(v), 1.0);
}

}  // namespace
}  // namespace gpu_bench
