// --cpu: where the thread that drives the GPU runs. The policy is host-only, so it is tested here on whatever
// CPUs this machine lends the test.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <stdexcept>

#include "harness/context/host_facts.hpp"
#include "harness/run/options.hpp"
#include "harness/run/thread_cpu.hpp"

namespace gpu_bench {
namespace {

// Restores the thread's CPUs after a test that moves it.
struct keep_cpus {
  std::vector<int> before = allowed_cpus();
  void restore() const {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : before) CPU_SET(c, &set);
    sched_setaffinity(0, sizeof set, &set);
  }
  ~keep_cpus() { restore(); }
};

TEST(ThreadCpu, TheFastestCpuIsOneOfTheCandidatesAndTheThreadStaysThere) {
  keep_cpus keep;
  ASSERT_FALSE(keep.before.empty());
  const cpu_choice c = pin_to_fastest_cpu(keep.before);
  ASSERT_GE(c.cpu, 0);
  EXPECT_GT(c.clock_read_ns, 0);
  EXPECT_EQ(allowed_cpus(), std::vector<int>{c.cpu});
}

TEST(ThreadCpu, NoCandidatesChooseNothingAndMoveNothing) {
  keep_cpus keep;
  EXPECT_EQ(pin_to_fastest_cpu({}).cpu, -1);
  EXPECT_EQ(allowed_cpus(), keep.before);
}

TEST(ThreadCpu, ThePolicyNamesItselfForTheContext) {
  keep_cpus keep;
  EXPECT_EQ(set_thread_cpu_policy(kCpuOff, keep.before), "off");
  EXPECT_EQ(allowed_cpus(), keep.before);
  EXPECT_EQ(set_thread_cpu_policy(kCpuAuto, {keep.before.front()}), "fastest of 1 at each case");
  place_thread_for_case();
  EXPECT_EQ(allowed_cpus(), std::vector<int>{keep.before.front()});
  keep.restore();
  EXPECT_EQ(set_thread_cpu_policy(keep.before.back(), keep.before), std::to_string(keep.before.back()));
  EXPECT_EQ(allowed_cpus(), std::vector<int>{keep.before.back()});
  (void)set_thread_cpu_policy(kCpuOff, keep.before);  // no auto left behind for later tests
}

TEST(ThreadCpu, ACpuThisProcessMayNotUseIsRefusedInOneSentence) {
  keep_cpus keep;
  try {
    (void)set_thread_cpu_policy(4095, keep.before);
    FAIL() << "CPU 4095 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("may not run on CPU 4095"), std::string::npos) << e.what();
  }
}

TEST(ThreadCpu, AnUnknownNodeLeavesEveryAllowedCpu) {
  EXPECT_EQ(cpus_on_node({0, 1, 2}, -1), (std::vector<int>{0, 1, 2}));
}

TEST(ThreadCpu, AClockReadCostsSomethingAndLessThanAMillisecond) {
  const double ns = steady_clock_read_ns(3, 100);
  EXPECT_GT(ns, 0);
  EXPECT_LT(ns, 1e6);
}

TEST(ThreadCpu, TheDefaultHoldsTheFastState) {
  EXPECT_EQ(options{}.cpu, kCpuFast);
}

TEST(ThreadCpu, FastPinsACaseThatHoldsItAndFreesTheOthers) {
  keep_cpus keep;
  EXPECT_EQ(set_thread_cpu_policy(kCpuFast, keep.before),
            "fast state of " + std::to_string(keep.before.size()) + " held");
  place_thread_for_case(true);
  ASSERT_EQ(allowed_cpus().size(), 1u);
  const int pinned = allowed_cpus().front();
  EXPECT_NE(std::find(keep.before.begin(), keep.before.end(), pinned), keep.before.end());
  for (int i = 0; i < 5; ++i) hold_fast_cpu();
  EXPECT_EQ(fast_cpu_activity().checks, 5);
  EXPECT_LE(fast_cpu_activity().searches, 5);
  EXPECT_EQ(allowed_cpus().size(), 1u);  // wherever a search moved it, one CPU
  place_thread_for_case(false);
  EXPECT_EQ(allowed_cpus(), keep.before);
  hold_fast_cpu();  // a case that does not hold the state is not checked
  EXPECT_EQ(fast_cpu_activity().checks, 5);
  EXPECT_NE(fast_cpu_text().find("of 5 checks"), std::string::npos) << fast_cpu_text();
  (void)set_thread_cpu_policy(kCpuOff, keep.before);
  EXPECT_EQ(fast_cpu_text(), "");
}

TEST(ThreadCpu, AReleasedThreadRunsAnywhereUntilTheHoldTakesItBack) {
  keep_cpus keep;
  (void)set_thread_cpu_policy(kCpuFast, keep.before);
  place_thread_for_case(true);
  ASSERT_EQ(allowed_cpus().size(), 1u);
  const int chosen = allowed_cpus().front();
  release_fast_cpu();
  EXPECT_EQ(allowed_cpus(), keep.before);
  const long checks = fast_cpu_activity().checks;
  hold_fast_cpu();
  EXPECT_EQ(fast_cpu_activity().checks, checks + 1);
  ASSERT_EQ(allowed_cpus().size(), 1u);
  // Back on the chosen CPU, unless the check found it slow and a search moved the thread on.
  if (fast_cpu_activity().searches == 0) {
    EXPECT_EQ(allowed_cpus().front(), chosen);
  }
  place_thread_for_case(false);
  release_fast_cpu();  // a case that does not hold the state has nothing to release
  EXPECT_EQ(allowed_cpus(), keep.before);
  hold_fast_cpu();
  EXPECT_EQ(allowed_cpus(), keep.before);
  (void)set_thread_cpu_policy(kCpuOff, keep.before);
}

TEST(ThreadCpu, FastWithNoCpusToChooseFromMovesNothingAndSaysSo) {
  keep_cpus keep;
  EXPECT_EQ(set_thread_cpu_policy(kCpuFast, {}), "off (the kernel does not say which CPUs this process may use)");
  place_thread_for_case(true);
  hold_fast_cpu();
  EXPECT_EQ(allowed_cpus(), keep.before);
  EXPECT_EQ(fast_cpu_activity().checks, 0);
}

}  // namespace
}  // namespace gpu_bench
