#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "fixtures/measure/stats.hpp"
#include "fixtures/run/output_file.hpp"
#include "fixtures/run/progress.hpp"
#include "fixtures/run/rounds.hpp"

using namespace gpu_bench;

TEST(Rounds, ChildRoundsDropWhatOnlyTheLastRoundDoesAndWriteTheirOwnFile) {
  const std::vector<std::string> user = {"--benchmark_filter=Transfer",
                                         "--benchmark_out=x.json",
                                         "--benchmark_out_format=json",
                                         "--samples=on",
                                         "--timeline=t.json",
                                         "--rounds=4",
                                         "--sizes=1M",
                                         "--benchmark_format=console"};
  const auto args = round_arguments(user, 2, 4, "/tmp/r/round_2.json");
  const std::vector<std::string> want = {"--benchmark_filter=Transfer",
                                         "--sizes=1M",
                                         "--round=2/4",
                                         "--benchmark_out=/tmp/r/round_2.json",
                                         "--benchmark_out_format=json",
                                         "--benchmark_enable_random_interleaving=true"};
  EXPECT_EQ(args, want);
}

TEST(Rounds, OneRoundIsItsOwnFloor) {
  const round_figure f = combine_rounds({2.0}, 0.01);
  EXPECT_DOUBLE_EQ(f.center, 2.0);
  EXPECT_DOUBLE_EQ(f.half_width, 0.01);
}

TEST(Rounds, ThePredictionIntervalWidensWithTheRoundsSpread) {
  // Three rounds 1, 2, 3: mean 2, s = 1, half-width t(0.975, 2) * 1 * sqrt(2/3).
  const round_figure f = combine_rounds({1.0, 2.0, 3.0}, 0.0);
  EXPECT_DOUBLE_EQ(f.center, 2.0);
  EXPECT_NEAR(f.half_width, 4.303 * std::sqrt(2.0 / 3.0), 1e-9);
  // Rounds that agree exactly still keep what one round can resolve.
  EXPECT_DOUBLE_EQ(combine_rounds({5.0, 5.0, 5.0}, 0.25).half_width, 0.25);
}

TEST(Rounds, StudentQuantilesMatchTheTables) {
  EXPECT_DOUBLE_EQ(student_t_975(1), 12.706);
  EXPECT_DOUBLE_EQ(student_t_975(4), 2.776);
  EXPECT_NEAR(student_t_975(60), 2.000, 0.003);
  EXPECT_NEAR(student_t_975(120), 1.980, 0.003);
  EXPECT_THROW(student_t_975(0), std::invalid_argument);
}

// A prediction interval from n rounds must hold the mean of the next n rounds about 95% of the time when
// rounds vary normally: drawn here from a fixed sequence, so the test is deterministic.
TEST(Rounds, IntervalsCoverTheNextRunAtTheirStatedRate) {
  unsigned long long state = 12345;
  auto uniform = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(state >> 11) + 0.5) / 9007199254740992.0;
  };
  auto normal = [&] { return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); };
  int covered = 0;
  const int trials = 20000;
  for (int i = 0; i < trials; ++i) {
    const round_figure run = combine_rounds({10 + normal(), 10 + normal(), 10 + normal()}, 0.0);
    const double next = 10 + (normal() + normal() + normal()) / 3;
    covered += std::abs(next - run.center) <= run.half_width;
  }
  EXPECT_NEAR(static_cast<double>(covered) / trials, 0.95, 0.01);
}

TEST(Rounds, ARoundsFileGivesEachRunsMedianInSeconds) {
  const std::string path = testing::TempDir() + "round_1.json";
  {
    std::ofstream f(path);
    f << "{\"context\": {\"gpu_bench.timed_s\": \"2.5\"}, \"benchmarks\": ["
         "{\"name\": \"A/bytes:4/manual_time\", \"run_name\": \"A/bytes:4/manual_time\", \"run_type\": \"iteration\","
         " \"repetition_index\": 0, \"real_time\": 3.5, \"time_unit\": \"us\", \"cv\": NaN},"
         "{\"name\": \"B/bytes:4/manual_time\", \"run_name\": \"B/bytes:4/manual_time\", \"run_type\": \"iteration\","
         " \"repetition_index\": 1, \"real_time\": 2, \"time_unit\": \"ms\"},"
         "{\"name\": \"C/manual_time\", \"run_name\": \"C/manual_time\", \"run_type\": \"iteration\","
         " \"error_occurred\": true, \"real_time\": 0, \"time_unit\": \"ns\"}]}";
  }
  std::map<std::pair<std::string, int>, double> medians;
  double timed = 0;
  ASSERT_EQ(read_round_results(path, medians, timed), "");
  EXPECT_EQ(medians.size(), 2u);
  EXPECT_DOUBLE_EQ((medians[{"A/bytes:4", 0}]), 3.5e-6);
  EXPECT_DOUBLE_EQ((medians[{"B/bytes:4", 1}]), 2e-3);
  EXPECT_DOUBLE_EQ(timed, 2.5);
  std::remove(path.c_str());
  EXPECT_NE(read_round_results(path, medians, timed), "");
}

TEST(Rounds, PriorRoundsAreLookedUpByNameAndRepetition) {
  add_prior_round({{{"X", 0}, 1.0}, {{"Y", 0}, 2.0}});
  add_prior_round({{{"X", 0}, 1.5}});
  EXPECT_EQ(prior_round_count(), 2);
  EXPECT_EQ(prior_round_times("X", 0), (std::vector<double>{1.0, 1.5}));
  EXPECT_EQ(prior_round_times("Y", 0), (std::vector<double>{2.0}));
  EXPECT_TRUE(prior_round_times("X", 1).empty());
}

TEST(Progress, RoundsAreNamedInTheLines) {
  progress p(10, 0.5, nullptr, 10.0, 3, false);
  EXPECT_NE(p.opening().find("each in 3 rounds of their own processes"), std::string::npos) << p.opening();
  p.start_round(2);
  EXPECT_EQ(p.line("Transfer", 5, 20.0), "gpu_bench: [round 2/3 Transfer 5/10, 20s, ~20s left]");
}
