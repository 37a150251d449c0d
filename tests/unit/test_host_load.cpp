// What else the host did while a round ran: /proc/stat's CPU times and a round's own usage.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>

#include "harness/run/host_load.hpp"

namespace gpu_bench {
namespace {

TEST(HostLoad, ProcStatsFirstLineGivesBusyIdleAndSteal) {
  const cpu_times t = parse_cpu_times("cpu  100 5 20 1000 30 2 3 7 0 0\ncpu0 50 2 10 500 15 1 1 3 0 0\n");
  ASSERT_TRUE(t.known);
  EXPECT_EQ(t.busy, 100u + 5 + 20 + 2 + 3);
  EXPECT_EQ(t.idle, 1000u + 30);
  EXPECT_EQ(t.steal, 7u);
  // A kernel too old to count steal leaves it 0; a text that is not /proc/stat is not known.
  EXPECT_EQ(parse_cpu_times("cpu 1 2 3 4\n").steal, 0u);
  EXPECT_FALSE(parse_cpu_times("intr 1 2 3\n").known);
  EXPECT_FALSE(parse_cpu_times("cpu 1 2\n").known);
  EXPECT_FALSE(parse_cpu_times("").known);
}

TEST(HostLoad, OthersShareIsBusyTimeLessTheRoundsOwn) {
  cpu_times before{1000, 9000, 0, true};
  // 2,000 ticks passed over every CPU: 500 busy, 1,400 idle, 100 stolen. The round used 2 s (200 ticks).
  cpu_times after{1500, 10400, 100, true};
  const host_load load = host_load_between(before, after, 2.0, 42, 100);
  EXPECT_DOUBLE_EQ(load.others_pct, 15.0);
  EXPECT_DOUBLE_EQ(load.steal_pct, 5.0);
  EXPECT_EQ(load.preemptions, 42);
  // Ticks are coarse: a round's own time above the busy ticks counts no one else, not less than no one.
  EXPECT_DOUBLE_EQ(host_load_between(before, after, 9.0, 0, 100).others_pct, 0.0);
}

TEST(HostLoad, UnknownOrBackwardsTimesGiveNoShares) {
  const cpu_times before{1000, 9000, 0, true};
  EXPECT_LT(host_load_between(cpu_times{}, before, 0, 3, 100).others_pct, 0);
  EXPECT_LT(host_load_between(before, cpu_times{900, 9500, 0, true}, 0, 3, 100).steal_pct, 0);
  EXPECT_LT(host_load_between(before, before, 0, 3, 100).others_pct, 0);  // no time passed
  EXPECT_EQ(host_load_between(before, before, 0, 3, 100).preemptions, 3);
}

TEST(HostLoad, TextNamesEachRoundAndMarksWhatIsNotKnown) {
  EXPECT_EQ(round_host_text({}), "");
  EXPECT_EQ(round_host_text({{"round_1", {1.234, 0.05, 120}}, {"last", {-1, -1, 7}}}),
            "round_1=1.23/0.05/120 last=-/-/7");
}

TEST(HostLoad, ThisMachinesLastRoundIsMeasured) {
  if (!read_cpu_times().known) GTEST_SKIP() << "no /proc/stat here";
  mark_last_round_start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(60);
  while (std::chrono::steady_clock::now() < until) {
  }
  const host_load load = last_round_host_load();
  EXPECT_GE(load.others_pct, 0.0);
  EXPECT_LE(load.others_pct, 100.0);
  EXPECT_GE(load.steal_pct, 0.0);
  EXPECT_GE(load.preemptions, 0);
}

}  // namespace
}  // namespace gpu_bench
