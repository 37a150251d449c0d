// What every family derives alike from a case's samples and declared bytes (no GPU).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "harness/measure/rates.hpp"

namespace gpu_bench {
namespace {

// Three samples of 1, 2 and 4 ms, the host held for 10, 20 and 60 us.
sample_set three_samples() {
  return sample_set({sample(1e-3, 10e-6), sample(2e-3, 20e-6), sample(4e-3, 60e-6)});
}

std::map<std::string, double> counters_of(const derived_rates& d) {
  return {d.counters.begin(), d.counters.end()};
}

TEST(Rates, GbpsIsBytesOverTheMedianSampleInGigabytes) {
  EXPECT_DOUBLE_EQ(rate_gbps(2e9, 1.0), 2.0);
  case_rates r;
  r.bytes = 4e6;
  const derived_rates d = derive_rates(three_samples(), r);
  const auto c = counters_of(d);
  EXPECT_DOUBLE_EQ(c.at("gbps"), 4e6 / 2e-3 / 1e9);
  EXPECT_DOUBLE_EQ(c.at("host_blocked_us"), 30.0);  // the mean
  ASSERT_TRUE(d.bytes_processed);
  EXPECT_EQ(*d.bytes_processed, 4'000'000);
}

TEST(Rates, EachFigureCanBeLeftOut) {
  case_rates r;
  r.bytes = 4e6;
  r.gbps = false;
  r.host_blocked = host_time::median;
  derived_rates d = derive_rates(three_samples(), r);
  EXPECT_EQ(counters_of(d), (std::map<std::string, double>{{"host_blocked_us", 20.0}}));
  EXPECT_TRUE(d.bytes_processed);

  r.gbps = true;
  r.bytes_per_second = false;
  r.host_blocked = host_time::none;
  d = derive_rates(three_samples(), r);
  EXPECT_EQ(counters_of(d).count("gbps"), 1u);
  EXPECT_EQ(counters_of(d).count("host_blocked_us"), 0u);
  EXPECT_FALSE(d.bytes_processed);
}

TEST(Rates, NoBytesNoRates) {
  const derived_rates d = derive_rates(three_samples(), case_rates{});
  EXPECT_EQ(counters_of(d), (std::map<std::string, double>{{"host_blocked_us", 30.0}}));
  EXPECT_FALSE(d.bytes_processed);
}

}  // namespace
}  // namespace gpu_bench
