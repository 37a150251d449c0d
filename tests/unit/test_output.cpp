#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "harness/run/output_file.hpp"

using namespace gpu_bench;

TEST(Filter, CountsLikeGoogleBenchmark) {
  const std::vector<std::string> names = {"Transfer/dir:h2d/mem:pinned/bytes:4/manual_time",
                                          "Transfer/dir:d2h/mem:pageable/bytes:4/manual_time",
                                          "Overlap/schedule:serial/mem:pinned/streams:1/manual_time"};
  EXPECT_EQ(count_filter_matches("", names), 3);
  EXPECT_EQ(count_filter_matches("all", names), 3);
  EXPECT_EQ(count_filter_matches("Transfer", names), 2);
  EXPECT_EQ(count_filter_matches("mem:pinned", names), 2);
  EXPECT_EQ(count_filter_matches("-Transfer", names), 1);
  EXPECT_EQ(count_filter_matches("^Transfer/dir:(h2d|d2h)/mem:pinned/", names), 1);
  EXPECT_EQ(count_filter_matches("mem:floppy", names), 0);
  EXPECT_EQ(count_filter_matches("(", names), -1);
}

TEST(Filter, NamesUnknownMemoryKindsOnly) {
  EXPECT_EQ(unknown_mem_kinds_in_filter("Transfer/.*mem:floppy/"), std::vector<std::string>{"floppy"});
  EXPECT_EQ(unknown_mem_kinds_in_filter("mem:floppy$"), std::vector<std::string>{"floppy"});
  EXPECT_TRUE(unknown_mem_kinds_in_filter("mem:pinned/").empty());
  EXPECT_TRUE(unknown_mem_kinds_in_filter("mem:pin.*").empty());  // a pattern, not a name
  EXPECT_TRUE(unknown_mem_kinds_in_filter("mem:(pinned|pageable)").empty());
}

TEST(AtomicOutput, WritesBesideTheFileAndRenamesOnlyOnCommit) {
  const std::string dir = ::testing::TempDir();
  const std::string final_path = dir + "gpu_bench_atomic_test.json";
  { std::ofstream(final_path) << "old"; }
  std::vector<std::string> args = {"gpu_bench", "--benchmark_out=" + final_path, "--benchmark_out_format=json"};
  {
    atomic_output out(args);
    ASSERT_TRUE(out.active());
    EXPECT_EQ(out.problem(), "");
    EXPECT_EQ(args[1], "--benchmark_out=" + out.temp_path());
    EXPECT_NE(out.temp_path(), final_path);
    { std::ofstream(out.temp_path()) << "{\"partial"; }
    // destroyed without commit: the old file stays, the partial one goes
  }
  std::ifstream in(final_path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "old");
  {
    atomic_output out(args = {"gpu_bench", "--benchmark_out=" + final_path});
    { std::ofstream(out.temp_path()) << "new"; }
    EXPECT_EQ(out.commit(), "");
  }
  std::ifstream in2(final_path);
  std::string text2((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text2, "new");
  std::remove(final_path.c_str());
}

TEST(AtomicOutput, MissingDirectoryIsAProblem) {
  std::vector<std::string> args = {"gpu_bench", "--benchmark_out=/no/such/dir/x.json"};
  atomic_output out(args);
  EXPECT_NE(out.problem().find("does not exist"), std::string::npos);
}

// Google Benchmark writes the cv aggregate of a zero counter as a bare NaN: the totals and samples are
// still added, and every such value (and a string that only reads like one) comes back as it was.
TEST(AnnotateResults, KeepsNonFiniteValuesAndAddsTheTotals) {
  const std::string path = ::testing::TempDir() + "gpu_bench_annotate_nan.json";
  {
    std::ofstream f(path);
    f << "{\n  \"context\": {\n    \"note\": \"NaN, -Infinity\"\n  },\n  \"benchmarks\": [\n"
         "    {\n      \"name\": \"A/bytes:4/manual_time\",\n      \"run_name\": \"A/bytes:4/manual_time\",\n"
         "      \"run_type\": \"iteration\",\n      \"repetition_index\": 0,\n      \"numa_node\": 0\n    },\n"
         "    {\n      \"name\": \"A/bytes:4/manual_time_cv\",\n      \"run_type\": \"aggregate\",\n"
         "      \"numa_node\": NaN,\n      \"low\": -Infinity,\n      \"high\": Infinity\n    }\n  ]\n}\n";
  }
  const std::vector<double> times = {1e-3, 2e-3}, rounds = {1.5e-3, 1.6e-3, 1.4e-3};
  const std::vector<std::vector<double>> earlier = {{1.5e-3}, {1.25e-3, 1.75e-3}};
  run_samples run{"A/bytes:4", 0, &times, &rounds, 0.25};
  run.earlier_times_s = &earlier;
  const std::vector<int> placements = {0, 1};
  run.placements = &placements;
  ASSERT_EQ(annotate_results(path, {{"gpu_bench.elapsed_s", "1.5"}}, {run}), "");
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"gpu_bench.elapsed_s\": \"1.5\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"sample_times_s\": ["), std::string::npos) << text;
  EXPECT_NE(text.find("\"round_times_s\": ["), std::string::npos) << text;
  EXPECT_NE(text.find("\"earlier_sample_times_s\": [\n        [\n          0.0015\n        ],"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\"sample_placements\": [\n        0,\n        1\n      ]"), std::string::npos) << text;
  EXPECT_NE(text.find("\"wall_s\": 0.25"), std::string::npos) << text;
  EXPECT_NE(text.find("\"numa_node\": NaN,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"low\": -Infinity,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"high\": Infinity\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\"note\": \"NaN, -Infinity\""), std::string::npos) << text;
  EXPECT_EQ(text.find("gpu_bench-non-finite"), std::string::npos) << text;
  std::remove(path.c_str());
}
