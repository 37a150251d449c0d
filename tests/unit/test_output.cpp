#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "fixtures/run/output_file.hpp"

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
