#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/measure/stats.hpp"
#include "harness/run/options.hpp"
#include "harness/run/output_file.hpp"
#include "harness/run/progress.hpp"
#include "harness/run/registry.hpp"
#include "harness/run/rounds.hpp"

using namespace gpu_bench;

TEST(Rounds, ChildRoundsDropWhatOnlyTheLastRoundDoesAndWriteTheirOwnFile) {
  const std::vector<std::string> user = {"--benchmark_filter=Transfer",
                                         "--benchmark_out=x.json",
                                         "--benchmark_out_format=json",
                                         "--samples=on",
                                         "--timeline=t.json",
                                         "--rounds=4",
                                         "--sizes=1M",
                                         "--benchmark_format=console",
                                         "--round_walls=/tmp/w.tsv"};
  const auto args = round_arguments(user, 2, 4, "/tmp/r/round_2.json");
  const std::vector<std::string> want = {"--benchmark_filter=Transfer", "--sizes=1M", "--round=2/4",
                                         "--benchmark_out=/tmp/r/round_2.json", "--benchmark_out_format=json"};
  EXPECT_EQ(args, want);
}

TEST(Rounds, EveryRoundRunsItsCasesInTheOrderTheUserChose) {
  // No round shuffles on its own: the last round runs the cases in order, so every round must.
  const auto plain = round_arguments({"--benchmark_filter=Alloc"}, 1, 3, "/tmp/r/round_1.json");
  for (const auto& a : plain) EXPECT_EQ(a.find("random_interleaving"), std::string::npos) << a;
  // A user who asks for a shuffled order gets it in every round, the last included.
  const auto shuffled = round_arguments({"--benchmark_enable_random_interleaving=true"}, 1, 3, "/tmp/r/round_1.json");
  EXPECT_EQ(shuffled.front(), "--benchmark_enable_random_interleaving=true");
}

TEST(Rounds, TheLinkRoundsCasesRunFirstInEveryRound) {
  // A link round runs its cases alone; a full round runs them before every other case, so in both they
  // follow the same cases. The others keep their order after them.
  const round_kind F = round_kind::full, L = round_kind::link, H = round_kind::host;
  EXPECT_EQ(round_order({F, L, F, H, L, F}), (std::vector<std::size_t>{1, 4, 3, 0, 2, 5}));
  EXPECT_EQ(round_order({F, F}), (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(round_order({}).empty());
}

TEST(Rounds, ARoundOfTheLinkBoundCasesSelectsThemByNameAndShowsNoProgress) {
  const std::vector<std::string> user = {"--benchmark_filter=Transfer", "--preset=nightly", "--progress=on",
                                         "--sizes=1M", "--benchmark_out=x.json"};
  const auto args = round_arguments(user, 1, 3, "/tmp/r/link_1.json", "^(A/b:1)$");
  const std::vector<std::string> want = {
      "--sizes=1M",  "--benchmark_filter=^(A/b:1)$",       "--progress=off",
      "--round=1/3", "--benchmark_out=/tmp/r/link_1.json", "--benchmark_out_format=json"};
  EXPECT_EQ(args, want);
}

TEST(Rounds, TheLinkBoundAndHostCasesExtraRoundsFallBetweenTheOthers) {
  using order = std::vector<round_kind>;
  const round_kind F = round_kind::full, L = round_kind::link, H = round_kind::host;
  EXPECT_EQ(child_round_order(3, 2), (order{F, L, F, L}));
  EXPECT_EQ(child_round_order(3, 0), (order{F, F}));
  EXPECT_EQ(child_round_order(3, -1), (order{F, F}));
  EXPECT_EQ(child_round_order(3, 3), (order{F, L, F, L, L}));
  EXPECT_EQ(child_round_order(5, 2), (order{F, F, L, F, F, L}));
  EXPECT_EQ(child_round_order(1, 4), order{});  // one round is the last, in the process the user started
  EXPECT_EQ(child_round_order(3, 2, 2), (order{F, L, H, F, L, H}));
  EXPECT_EQ(child_round_order(3, 0, 2), (order{F, H, F, H}));
  EXPECT_EQ(child_round_order(3, 2, 0), child_round_order(3, 2));
  EXPECT_EQ(child_round_order(1, 2, 2), order{});
}

TEST(Rounds, ALinkBoundCaseTakesLinkRoundsWhereThatIsMore) {
  const options saved = current_options();
  options o = saved;
  o.rounds = 3;
  o.link_rounds = 5;
  set_current_options(o);
  EXPECT_EQ(rounds_of_case(round_kind::link), 5);
  EXPECT_EQ(rounds_of_case(round_kind::full), 3);
  EXPECT_EQ(rounds_of_case(round_kind::host), 3);  // --host_rounds unset: as --rounds
  o.host_rounds = 5;
  set_current_options(o);
  EXPECT_EQ(rounds_of_case(round_kind::host), 5);
  o.link_rounds = 2;
  o.host_rounds = 2;
  set_current_options(o);
  EXPECT_EQ(rounds_of_case(round_kind::link), 3);
  EXPECT_EQ(rounds_of_case(round_kind::host), 3);
  o.rounds = 1;
  o.link_rounds = 5;
  o.host_rounds = 5;
  set_current_options(o);
  EXPECT_EQ(rounds_of_case(round_kind::link), 1);  // one round is one process, whatever the case
  EXPECT_EQ(rounds_of_case(round_kind::host), 1);
  set_current_options(saved);
}

TEST(Rounds, TheLinkRoundsFilterSelectsExactlyTheSelectedCasesTheyRun) {
  const std::vector<std::string> names = {"Transfer/dir:h2d/mem:pinned/bytes:1048576/manual_time",
                                          "Transfer/dir:h2d/mem:pinned/bytes:65536/manual_time",
                                          "Transfer/dir:h2d/mem:pageable/bytes:268435456/manual_time",
                                          "Transfer/dir:bidir/mem:registered/bytes:67108864/manual_time",
                                          "Transfer/dir:bidir/mem:registered/bytes:67108864/device:1/manual_time",
                                          "Overlap/schedule:serial/mem:pinned/streams:1/bytes:536870912/manual_time"};
  const std::string all = link_round_filter("", names);
  // The pinned 64 KiB copy takes the small rounds: it rides with the link-bound cases. The pageable 256 MiB one
  // takes neither.
  EXPECT_EQ(filter_matches(all, names), (std::vector<std::string>{names[0], names[1], names[3], names[4]})) << all;
  const std::string bidir = link_round_filter("dir:bidir/.*device:1", names);
  EXPECT_EQ(filter_matches(bidir, names), (std::vector<std::string>{names[4]})) << bidir;
  EXPECT_EQ(link_round_filter("-Transfer", names), "");
  EXPECT_EQ(link_round_filter("pageable", names), "");
}

TEST(Rounds, TheHostRoundsHoldTheCasesOfHostDrivenFamiliesThatTheFilterSelects) {
  const std::vector<std::string> names = {
      "Batch/api:loop/copies:1/bytes:65536/manual_time",
      "HostBlocking/mem:pinned/bytes:268435456/mode:sync_copy/manual_time",
      "Transfer/dir:h2d/mem:pinned/bytes:1048576/manual_time",
      "Transfer/dir:h2d/mem:pageable/bytes:1048576/manual_time",
      "Alloc/op:malloc_host/bytes:1048576/manual_time",
      "Events/op:record/timing:off/manual_time",                          // the link rounds': not the host rounds'
      "HostBlocking/mem:pinned/bytes:65536/mode:sync_copy/manual_time"};  // the link rounds' too
  EXPECT_EQ(host_round_cases("", names), (std::vector<std::string>{names[0], names[1]}));
  EXPECT_EQ(host_round_cases("^HostBlocking/", names), (std::vector<std::string>{names[1]}));
  EXPECT_TRUE(host_round_cases("^Transfer/", names).empty());
}

TEST(Rounds, OneRoundIsItsOwnFloor) {
  const round_figure f = combine_rounds({2.0}, 0.01);
  EXPECT_DOUBLE_EQ(f.center, 2.0);
  EXPECT_DOUBLE_EQ(f.half_width, 0.01);
  EXPECT_DOUBLE_EQ(f.dof, 0.0);
}

TEST(Rounds, ThePredictionIntervalWidensWithTheRoundsSpread) {
  // Three rounds: their middle one, and on their logarithms s with two degrees of freedom and the variance
  // factor of the middle of three, half-width exp(t(0.975, 2) * s * sqrt(2 * 0.448671)) - 1.
  const std::vector<double> r = {1.0, 1.1, 1.3};
  const round_figure f = combine_rounds(r, 0.0);
  EXPECT_DOUBLE_EQ(f.center, 1.1);
  const double l1 = 0, l2 = std::log(1.1), l3 = std::log(1.3), m = (l1 + l2 + l3) / 3;
  const double s = std::sqrt(((l1 - m) * (l1 - m) + (l2 - m) * (l2 - m) + (l3 - m) * (l3 - m)) / 2);
  EXPECT_NEAR(f.half_width, std::expm1(4.302653 * s * std::sqrt(2 * 0.448671)), 1e-4);
  // The comparison's test on two like runs has Welch's four degrees of freedom.
  EXPECT_NEAR(f.detectable_half_width, std::expm1(2.776445 * s * std::sqrt(2 * 0.448671)), 3e-4);
  // Rounds that agree exactly still keep what one round can resolve, and compare's minimum effect.
  EXPECT_DOUBLE_EQ(combine_rounds({5.0, 5.0, 5.0}, 0.0025).half_width, 0.0025);
  EXPECT_DOUBLE_EQ(combine_rounds({5.0, 5.0, 5.0}, 0.0025).detectable_half_width, kMinEffectPct / 100);
}

TEST(Rounds, SlowRoundsNeitherMoveTheFigureNorWidenItsInterval) {
  // A round a millisecond slow among four that agree: the figure stays theirs (the mean of the fastest
  // three), and the interval is that of the four, as the slow round is winsorized to the slowest kept.
  const std::vector<double> r = {333e-6, 336e-6, 1333e-6, 334e-6, 333e-6};
  const round_figure f = combine_rounds(r, 0.0);
  EXPECT_NEAR(f.center, (333e-6 + 333e-6 + 334e-6) / 3, 1e-12);
  EXPECT_LT(f.half_width, 0.05);
  EXPECT_GT(f.half_width, 0.0);
  // Under five rounds there is nothing to winsorize: the spread is the rounds' own.
  EXPECT_GT(combine_rounds({333e-6, 1333e-6, 334e-6, 333e-6}, 0.0).half_width, 0.5);
  EXPECT_DOUBLE_EQ(center_of_rounds({2.0, 1.0}), 1.5);
  EXPECT_DOUBLE_EQ(center_of_rounds({3.0, 1.0, 2.0, 10.0}), 2.5);
  EXPECT_DOUBLE_EQ(center_of_rounds({3.0, 1.0, 2.0}), 2.0);
  // From five rounds the fastest half is kept: four slow ones among eight move nothing.
  EXPECT_DOUBLE_EQ(center_of_rounds({1, 9, 1, 1, 9, 1, 9, 9}), 1.0);
  EXPECT_DOUBLE_EQ(center_of_rounds({5, 1, 4, 2, 3}), 2.0);
  EXPECT_EQ(rounds_kept(2), 0);
  EXPECT_EQ(rounds_kept(4), 0);
  EXPECT_EQ(rounds_kept(5), 3);
  EXPECT_EQ(rounds_kept(8), 4);
  EXPECT_EQ(rounds_kept(15), 8);
  // Four of eight rounds a burst slowed leave the spread that of the four it spared.
  const double spared = rounds_own_spread({1.0, 1.01, 0.99, 1.0, 1.0, 1.01, 0.99, 1.0}).variance;
  EXPECT_GT(spared, 0.0);
  EXPECT_DOUBLE_EQ(rounds_own_spread({1.0, 1.9, 0.99, 2.5, 1.0, 0.99, 1.7, 1.8}).variance, spared);
}

TEST(Rounds, WinsorizedSpreadIsYuensOnItsOwnDegreesOfFreedom) {
  // Five rounds: the slower two set to the slowest of the fastest three, then (R - 1) s_w^2 / (h (h - 1)),
  // h = 3, over the center's variance factor.
  const std::vector<double> r = {1.00, 1.02, 1.01, 1.50, 0.90};
  std::vector<double> w = {std::log(0.90), std::log(1.00), std::log(1.01), std::log(1.01), std::log(1.01)};
  double m = 0, ss = 0;
  for (double x : w) m += x / 5;
  for (double x : w) ss += (x - m) * (x - m);
  const own_spread s = rounds_own_spread(r);
  EXPECT_NEAR(s.variance, 4 * (ss / 4) / (3 * 2) / center_variance_factor(5), 1e-15);
  EXPECT_DOUBLE_EQ(s.dof, winsorized_dof(5));
  EXPECT_DOUBLE_EQ(rounds_own_spread({1.0, 1.1, 1.2}).dof, 2.0);
  EXPECT_THROW(winsorized_dof(4), std::invalid_argument);
}

TEST(Rounds, ACaseWhoseRoundsDisagreeNeedsMoreRoundsUpToTheMost) {
  // Rounds that agree to 0.05%: the planned five are enough.
  EXPECT_EQ(rounds_needed({1.0, 1.0005, 0.9995, 1.0002}, {}, 5, 15, 0.015), 5);
  // Rounds that spread 1%: a few more bring the detectable change to 1.5%.
  const int some = rounds_needed({1.0, 1.01, 0.99, 1.005}, {}, 5, 15, 0.015);
  EXPECT_GT(some, 5);
  EXPECT_LT(some, 15);
  // Rounds that spread 5%: no count within the most reaches 1.5%, so it takes the most.
  EXPECT_EQ(rounds_needed({1.0, 1.05, 0.95, 1.02}, {}, 5, 15, 0.015), 15);
  // A group's prior that the spread is small carries the case below the target without more rounds.
  EXPECT_EQ(rounds_needed({1.0, 1.01, 0.99, 1.005}, spread_prior{0.001, 200}, 5, 15, 0.015), 5);
  // The most is never below the planned.
  EXPECT_EQ(rounds_needed({1.0, 1.05, 0.95, 1.02}, {}, 5, 3, 0.015), 5);
}

TEST(Rounds, StudentQuantilesMatchTheTables) {
  // scipy.stats.t.ppf(0.975, df).
  const std::vector<std::pair<double, double>> known = {{1, 12.706205},   {2, 4.302653},    {2.5, 3.574655},
                                                        {3.3, 3.024874},  {4, 2.776445},    {7.5, 2.333040},
                                                        {12.2, 2.174858}, {25.5, 2.057493}, {120, 1.979930}};
  for (const auto& [df, t] : known) EXPECT_NEAR(student_t_975(df), t, 2e-4 * t) << "df " << df;
  EXPECT_THROW(student_t_975(0.5), std::invalid_argument);
}

TEST(Rounds, SpecialFunctionsMatchTheirValues) {
  // scipy.special.digamma and polygamma(1, .).
  EXPECT_NEAR(digamma(1.0), -0.5772156649, 1e-9);
  EXPECT_NEAR(digamma(0.5), -1.9635100260, 1e-9);
  EXPECT_NEAR(digamma(7.3), 1.9178203356, 1e-9);
  EXPECT_NEAR(trigamma(1.0), 1.6449340668, 1e-9);
  EXPECT_NEAR(trigamma(0.5), 4.9348022005, 1e-9);
  EXPECT_NEAR(trigamma(7.3), 0.1467957681, 1e-9);
  for (double x : {0.05, 0.7, 3.7, 40.0, 5000.0}) EXPECT_NEAR(trigamma_inverse(trigamma(x)), x, 1e-6 * x);
  EXPECT_NEAR(center_variance_factor(3), 0.448671, 1e-6);
  EXPECT_NEAR(center_variance_factor(5), 0.2453, 1e-6);
  EXPECT_NEAR(center_variance_factor(15), 0.0872, 1e-6);
  EXPECT_NEAR(center_variance_factor(40), 1.36 / 40, 1e-8);
  EXPECT_THROW(digamma(0.0), std::invalid_argument);
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

// A prediction interval from n rounds must hold the center of the next n rounds about 95% of the time when
// rounds vary normally: drawn here from a fixed sequence, so the test is deterministic.
TEST(Rounds, IntervalsCoverTheNextRunAtTheirStatedRate) {
  standard_normal normal(12345);
  const double sd = 0.02;
  for (int n : {3, 5, 12, 15}) {
    int covered = 0;
    const int trials = 20000;
    for (int i = 0; i < trials; ++i) {
      std::vector<double> run, next;
      for (int k = 0; k < n; ++k) run.push_back(std::exp(sd * normal()));
      for (int k = 0; k < n; ++k) next.push_back(std::exp(sd * normal()));
      const round_figure fig = combine_rounds(run, 0.0);
      covered += std::abs(std::log(center_of_rounds(next) / fig.center)) <= std::log1p(fig.half_width);
    }
    EXPECT_NEAR(static_cast<double>(covered) / trials, 0.95, 0.01) << n << " rounds";
  }
}

TEST(Rounds, ARoundsFileGivesEachRunsMedianInSeconds) {
  const std::string path = testing::TempDir() + "round_1.json";
  {
    std::ofstream f(path);
    f << "{\"context\": {\"gpu_bench.timed_s\": \"2.5\"}, \"benchmarks\": ["
         "{\"name\": \"A/bytes:4/manual_time\", \"run_name\": \"A/bytes:4/manual_time\", \"run_type\": \"iteration\","
         " \"repetition_index\": 0, \"real_time\": 3.5, \"time_unit\": \"us\", \"cv\": NaN},"
         "{\"name\": \"B/bytes:4/manual_time\", \"run_name\": \"B/bytes:4/manual_time\", \"run_type\": \"iteration\","
         " \"repetition_index\": 1, \"real_time\": 2, \"time_unit\": \"ms\", \"sample_times_s\": [0.002, 0.0021, "
         "0.0019]},"
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
  // The samples a round's process wrote, for the last round's percentiles; none for a run without them.
  round_samples samples;
  ASSERT_EQ(read_round_results(path, medians, timed, nullptr, &samples), "");
  EXPECT_EQ(samples.size(), 1u);
  EXPECT_EQ((samples[{"B/bytes:4", 1}]), (std::vector<double>{0.002, 0.0021, 0.0019}));
  std::remove(path.c_str());
  EXPECT_NE(read_round_results(path, medians, timed), "");
}

TEST(Rounds, EachEarlierRoundsSamplesAreKeptApartByNameAndRepetition) {
  add_prior_round({{{"Q", 0}, 1.0}}, {{{"Q", 0}, {1.0, 2.0}}, {{"Q", 1}, {9.0}}});
  add_prior_round({{{"R", 0}, 1.0}}, {});  // a round without samples (Q did not run in it)
  add_prior_round({{{"Q", 0}, 1.5}}, {{{"Q", 0}, {3.0}}});
  EXPECT_EQ(prior_round_samples("Q", 0), (std::vector<std::vector<double>>{{1.0, 2.0}, {3.0}}));
  EXPECT_EQ(prior_round_samples("Q", 1), (std::vector<std::vector<double>>{{9.0}}));
  EXPECT_TRUE(prior_round_samples("R", 0).empty());
}

// A family whose cases vary by very different amounts between processes: copies one way that agree to
// 0.05%, copies the other way that spread 3%. A steady case's interval comes from the cases that vary as it
// does, not from its family's typical spread, and a case whose own rounds agree by chance in the noisy group
// still gets that group's spread.
TEST(Rounds, ASteadyCaseInAFamilyWithNoisyMembersGetsANarrowInterval) {
  standard_normal normal(4242);
  std::vector<case_spread> earlier;  // the earlier rounds, as case_spread_prior fits them
  for (int c = 0; c < 6; ++c) {
    std::vector<double> steady, noisy;
    for (int k = 0; k < 4; ++k) steady.push_back(std::exp(0.0005 * normal()));
    for (int k = 0; k < 4; ++k) noisy.push_back(std::exp(0.03 * normal()));
    earlier.push_back(spread_of("F/dir:d2h/mem:pinned/size:large", steady, 0.0));
    earlier.push_back(spread_of("F/dir:h2d/mem:registered/size:large", noisy, 0.0));
  }
  const auto priors = fit_spread_priors(earlier);
  const spread_prior steady = priors.at("F/dir:d2h/mem:pinned/size:large");
  const spread_prior noisy = priors.at("F/dir:h2d/mem:registered/size:large");
  EXPECT_NEAR(steady.rel_sd, 0.0005, 0.0003);
  EXPECT_NEAR(noisy.rel_sd, 0.03, 0.015);
  EXPECT_GT(steady.dof, 2.0);  // the groups hold their cases' variances: the prior carries weight
  const std::vector<double> rounds = {1.0, 1.0004, 0.9996, 1.0001, 0.9999};
  const round_figure fig = combine_rounds(rounds, 0.0, steady);
  EXPECT_LT(fig.half_width, 0.003);
  EXPECT_LE(fig.detectable_half_width, kMinEffectPct / 100 + 1e-12);
  // The same rounds in the noisy group: they agreed by chance, and the interval is the group's.
  EXPECT_GT(combine_rounds(rounds, 0.0, noisy).half_width, 0.02);
}

TEST(Rounds, APriorIsOnlyForGroupsThatHoldEnoughCases) {
  std::vector<case_spread> cases = {spread_of("G/size:large", {1.0, 1.01}, 0.0),
                                    spread_of("G/size:large", {1.0, 1.02}, 0.0),
                                    spread_of("G/size:small", {1.0, 1.03}, 0.0)};
  EXPECT_TRUE(fit_spread_priors(cases).empty());  // too few cases in groups of two or more
  for (int k = 0; k < 4; ++k) cases.push_back(spread_of("G/size:large", {1.0, 1.0 + 0.01 * (k + 1)}, 0.0));
  const auto priors = fit_spread_priors(cases);
  EXPECT_EQ(priors.count("G/size:large"), 1u);
  EXPECT_EQ(priors.count("G/size:small"), 0u);
  EXPECT_LE(priors.at("G/size:large").dof, 6.0);  // never surer than its six cases' six degrees of freedom
  // Rounds the timer cannot tell apart spread by at least the floor.
  EXPECT_NEAR(spread_of("H", {1.0, 1.0, 1.0}, 0.001).variance, 1e-6, 1e-18);
}

// tests/data/round_model.json: what the tools (gpu_bench_tools/stats/rounds.py) make of one made-up family's
// rounds. gpu_bench must make the same, or its noise_pct and detectable_pct would say other than compare.
TEST(Rounds, TheModelMatchesTheTools) {
  std::ifstream in(std::string(GPU_BENCH_SOURCE_DIR) + "/tests/data/round_model.json");
  ASSERT_TRUE(in) << "tests/data/round_model.json";
  const nlohmann::json doc = nlohmann::json::parse(in);
  const double tick = doc.at("tick_s").get<double>();
  std::vector<case_spread> earlier;
  for (const auto& c : doc.at("cases")) {
    std::vector<double> rounds = c.at("rounds").get<std::vector<double>>();
    rounds.pop_back();
    if (rounds.size() < 2) continue;
    std::vector<double> sorted = rounds;
    std::sort(sorted.begin(), sorted.end());
    earlier.push_back(
        spread_of(spread_group(c.at("name").get<std::string>()), rounds, tick / median_of_sorted(sorted) / 2));
  }
  const auto priors = fit_spread_priors(earlier);
  const auto& want = doc.at("expected");
  ASSERT_EQ(want.size(), doc.at("cases").size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto& c = doc.at("cases")[i];
    const auto& w = want[i];
    const std::string name = c.at("name").get<std::string>();
    EXPECT_EQ(spread_group(name), w.at("group").get<std::string>());
    const auto it = priors.find(spread_group(name));
    const spread_prior p = it == priors.end() ? spread_prior{} : it->second;
    EXPECT_NEAR(p.rel_sd, w.at("prior_sd").get<double>(), 1e-6 + 1e-4 * w.at("prior_sd").get<double>()) << name;
    EXPECT_NEAR(p.dof, w.at("prior_dof").get<double>(), 1e-4 * std::max(1.0, w.at("prior_dof").get<double>())) << name;
    const round_figure f = combine_rounds(c.at("rounds").get<std::vector<double>>(), c.at("floor").get<double>(), p);
    EXPECT_DOUBLE_EQ(f.center, w.at("center").get<double>()) << name;
    // Within what the Student quantiles' approximation (Hill's) leaves: 2e-4 of the quantile.
    EXPECT_NEAR(f.half_width, w.at("half_width").get<double>(), 1e-3 * w.at("half_width").get<double>() + 1e-9) << name;
    EXPECT_NEAR(f.detectable_half_width, w.at("detectable").get<double>(),
                1e-3 * w.at("detectable").get<double>() + 1e-9)
        << name;
  }
}

TEST(Rounds, PriorRoundsAreLookedUpByNameAndRepetition) {
  const int before = prior_round_count();  // other tests of this process add rounds of their own
  add_prior_round({{{"X", 0}, 1.0}, {{"Y", 0}, 2.0}});
  add_prior_round({{{"X", 0}, 1.5}});
  EXPECT_EQ(prior_round_count(), before + 2);
  EXPECT_EQ(prior_round_times("X", 0), (std::vector<double>{1.0, 1.5}));
  EXPECT_EQ(prior_round_times("Y", 0), (std::vector<double>{2.0}));
  EXPECT_TRUE(prior_round_times("X", 1).empty());
  // Too few cases in the family for a prior.
  EXPECT_EQ(case_spread_prior("X", 0.0).dof, 0.0);
}

TEST(Rounds, ACasesPriorComesFromItsGroupsEarlierRounds) {
  // Family S: six steady large copies one way, six noisy ones the other, and one small copy; two rounds each,
  // plus a round of the large copies alone (link-bound cases' extra round).
  round_medians r1, r2, link;
  standard_normal normal(99);
  for (int c = 0; c < 6; ++c) {
    const std::string size = "/bytes:" + std::to_string((1 << 20) << c);
    for (auto* r : {&r1, &r2, &link}) {
      (*r)[{"S/dir:d2h/mem:pinned" + size, 0}] = 1e-3 * std::exp(0.001 * normal());
      (*r)[{"S/dir:h2d/mem:pinned" + size, 0}] = 1e-3 * std::exp(0.05 * normal());
    }
  }
  r1[{"S/dir:d2h/mem:pinned/bytes:4", 0}] = 5e-6;
  r2[{"S/dir:d2h/mem:pinned/bytes:4", 0}] = 5.1e-6;
  add_prior_round(r1);
  add_prior_round(link);
  add_prior_round(r2);
  const spread_prior steady = case_spread_prior("S/dir:d2h/mem:pinned/bytes:1048576", 1e-9);
  const spread_prior noisy = case_spread_prior("S/dir:h2d/mem:pinned/bytes:1048576", 1e-9);
  EXPECT_GT(steady.dof, 0.0);
  EXPECT_LT(steady.rel_sd, 0.005);
  EXPECT_GT(noisy.rel_sd, 0.01);
  EXPECT_EQ(case_spread_prior("S/dir:d2h/mem:pinned/bytes:4", 1e-9).dof, 0.0);  // a group of one case
  EXPECT_EQ(spread_group("S/dir:d2h/mem:pinned/bytes:65536"), "S/dir:d2h/mem:pinned/size:medium");
  EXPECT_EQ(spread_group("S/dir:d2h/mem:pinned/bytes:65535"), "S/dir:d2h/mem:pinned/size:small");
  EXPECT_EQ(spread_group("S/op:x/dir:d2h"), "S/dir:d2h");
}

TEST(Rounds, OnlyTheLinkBoundCasesWhoseRoundsDisagreeTakeExtraRounds) {
  // Family E: six copies whose four rounds agree to 0.02%, six whose rounds spread 1.5%, one that spread 8%.
  const options saved = current_options();
  options o = saved;
  o.rounds = 3;
  o.link_rounds = 5;
  o.link_max_rounds = 15;
  o.target_detectable_pct = 1.5;
  set_current_options(o);
  std::vector<round_medians> rounds(4);
  standard_normal normal(7);
  std::vector<std::string> names;
  for (int c = 0; c < 6; ++c) {
    const std::string size = "/bytes:" + std::to_string((1 << 20) << c);
    for (auto& r : rounds) {
      r[{"E/dir:d2h/mem:pinned" + size, 0}] = 1e-3 * std::exp(0.0002 * normal());
      r[{"E/dir:bidir/mem:pinned" + size, 0}] = 1e-3 * std::exp(0.015 * normal());
    }
    names.push_back("E/dir:d2h/mem:pinned" + size + "/manual_time");
    names.push_back("E/dir:bidir/mem:pinned" + size + "/manual_time");
  }
  const double wild[] = {1.0, 1.08, 0.93, 1.05};
  for (std::size_t k = 0; k < rounds.size(); ++k)
    rounds[k][{"E/dir:h2d/mem:registered/bytes:1048576", 0}] = 1e-3 * wild[k];
  names.push_back("E/dir:h2d/mem:registered/bytes:1048576/manual_time");
  for (const auto& r : rounds) add_prior_round(r);
  const auto extra = extra_link_rounds(names, 1e-9);
  // The wild case takes the most (15 in all: 10 more); no steady case takes any.
  ASSERT_EQ(extra.size(), 10u);
  EXPECT_NE(std::find(extra.back().begin(), extra.back().end(), names.back()), extra.back().end());
  for (const auto& round : extra)
    for (const std::string& name : round) EXPECT_EQ(name.find("dir:d2h"), std::string::npos) << name;
  // Each later round holds a subset of the one before.
  for (std::size_t k = 1; k < extra.size(); ++k) EXPECT_LE(extra[k].size(), extra[k - 1].size());
  // The filter that selects a round's cases matches them and nothing else.
  EXPECT_EQ(filter_matches(exact_names_filter(extra.front()), names), extra.front());
  o.link_max_rounds = 5;  // no more than the planned rounds: none extra
  set_current_options(o);
  EXPECT_TRUE(extra_link_rounds(names, 1e-9).empty());
  set_current_options(saved);
}

TEST(Rounds, TheLinkRoundsRunTheLinkBoundCasesAndTheSmallRoundsOnes) {
  const std::vector<std::string> names = {
      "Transfer/dir:h2d/mem:pinned/bytes:1048576/manual_time",        // link-bound
      "Transfer/dir:h2d/mem:pinned/bytes:4/manual_time",              // small rounds
      "Transfer/dir:d2d/mem:device/cache:warm/bytes:64/manual_time",  // small rounds
      "Transfer/dir:h2d/mem:pageable/bytes:4/manual_time",            // small rounds
      "Transfer/dir:h2d/mem:mapped/bytes:268435456/manual_time",      // neither
      "Batch/api:loop/copies:1/bytes:65536/manual_time",              // host rounds
      "Events/op:record/timing:off/manual_time",                      // small rounds: no bytes axis
  };
  EXPECT_EQ(link_round_cases("", names), (std::vector<std::string>{names[0], names[1], names[2], names[3], names[6]}));
  EXPECT_EQ(link_round_cases("pinned", names), std::vector<std::string>(names.begin(), names.begin() + 2));
  EXPECT_EQ(host_round_cases("", names), std::vector<std::string>{names[5]});
}

TEST(Rounds, ExtraRoundsStopWhereTheirCostWouldPassTheBudget) {
  const std::vector<std::vector<std::string>> plan = {{"A", "B"}, {"A", "B"}, {"A"}, {"A"}};
  const std::map<std::string, double> wall = {{"A", 1.0}, {"B", 0.5}};
  // Each round costs its process's start (0.2 s) and its cases: 1.7, 1.7, 1.2, 1.2.
  EXPECT_EQ(extra_rounds_within(plan, wall, 0.2, 100.0).size(), 4u);
  EXPECT_EQ(extra_rounds_within(plan, wall, 0.2, 4.6).size(), 3u);
  EXPECT_EQ(extra_rounds_within(plan, wall, 0.2, 4.5).size(), 2u);
  EXPECT_TRUE(extra_rounds_within(plan, wall, 0.2, 1.0).empty());
  // A case no earlier round timed costs as much as the costliest one that was.
  EXPECT_EQ(extra_rounds_within({{"C"}, {"C"}}, wall, 0.0, 1.5).size(), 1u);
  // A node's slow process start leaves a short run none.
  EXPECT_TRUE(extra_rounds_within(plan, wall, 1.3, 2.0).empty());
}

TEST(Rounds, ExtraRoundsThatCostMoreThanForeseenStopWithinTheBudget) {
  // Run 2 of the 48496b5 pair on an H200: a budget of 18.5 s, its extra rounds took 5.79, 5.26, 5.15, 4.96
  // and 3.68 s (24.8 s). Here five are foreseen at 3.7 s each, as five that fit the budget could be.
  EXPECT_TRUE(next_extra_round_fits(0.0, 0.0, 3.7, 18.5));
  EXPECT_TRUE(next_extra_round_fits(5.79, 3.7, 3.7, 18.5));    // 5.79 + 3.7 * 1.56 = 11.6
  EXPECT_TRUE(next_extra_round_fits(11.05, 7.4, 3.7, 18.5));   // 11.05 + 3.7 * 1.49 = 16.6
  EXPECT_FALSE(next_extra_round_fits(16.2, 11.1, 3.7, 18.5));  // 16.2 + 3.7 * 1.46 = 21.6: it ran to 24.8 s
  EXPECT_TRUE(next_extra_round_fits(2.0, 3.7, 3.7, 7.4));      // cheaper than foreseen: never scaled down
  EXPECT_FALSE(next_extra_round_fits(2.0, 3.7, 5.5, 7.4));
  const std::map<std::string, double> wall = {{"A", 1.0}, {"B", 0.5}};
  EXPECT_NEAR(extra_round_cost_s({"A", "B"}, wall, 0.2), 1.7, 1e-12);
  EXPECT_NEAR(extra_round_cost_s({"C"}, wall, 0.0), 1.0, 1e-12);  // unknown: the costliest
}

TEST(Rounds, EachEarlierRoundsProcessIsWrittenWithItsWallCasesAndTimedSeconds) {
  EXPECT_EQ(round_processes_text({}), "");
  EXPECT_EQ(round_processes_text({{"round_1", 75.214, 70.1, 30.25}, {"link_1", 7.3, 6.0, 0}, {"extra_1", 5.126, 0, 0}}),
            "round_1=75.21/70.10/30.25 link_1=7.30/6.00/0.00 extra_1=5.13/0.00/0.00");
}

TEST(Progress, RoundsAreNamedInTheLines) {
  progress p(10, 0.5, nullptr, 10.0, 3, false);
  EXPECT_NE(p.opening().find("each in 3 rounds of their own processes"), std::string::npos) << p.opening();
  p.start_round(2);
  EXPECT_EQ(p.line("Transfer", 5, 20.0), "gpu_bench: [round 2/3 Transfer 5/10, 20s, ~20s left]");
}
