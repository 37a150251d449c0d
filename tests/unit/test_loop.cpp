// The timed loop's stopping rules, on synthetic samples (no GPU): when it stops, and what it reports.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "fixtures/measure/loop.hpp"

namespace gpu_bench {
namespace {

case_plan plan_of(std::function<double()> next) {
  case_plan p;
  p.measure = [next] { return sample(next()); };
  return p;
}

sampling_rules rules(double noise_pct, double budget_s, int min_samples = 10) {
  sampling_rules r;
  r.noise_pct = noise_pct;
  r.budget_s = budget_s;
  r.min_samples = min_samples;
  return r;
}

TEST(Loop, SteadySamplesStopAtTheMinimum) {
  const sample_set s = calibrate(plan_of([] { return 1e-3; }), rules(0.5, 10.0));
  EXPECT_EQ(s.size(), 10u);
  EXPECT_DOUBLE_EQ(s.time_s(), 1e-3);
  EXPECT_DOUBLE_EQ(s.noise_pct(), 0.0);
}

TEST(Loop, NoisySamplesGoOnUntilTheIntervalIsNarrowEnough) {
  // One sample in four at 1.10 ms, the rest at 1.00: the median's interval reaches the slow ones until
  // enough samples pin it to the fast ones.
  int i = 0;
  const sample_set s = calibrate(plan_of([&] { return ++i % 4 ? 1.00e-3 : 1.10e-3; }), rules(0.5, 10.0));
  EXPECT_GT(s.size(), 10u);
  EXPECT_LT(s.size(), 100u);
  EXPECT_LE(s.noise_pct(), 0.5);
  EXPECT_DOUBLE_EQ(s.time_s(), 1.00e-3);
}

TEST(Loop, TheBudgetStopsWhatNeverSettles) {
  // Every value different and spread evenly: the interval narrows only slowly; 50 ms of budget ends it.
  int i = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const sample_set s = calibrate(plan_of([&] {
                                   std::this_thread::sleep_for(std::chrono::microseconds(200));
                                   return 1e-3 * (1 + (++i * 7919 % 1000) / 1000.0);
                                 }),
                                 rules(0.01, 0.05));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(s.size(), 10u);
  EXPECT_GT(s.noise_pct(), 0.01);
  EXPECT_LT(took, 1.0);
}

TEST(Loop, TheMinimumHoldsEvenPastTheBudget) {
  const sample_set s = calibrate(plan_of([] {
                                   std::this_thread::sleep_for(std::chrono::milliseconds(2));
                                   return 1e-3;
                                 }),
                                 rules(0.5, 0.005));  // 5 ms of budget, 2 ms a sample
  EXPECT_EQ(s.size(), 10u);
}

TEST(Loop, OneSampleOverTheBudgetTakesThree) {
  int i = 0;
  const sample_set s = calibrate(plan_of([&] {
                                   std::this_thread::sleep_for(std::chrono::milliseconds(12));
                                   return 1e-3 * (1 + ++i);
                                 }),
                                 rules(0.5, 0.01));
  EXPECT_EQ(s.size(), 3u);
}

TEST(Loop, MinimumTimedTimeIsHonoured) {
  sampling_rules r = rules(0.5, 10.0);
  r.min_time_s = 0.05;  // 50 samples of a millisecond at least
  const sample_set s = calibrate(plan_of([] { return 1e-3; }), r);
  EXPECT_GE(s.size(), 50u);
}

TEST(Loop, TheMedianIsTheFigure) {
  int i = 0;
  const double v[] = {5, 1, 3, 2, 4, 100, 3, 3, 2, 4};
  const sample_set s = calibrate(plan_of([&] { return v[i++ % 10] * 1e-3; }), rules(100.0, 10.0));
  EXPECT_EQ(s.size(), 10u);
  EXPECT_DOUBLE_EQ(s.time_s(), 3e-3);  // sorted: 1 2 2 3 3 3 4 4 5 100
  EXPECT_DOUBLE_EQ(s.fastest_s(), 1e-3);  // the first sample was not the fastest
}

}  // namespace
}  // namespace gpu_bench
