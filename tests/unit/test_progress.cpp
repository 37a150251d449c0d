// What a run prints on stderr: progress lines wherever stderr goes, and the machine's context once per run,
// not once per round's process.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include "harness/run/progress.hpp"

namespace gpu_bench {
namespace {

TEST(Progress, LinesAreShownWhenStderrIsALogAsWellAsOnATerminal) {
  EXPECT_TRUE(progress_shown("auto"));  // the default, whether or not stderr is a terminal
  EXPECT_TRUE(progress_shown("on"));
  EXPECT_FALSE(progress_shown("off"));
}

TEST(Progress, AnEarlierRoundPrintsNoContextOfTheMachine) {
  const auto child = round_display_reporter(2);
  ASSERT_NE(child, nullptr);
  std::ostringstream out, err;
  child->SetOutputStream(&out);
  child->SetErrorStream(&err);
  benchmark::AddCustomContext("gpu.name", "a GPU");
  const benchmark::BenchmarkReporter::Context context;
  EXPECT_TRUE(child->ReportContext(context));  // false would stop the round
  benchmark::BenchmarkReporter::Run run;
  run.run_name.function_name = "Transfer/dir:h2d";
  child->ReportRuns({run});
  child->Finalize();
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), "");
}

TEST(Progress, TheLastRoundWritesTheContextWithGoogleBenchmarksOwnReporter) {
  EXPECT_EQ(round_display_reporter(0), nullptr);
  // What the last round's reporter writes, for contrast: the context, on its error stream.
  benchmark::ConsoleReporter console;
  std::ostringstream out, err;
  console.SetOutputStream(&out);
  console.SetErrorStream(&err);
  benchmark::AddCustomContext("gpu_bench.test_fact", "shown");
  EXPECT_TRUE(console.ReportContext(benchmark::BenchmarkReporter::Context()));
  EXPECT_NE(err.str().find("gpu_bench.test_fact: shown"), std::string::npos) << err.str();
}

// A default run on an H200: full rounds of 73 s, link rounds of 12 s, the last round about as long as a full
// one, and extra rounds of at most a tenth of the earlier rounds' time.
TEST(Progress, WhatIsLeftAfterAnEarlierRoundCountsTheRoundsToComeTheExtrasAndTheLast) {
  // After round 1: link_1, round_2 and link_2 to come, then the extras and the last round.
  const double left = time_left_s({12.0, 73.0, 12.0}, 73.0, 0.1, 73.0);
  EXPECT_DOUBLE_EQ(left, 12.0 + 73.0 + 12.0 + 0.1 * (73.0 + 97.0) + 73.0);
  // Without link-bound cases no extra round runs.
  EXPECT_DOUBLE_EQ(time_left_s({73.0}, 73.0, 0.0, 73.0), 146.0);
  EXPECT_EQ(round_done_line(1, 3, 73.3, 187.0), "gpu_bench: round 1 of 3 took 1m13s; about 3m07s left");
}

TEST(Progress, AnEarlierRoundsWallsForeseeWhatIsLeftWhereTheCheapCasesComeFirst) {
  // Two cheap cases first, then one that took eight times their two together in the earlier full round.
  progress p(3, 0.5, nullptr, 10.0, 3, false);
  p.start_round(2);
  p.expect_walls({{"A/manual_time", 1.0}, {"B/manual_time", 1.0}, {"C/manual_time", 8.0}}, 1);
  p.finished("A", "F");
  p.finished("B", "F");
  // Done in 2 s what took 2 s before: 8 s left, where the count of cases alone would say 1 s.
  EXPECT_EQ(p.line("F", 2, 2.0), "gpu_bench: [round 2/3 F 2/3, 2s, ~8s left]");
  progress q(3, 0.5, nullptr, 10.0, 3, false);
  q.start_round(2);
  EXPECT_EQ(q.line("F", 2, 2.0), "gpu_bench: [round 2/3 F 2/3, 2s, ~1s left]");
}

TEST(Progress, WallsTravelToARoundsProcessAsText) {
  const std::map<std::string, double> walls{{"Transfer/dir:h2d/bytes:4/manual_time", 0.0125}, {"Launch/x", 3.5}};
  EXPECT_EQ(walls_from_text(walls_text(walls)), walls);
  EXPECT_TRUE(walls_from_text("not a line\n1.5 no tab\n").empty());
}

}  // namespace
}  // namespace gpu_bench
