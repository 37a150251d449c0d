#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "fixtures/measure/stats.hpp"
#include "fixtures/run/options.hpp"
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

TEST(Rounds, ARoundOfTheLinkBoundCasesSelectsThemByNameAndShowsNoProgress) {
  const std::vector<std::string> user = {"--benchmark_filter=Transfer", "--preset=nightly", "--progress=on",
                                         "--sizes=1M", "--benchmark_out=x.json"};
  const auto args = round_arguments(user, 1, 3, "/tmp/r/link_1.json", "^(A/b:1)$");
  const std::vector<std::string> want = {"--sizes=1M",
                                         "--benchmark_filter=^(A/b:1)$",
                                         "--progress=off",
                                         "--round=1/3",
                                         "--benchmark_out=/tmp/r/link_1.json",
                                         "--benchmark_out_format=json",
                                         "--benchmark_enable_random_interleaving=true"};
  EXPECT_EQ(args, want);
}

TEST(Rounds, TheLinkBoundCasesExtraRoundsFallBetweenTheOthers) {
  using order = std::vector<bool>;
  EXPECT_EQ(child_round_order(3, 2), (order{false, true, false, true}));
  EXPECT_EQ(child_round_order(3, 0), (order{false, false}));
  EXPECT_EQ(child_round_order(3, -1), (order{false, false}));
  EXPECT_EQ(child_round_order(3, 3), (order{false, true, false, true, true}));
  EXPECT_EQ(child_round_order(5, 2), (order{false, false, true, false, false, true}));
  EXPECT_EQ(child_round_order(1, 4), order{});  // one round is the last, in the process the user started
}

TEST(Rounds, ALinkBoundCaseTakesLinkRoundsWhereThatIsMore) {
  const options saved = current_options();
  options o = saved;
  o.rounds = 3;
  o.link_rounds = 5;
  set_current_options(o);
  EXPECT_EQ(rounds_of_case(true), 5);
  EXPECT_EQ(rounds_of_case(false), 3);
  o.link_rounds = 2;
  set_current_options(o);
  EXPECT_EQ(rounds_of_case(true), 3);
  o.rounds = 1;
  o.link_rounds = 5;
  set_current_options(o);
  EXPECT_EQ(rounds_of_case(true), 1);  // one round is one process, whatever the case
  set_current_options(saved);
}

TEST(Rounds, TheLinkRoundsFilterSelectsExactlyTheSelectedLinkBoundCases) {
  const std::vector<std::string> names = {"Transfer/dir:h2d/mem:pinned/bytes:1048576/manual_time",
                                          "Transfer/dir:h2d/mem:pinned/bytes:65536/manual_time",
                                          "Transfer/dir:h2d/mem:pageable/bytes:1048576/manual_time",
                                          "Transfer/dir:bidir/mem:registered/bytes:67108864/manual_time",
                                          "Transfer/dir:bidir/mem:registered/bytes:67108864/device:1/manual_time",
                                          "Overlap/schedule:serial/mem:pinned/streams:1/bytes:536870912/manual_time"};
  const std::string all = link_round_filter("", names);
  EXPECT_EQ(filter_matches(all, names), (std::vector<std::string>{names[0], names[3], names[4]})) << all;
  const std::string bidir = link_round_filter("dir:bidir/.*device:1", names);
  EXPECT_EQ(filter_matches(bidir, names), (std::vector<std::string>{names[4]})) << bidir;
  EXPECT_EQ(link_round_filter("-Transfer", names), "");
  EXPECT_EQ(link_round_filter("pageable", names), "");
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

// Standard normal draws from a fixed seed (a linear congruential generator and Box-Muller), so that the
// tests that draw rounds are deterministic.
class standard_normal {
 public:
  explicit standard_normal(unsigned long long seed) : state_(seed) {}
  double operator()() { return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); }

 private:
  double uniform() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(state_ >> 11) + 0.5) / 9007199254740992.0;
  }
  unsigned long long state_;
};

// A prediction interval from n rounds must hold the mean of the next n rounds about 95% of the time when
// rounds vary normally: drawn here from a fixed sequence, so the test is deterministic.
TEST(Rounds, IntervalsCoverTheNextRunAtTheirStatedRate) {
  standard_normal normal(12345);
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

TEST(Rounds, AFamilysSpreadWidensRoundsThatAgreeByChance) {
  // Three rounds that happen to agree: their own interval is narrow.
  const std::vector<double> agree = {1.000, 1.001, 1.002};
  const double own = combine_rounds(agree, 0.0).half_width;
  // Their family varies by 2% between rounds: weighed as much as the case's own two degrees of freedom,
  // the pooled relative sd is sqrt((2 * 0.001^2 + 2 * 0.02^2) / 4), with t(0.975, 4).
  const round_figure pooled = combine_rounds(agree, 0.0, spread_prior{0.02, 2});
  const double want = 2.776 * std::sqrt((2 * 0.001 * 0.001 + 2 * 0.02 * 0.02) / 4) * 1.001 * std::sqrt(2.0 / 3);
  EXPECT_NEAR(pooled.half_width, want, 1e-6);
  EXPECT_GT(pooled.half_width, 5 * own);
  EXPECT_DOUBLE_EQ(pooled.center, combine_rounds(agree, 0.0).center);
  // A case that spreads more than its family keeps its own, wider interval.
  const std::vector<double> wide = {1.0, 1.2, 1.4};
  EXPECT_DOUBLE_EQ(combine_rounds(wide, 0.0, spread_prior{0.02, 2}).half_width, combine_rounds(wide, 0.0).half_width);
  // No prior, no change.
  EXPECT_DOUBLE_EQ(combine_rounds(agree, 0.0, spread_prior{}).half_width, own);
}

TEST(Rounds, AFamilysTypicalSpreadIsTheScaledMedianVariance) {
  // Two rounds each (one degree of freedom): relative variances 0.5 * (d / mean)^2 for d = 0.01, 0.02, 0.04.
  const std::vector<std::vector<double>> cases = {{0.995, 1.005}, {0.99, 1.01}, {0.98, 1.02}, {5.0}};
  const double median_var = 0.5 * 0.02 * 0.02;
  EXPECT_NEAR(typical_relative_sd(cases), std::sqrt(median_var / 0.4549), 1e-9);
  // Too few cases to speak for a family.
  EXPECT_EQ(typical_relative_sd({{0.99, 1.01}, {0.98, 1.02}}), 0.0);
  EXPECT_EQ(typical_relative_sd({{1.0}, {2.0}, {3.0}}), 0.0);
  EXPECT_NEAR(chi_square_median(2), 1.3863, 1e-4);
  EXPECT_NEAR(chi_square_median(30), 29.3360, 0.01);
  EXPECT_THROW(chi_square_median(0), std::invalid_argument);
}

// Cases that vary normally between processes, each by its family's own sd: a case's three rounds agree by
// chance often enough that their own interval alone misses the next run more than it promises on the
// least-spread draws; pooled with the family's spread, the intervals hold the next run at least as often
// as their 95% says. Deterministic (a fixed sequence).
TEST(Rounds, PoolingWithTheFamilyKeepsCoverageWhereOwnRoundsAgreeByChance) {
  standard_normal normal(777);
  const double sd = 0.02;
  int own_covered = 0, pooled_covered = 0, narrow = 0;
  const int trials = 20000;
  for (int i = 0; i < trials; ++i) {
    std::vector<double> rounds = {1 + sd * normal(), 1 + sd * normal(), 1 + sd * normal()};
    const double next = 1 + sd * (normal() + normal() + normal()) / 3;
    const round_figure own = combine_rounds(rounds, 0.0);
    if (own.half_width > 0.5 * 4.303 * sd * std::sqrt(2.0 / 3)) continue;  // the draws whose rounds agreed
    ++narrow;
    // The family's earlier rounds: 40 cases of two rounds each, all of the same sd.
    std::vector<std::vector<double>> family;
    for (int c = 0; c < 40; ++c) family.push_back({1 + sd * normal(), 1 + sd * normal()});
    const round_figure pooled = combine_rounds(rounds, 0.0, spread_prior{typical_relative_sd(family), 2});
    own_covered += std::abs(next - own.center) <= own.half_width;
    pooled_covered += std::abs(next - pooled.center) <= pooled.half_width;
  }
  ASSERT_GT(narrow, 1000);
  EXPECT_LT(static_cast<double>(own_covered) / narrow, 0.90);
  EXPECT_GT(static_cast<double>(pooled_covered) / narrow, 0.95);
}

TEST(Rounds, PriorRoundsAreLookedUpByNameAndRepetition) {
  add_prior_round({{{"X", 0}, 1.0}, {{"Y", 0}, 2.0}});
  add_prior_round({{{"X", 0}, 1.5}});
  EXPECT_EQ(prior_round_count(), 2);
  EXPECT_EQ(prior_round_times("X", 0), (std::vector<double>{1.0, 1.5}));
  EXPECT_EQ(prior_round_times("Y", 0), (std::vector<double>{2.0}));
  EXPECT_TRUE(prior_round_times("X", 1).empty());
  // Too few cases in the family for a typical spread.
  EXPECT_EQ(prior_family_spread("X"), 0.0);
  add_prior_round({{{"F/a", 0}, 1.0}, {{"F/b", 0}, 1.0}, {{"F/c", 0}, 1.0}, {{"G/a", 0}, 1.0}});
  add_prior_round({{{"F/a", 0}, 1.0}, {{"F/b", 0}, 1.0}, {{"F/c", 0}, 1.0}, {{"G/a", 0}, 1.0}});
  add_prior_round({{{"F/a", 0}, 1.1}, {{"F/b", 0}, 1.1}, {{"F/c", 0}, 1.1}, {{"G/a", 0}, 1.0}});
  // Only rounds 2 to 4 hold F's cases (round 1 did not run them), and each case's three match.
  EXPECT_NEAR(prior_family_spread("F"), typical_relative_sd({{1.0, 1.0, 1.1}, {1.0, 1.0, 1.1}, {1.0, 1.0, 1.1}}),
              1e-12);
  EXPECT_GT(prior_family_spread("F"), 0.0);
  EXPECT_EQ(prior_family_spread("G"), 0.0);
}

TEST(Rounds, AFamilysSpreadComesFromTheRoundsThatRanEveryCase) {
  add_prior_round({{{"L/a", 0}, 1.0}, {{"L/b", 0}, 2.0}, {{"L/c", 0}, 4.0}});
  add_prior_round({{{"L/a", 0}, 1.1}, {{"L/b", 0}, 2.2}, {{"L/c", 0}, 4.4}});
  const double full = prior_family_spread("L");
  EXPECT_NEAR(full, typical_relative_sd({{1.0, 1.1}, {2.0, 2.2}, {4.0, 4.4}}), 1e-12);
  // A round of the link-bound cases alone, here a and b far off: their own times, not the family's spread.
  add_prior_round({{{"L/a", 0}, 3.0}, {{"L/b", 0}, 6.0}}, false);
  EXPECT_NEAR(prior_family_spread("L"), full, 1e-12);
  EXPECT_EQ(prior_round_times("L/a", 0), (std::vector<double>{1.0, 1.1, 3.0}));
  EXPECT_EQ(prior_round_times("L/c", 0), (std::vector<double>{4.0, 4.4}));
}

TEST(Progress, RoundsAreNamedInTheLines) {
  progress p(10, 0.5, nullptr, 10.0, 3, false);
  EXPECT_NE(p.opening().find("each in 3 rounds of their own processes"), std::string::npos) << p.opening();
  p.start_round(2);
  EXPECT_EQ(p.line("Transfer", 5, 20.0), "gpu_bench: [round 2/3 Transfer 5/10, 20s, ~20s left]");
}
