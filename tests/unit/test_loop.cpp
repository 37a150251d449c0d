// The timed loop's stopping rules, on synthetic samples (no GPU): when it stops, and what it reports.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "harness/context/health.hpp"
#include "harness/measure/loop.hpp"
#include "harness/run/options.hpp"
#include "harness/run/rounds.hpp"
#include "harness/run/thread_cpu.hpp"

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

// Under --cpu=fast, how many CPUs the thread may use in a held case's preparation and in its samples.
std::pair<std::size_t, std::size_t> cpus_in_prepare_and_measure(bool prepare_on_any_cpu) {
  const std::vector<int> before = allowed_cpus();
  (void)set_thread_cpu_policy(kCpuFast, before);
  place_thread_for_case(true);
  std::size_t in_prepare = 0, in_measure = 0;
  case_plan p = plan_of([&] {
    in_measure = std::max(in_measure, allowed_cpus().size());
    return 1e-3;
  });
  p.prepare = [&] { in_prepare = std::max(in_prepare, allowed_cpus().size()); };
  p.prepare_on_any_cpu = prepare_on_any_cpu;
  (void)calibrate(p, rules(0.5, 10.0));
  place_thread_for_case(false);
  (void)set_thread_cpu_policy(kCpuOff, before);
  return {in_prepare, in_measure};
}

TEST(Loop, AHeavyPreparationRunsOffTheHeldCpuAndTheSampleOnIt) {
  const std::size_t cpus = allowed_cpus().size();
  if (cpus < 2) GTEST_SKIP() << "this process may use one CPU: nothing to release it to";
  EXPECT_EQ(cpus_in_prepare_and_measure(true), std::make_pair(cpus, std::size_t{1}));
  EXPECT_EQ(cpus_in_prepare_and_measure(false), std::make_pair(std::size_t{1}, std::size_t{1}));
  EXPECT_EQ(allowed_cpus().size(), cpus);
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
                                 // 12 ms of budget, 2 ms a sample: ten samples pass it, and no one sample
                                 // does unless its sleep overruns sixfold (a loaded machine under ASan
                                 // overran 2.5-fold, which counts as one sample over the budget).
                                 rules(0.5, 0.012));
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

// Samples that never settle (every value different), 2 ms of wall each, timing all of it or almost none.
sample_set never_settling(double timed_share, double budget_s) {
  int i = 0;
  return calibrate(plan_of([&] {
                     std::this_thread::sleep_for(std::chrono::milliseconds(2));
                     return 2e-3 * timed_share * (1 + (++i * 7919 % 1000) / 1000.0);
                   }),
                   rules(0.01, budget_s));
}

TEST(Loop, MostlyUntimedSamplesStopAtAQuarterOfTheBudget) {
  const sample_set timed = never_settling(1.0, 0.2);
  const sample_set untimed = never_settling(0.01, 0.2);
  EXPECT_GE(untimed.size(), 10u);
  // About 100 samples against about 25: the untimed time alone spends a quarter of the budget.
  EXPECT_LT(static_cast<double>(untimed.size()), 0.4 * static_cast<double>(timed.size()));
  EXPECT_GT(static_cast<double>(untimed.size()), 0.15 * static_cast<double>(timed.size()));
}

TEST(Loop, CalibrationsCountInTheTimedTime) {
  const double before = timed_seconds_total(), before_calibration = calibration_timed_seconds_total();
  const sample_set s = calibrate(plan_of([] { return 1e-3; }), rules(0.5, 10.0));
  EXPECT_NEAR(timed_seconds_total() - before, s.sum_s(), 1e-12);
  EXPECT_NEAR(calibration_timed_seconds_total() - before_calibration, s.sum_s(), 1e-12);
  EXPECT_GT(s.sum_s(), 0.0);
}

TEST(Loop, AWarmPlanTakesNoWarmUp) {
  int taken = 0;
  case_plan p = plan_of([&] {
    ++taken;
    return 1e-3;
  });
  (void)calibrate(p, rules(0.5, 10.0));
  EXPECT_GT(taken, 10);  // the warm-up's sample or more, then ten
  taken = 0;
  p.already_warm = true;
  (void)calibrate(p, rules(0.5, 10.0));
  EXPECT_EQ(taken, 10);
}

TEST(Loop, MinimumTimedTimeIsHonoured) {
  sampling_rules r = rules(0.5, 10.0);
  r.min_time_s = 0.05;  // 50 samples of a millisecond at least
  const sample_set s = calibrate(plan_of([] { return 1e-3; }), r);
  EXPECT_GE(s.size(), 50u);
}

// Samples of about 2 ms of wall each, `timed_share` of which each reports as timed (of its real wall, however
// long a loaded machine makes the sleep), under a budget of 20 ms and a minimum of 50 ms timed.
sample_set half_timed(double timed_share) {
  sampling_rules r = rules(0.01, 0.02);
  r.min_time_s = 0.05;
  return calibrate(plan_of([timed_share] {
                     const auto t0 = std::chrono::steady_clock::now();
                     std::this_thread::sleep_for(std::chrono::milliseconds(2));
                     return timed_share * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                   }),
                   r);
}

TEST(Loop, AMinimumTimedTimeStopsAtTwiceItsWallTimeWhenSamplesAreMostlyUntimed) {
  // 1% timed: 50 ms of timed time would take 5 s of wall; the loop stops at 0.1 s instead.
  const auto t0 = std::chrono::steady_clock::now();
  const sample_set s = half_timed(0.01);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
  EXPECT_GE(s.size(), 10u);
  EXPECT_LT(s.sum_s(), 0.05);
}

TEST(Loop, AMinimumTimedTimeHoldsForSamplesMostlyTimed) {
  // 70% timed: 50 ms of timed time takes about 72 ms of wall, within twice it.
  EXPECT_GE(half_timed(0.7).sum_s(), 0.05);
}

TEST(Loop, ARoundWithASpanSamplesForIt) {
  // Samples of one moment agree at once: without a span the loop stops at its minimum of 10 (20 ms here).
  const auto two_ms = plan_of([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return 2e-3;
  });
  sampling_rules r = rules(0.5, 10.0);
  r.min_span_s = 0.06;
  const auto t0 = std::chrono::steady_clock::now();
  const sample_set s = calibrate(two_ms, r);
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.06);
  EXPECT_GT(s.size(), 10u);
}

TEST(Loop, TheRunningCasesSpanIsInItsRulesUntilItEnds) {
  health_sampler no_gpus({}, kDefaultHealthPollMs);
  set_running_case("Copy/dir:bidir/bytes:1048576", &no_gpus, round_kind::link, 0.3);
  EXPECT_EQ(rules_from_options().min_span_s, 0.3);
  set_running_case("Copy/dir:bidir/bytes:1048576", nullptr);
  EXPECT_EQ(rules_from_options().min_span_s, 0.0);
  set_running_case("Copy/dir:h2d/bytes:1048576", &no_gpus, round_kind::link);
  EXPECT_EQ(rules_from_options().min_span_s, 0.0);
  set_running_case("Copy/dir:h2d/bytes:1048576", nullptr);
}

TEST(Loop, TheMedianIsTheFigure) {
  int i = 0;
  const double v[] = {5, 1, 3, 2, 4, 100, 3, 3, 2, 4};
  const sample_set s = calibrate(plan_of([&] { return v[i++ % 10] * 1e-3; }), rules(100.0, 10.0));
  EXPECT_EQ(s.size(), 10u);
  EXPECT_DOUBLE_EQ(s.time_s(), 3e-3);     // sorted: 1 2 2 3 3 3 4 4 5 100
  EXPECT_DOUBLE_EQ(s.fastest_s(), 1e-3);  // the first sample was not the fastest
}

// What one reported case did, counted through its plan's hooks.
struct hook_counts {
  int resets = 0;              // reset_output calls
  int checks = 0;              // verify calls
  int checks_after_reset = 0;  // verify calls whose sample began with a reset_output
};

class quiet_reporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// Runs `body` as Google Benchmark runs a registered family's case, under `o`, which then go back to the defaults.
void run_as_case(const char* name, const options& o, const std::function<void(benchmark::State&)>& body) {
  set_current_options(o);
  benchmark::RegisterBenchmark(name, [&](benchmark::State& state) { body(state); })->UseManualTime()->Iterations(1);
  quiet_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  set_current_options(options{});
}

// Options under which a round stops at `min_samples`, in one process.
options stopping_at(int min_samples) {
  options o = current_options();
  o.noise_pct = 100;
  o.min_samples = min_samples;
  o.rounds = 1;  // one process, whose own minimum is the one asked for
  return o;
}

// Runs one case through run_case, counting its plan's hooks.
hook_counts run_one_case(bool verify_each) {
  options o = stopping_at(12);
  o.verify_each = verify_each;
  hook_counts n;
  bool reset_pending = false, sample_had_reset = false;
  run_as_case("LoopHooks", o, [&](benchmark::State& state) {
    case_plan plan;
    plan.reset_output = [&] {
      ++n.resets;
      reset_pending = true;
    };
    plan.measure = [&] {
      sample_had_reset = reset_pending;
      reset_pending = false;
      return sample(1e-3);
    };
    plan.verify = [&] {
      ++n.checks;
      n.checks_after_reset += sample_had_reset;
      return std::string();
    };
    const auto t = run_case(state, plan);
    EXPECT_TRUE(t.has_value());
    EXPECT_EQ(t ? t->size() : 0u, 12u);
  });
  return n;
}

TEST(Loop, VerifyEachResetsTheOutputBeforeEveryReportedSampleAndChecksAfterIt) {
  const hook_counts n = run_one_case(true);
  EXPECT_EQ(n.resets, 12);  // not in the warm-up
  EXPECT_EQ(n.checks, 12);
  EXPECT_EQ(n.checks_after_reset, 12);
}

TEST(Loop, WithoutVerifyEachTheOutputIsNeverResetAndCheckedOnce) {
  const hook_counts n = run_one_case(false);
  EXPECT_EQ(n.resets, 0);
  EXPECT_EQ(n.checks, 1);
}

// A plan that rotates over placements takes two samples of each, above a smaller minimum of samples.
TEST(Loop, ARotatingPlanSamplesEachPlacementTwice) {
  std::size_t reported = 0;
  run_as_case("LoopPlacements", stopping_at(12), [&](benchmark::State& state) {
    case_plan plan;
    plan.placements = 8;
    plan.measure = [] { return sample(1e-3); };
    const auto t = run_case(state, plan);
    reported = t ? t->size() : 0;
  });
  EXPECT_EQ(reported, 16u);
}

// Its warm-up takes a sample of each placement, though one sample outlasts the warm-up's millisecond.
TEST(Loop, ARotatingPlanWarmsEachPlacementHoweverShortTheMillisecond) {
  int taken = 0;
  case_plan p = plan_of([&] {
    ++taken;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // one sample outlasts the warm-up's millisecond
    return 1e-3;
  });
  p.placements = 5;
  sampling_rules r = rules(100.0, 10.0);
  r.min_samples = 1;
  (void)calibrate(p, r);
  EXPECT_GE(taken, 5 + 1);
}

// Keeps the counters of the last run reported.
class counter_reporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) counters = r.counters;
  }
  benchmark::UserCounters counters;
};

// The last of three rounds: its percentiles are those of every round's samples together, as the earlier
// rounds' processes wrote them.
TEST(Loop, SamplePercentilesPoolEveryRoundsSamples) {
  const options saved = current_options();
  options o = saved;
  o.rounds = 3;
  o.round = 0;
  o.noise_pct = 100;
  o.record_samples = true;
  set_current_options(o);
  const std::string name = "LoopPooled/bytes:4";
  add_prior_round({{{name, 0}, 3e-3}}, {{{name, 0}, {2e-3, 3e-3, 4e-3}}});
  add_prior_round({{{name, 0}, 5e-3}}, {{{name, 0}, {5e-3, 100e-3}}});
  health_sampler no_gpus({}, kDefaultHealthPollMs);
  counter_reporter reporter;
  benchmark::RegisterBenchmark(name.c_str(),
                               [&](benchmark::State& state) {
                                 set_running_case(name, &no_gpus);
                                 EXPECT_TRUE(run_case(state, plan_of([] { return 1e-3; })).has_value());
                                 set_running_case(name, nullptr);
                               })
      ->UseManualTime()
      ->Iterations(1);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  set_current_options(saved);
  // This round's ten samples of 1 ms (its minimum: they agree) and the earlier rounds' five: sorted 1 (ten
  // times), 2, 3, 4, 5 and 100 ms, of which numpy.percentile gives 1, 4.6 and 86.7 ms at 50, 90 and 99.
  ASSERT_EQ(reporter.counters.count("sample_p99_us"), 1u);
  EXPECT_EQ(reporter.counters.at("samples").value, 10.0);
  EXPECT_NEAR(reporter.counters.at("sample_p50_us").value, 1000.0, 1e-6);
  EXPECT_NEAR(reporter.counters.at("sample_p90_us").value, 4600.0, 1e-6);
  EXPECT_NEAR(reporter.counters.at("sample_p99_us").value, 86700.0, 1e-6);
  // --samples=on writes what they came from: the earlier rounds' samples beside this round's.
  ASSERT_FALSE(recorded_runs().empty());
  const recorded_run& r = recorded_runs().back();
  EXPECT_EQ(r.name, name);
  EXPECT_EQ(r.times_s.size(), 10u);
  EXPECT_EQ(r.earlier_times_s, (std::vector<std::vector<double>>{{2e-3, 3e-3, 4e-3}, {5e-3, 100e-3}}));
}

// An earlier round's process: its percentiles are its own, and it keeps its samples for the last round.
TEST(Loop, AnEarlierRoundKeepsItsSamplesForTheLastOne) {
  const options saved = current_options();
  options o = saved;
  o.rounds = 3;
  o.round = 1;
  o.noise_pct = 100;
  set_current_options(o);
  const std::string name = "LoopEarlier/bytes:4";
  health_sampler no_gpus({}, kDefaultHealthPollMs);
  counter_reporter reporter;
  benchmark::RegisterBenchmark(
      name.c_str(),
      [&](benchmark::State& state) {
        set_running_case(name, &no_gpus);
        int i = 0;
        EXPECT_TRUE(run_case(state, plan_of([&] { return 1e-3 * (1 + i++ % 2); })).has_value());
        set_running_case(name, nullptr);
      })
      ->UseManualTime()
      ->Iterations(1);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  set_current_options(saved);
  ASSERT_FALSE(recorded_runs().empty());
  const recorded_run& r = recorded_runs().back();
  EXPECT_EQ(r.name, name);
  EXPECT_EQ(r.times_s.size(), static_cast<std::size_t>(reporter.counters.at("samples").value));
  EXPECT_TRUE(r.earlier_times_s.empty());
  EXPECT_LE(reporter.counters.at("sample_p50_us").value, reporter.counters.at("sample_p90_us").value);
  EXPECT_NEAR(reporter.counters.at("sample_p99_us").value, 2000.0, 1e-6);
}

}  // namespace
}  // namespace gpu_bench
