// What a run prints on stderr: progress lines wherever stderr goes, and the machine's context once per run,
// not once per round's process.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <sstream>

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

}  // namespace
}  // namespace gpu_bench
