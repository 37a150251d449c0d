#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/run/options.hpp"

using namespace gpu_bench;

namespace {
struct argv_holder {
  explicit argv_holder(std::vector<std::string> a) : args(std::move(a)) {
    for (auto& s : args) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
    argc = static_cast<int>(args.size());
  }
  std::vector<std::string> args;
  std::vector<char*> ptrs;
  int argc;
};
}  // namespace

TEST(Options, TakesOwnFlagsAndLeavesTheRest) {
  argv_holder a({"gpu_bench", "--device=1", "--benchmark_filter=Transfer", "--sizes=4,1M", "--benchmark_min_time=0.1"});
  const options o = parse_options(a.argc, a.ptrs.data());
  EXPECT_EQ(o.device, 1);
  EXPECT_EQ(o.sizes.size(), 2u);
  EXPECT_DOUBLE_EQ(o.min_time_s, 0.1);  // the sampling loop's, so Google Benchmark does not see it
  EXPECT_FALSE(o.list_only);
  ASSERT_EQ(a.argc, 2);
  EXPECT_STREQ(a.ptrs[1], "--benchmark_filter=Transfer");
  EXPECT_EQ(a.ptrs[2], nullptr);
}

TEST(Options, Defaults) {
  argv_holder a({"gpu_bench", "--benchmark_list_tests"});
  const options o = parse_options(a.argc, a.ptrs.data());
  EXPECT_EQ(o.device, 0);
  EXPECT_EQ(o.sizes.size(), 15u);
  EXPECT_TRUE(o.list_only);
  EXPECT_DOUBLE_EQ(o.min_time_s, 0.0);
  EXPECT_TRUE(o.gate);
  EXPECT_DOUBLE_EQ(o.noise_pct, kDefaultNoisePct);
  EXPECT_DOUBLE_EQ(o.max_time_per_case_s, kDefaultMaxTimePerCaseS);
  EXPECT_EQ(o.min_samples, kMinSamples);
  EXPECT_FALSE(o.record_samples);
  EXPECT_FALSE(o.verify_each);
  EXPECT_EQ(o.progress, "auto");
  EXPECT_EQ(o.preset, "default");
}

TEST(Options, GateOffAndItsTimeoutAreTwoFlags) {
  argv_holder a({"gpu_bench", "--gate=off", "--gate_timeout_ms=250", "--benchmark_filter=Transfer"});
  const options o = parse_options(a.argc, a.ptrs.data());
  EXPECT_FALSE(o.gate);
  EXPECT_DOUBLE_EQ(o.gate_timeout_s, 0.25);
  ASSERT_EQ(a.argc, 2);
  EXPECT_STREQ(a.ptrs[1], "--benchmark_filter=Transfer");
  argv_holder on({"gpu_bench", "--gate=on"});
  EXPECT_TRUE(parse_options(on.argc, on.ptrs.data()).gate);
}

TEST(Options, DeviceAll) {
  argv_holder a({"gpu_bench", "--device=all", "--benchmark_list_tests"});
  const options o = parse_options(a.argc, a.ptrs.data());
  EXPECT_TRUE(o.all_devices);
  EXPECT_EQ(o.device, 0);  // the first GPU heads the context
  ASSERT_EQ(a.argc, 2);
  argv_holder b({"gpu_bench", "--device=3"});
  const options p = parse_options(b.argc, b.ptrs.data());
  EXPECT_FALSE(p.all_devices);
  EXPECT_EQ(p.device, 3);
}

TEST(Options, ListGpusOnlyWithTheListing) {
  argv_holder a({"gpu_bench", "--list_gpus=8", "--benchmark_list_tests", "--device=all"});
  const options o = parse_options(a.argc, a.ptrs.data());
  EXPECT_EQ(o.list_gpus, 8);
  EXPECT_TRUE(o.all_devices);
  ASSERT_EQ(a.argc, 2);  // Google Benchmark's flag stays for it
  for (const char* bad : {"--list_gpus=0", "--list_gpus=65", "--list_gpus=x", "--list_gpus"}) {
    argv_holder b({"gpu_bench", bad, "--benchmark_list_tests"});
    EXPECT_THROW(parse_options(b.argc, b.ptrs.data()), usage_error) << bad;
  }
  try {
    argv_holder c({"gpu_bench", "--list_gpus=8"});
    (void)parse_options(c.argc, c.ptrs.data());
    ADD_FAILURE() << "--list_gpus without --benchmark_list_tests was accepted";
  } catch (const usage_error& e) {
    EXPECT_STREQ(e.what(), "--list_gpus=N lists the cases of a machine of N GPUs; give it with --benchmark_list_tests");
  }
}

TEST(Options, BadValuesAreUsageErrors) {
  try {
    argv_holder a({"gpu_bench", "--device=foo"});
    (void)parse_options(a.argc, a.ptrs.data());
    ADD_FAILURE() << "--device=foo was accepted";
  } catch (const usage_error& e) {
    EXPECT_STREQ(e.what(), "--device takes a GPU number from 0 to 1023 or all, not 'foo'");
  }
  for (const char* bad : {"--device=-1", "--device=x", "--device=", "--device", "--device=ALL", "--device=all,1",
                          "--device=1024", "--sizes=5", "--sizes=-4", "--gate_timeout_ms=0", "--on-throttle=ignore",
                          "--timeline=", "--gate=", "--gate=no", "--gate"}) {
    argv_holder a({"gpu_bench", bad});
    EXPECT_THROW(parse_options(a.argc, a.ptrs.data()), usage_error) << bad;
  }
}

TEST(Options, SamplingFlags) {
  argv_holder a({"gpu_bench", "--noise=1.5", "--max_time_per_case=2", "--samples=on", "--verify=each", "--progress=on",
                 "--preset=gate", "--benchmark_min_time=100x"});
  const options o = parse_options(a.argc, a.ptrs.data());
  EXPECT_DOUBLE_EQ(o.noise_pct, 1.5);
  EXPECT_DOUBLE_EQ(o.max_time_per_case_s, 2.0);
  EXPECT_TRUE(o.record_samples);
  EXPECT_TRUE(o.verify_each);
  EXPECT_EQ(o.progress, "on");
  EXPECT_EQ(o.preset, "gate");
  EXPECT_EQ(o.min_samples, 100);
  EXPECT_EQ(a.argc, 1);
  argv_holder b({"gpu_bench", "--benchmark_min_time=0.5s"});  // Google Benchmark 1.8's spelling reads too
  EXPECT_DOUBLE_EQ(parse_options(b.argc, b.ptrs.data()).min_time_s, 0.5);
  for (const char* bad : {"--noise=0", "--noise=x", "--noise", "--max_time_per_case=0", "--max_time_per_case=-1",
                          "--samples=yes", "--verify=sometimes", "--progress=maybe", "--preset=fast", "--preset",
                          "--benchmark_min_time=abc", "--benchmark_min_time=0x", "--benchmark_min_time=-1"}) {
    argv_holder c({"gpu_bench", bad});
    EXPECT_THROW(parse_options(c.argc, c.ptrs.data()), usage_error) << bad;
  }
}

TEST(Options, GoogleBenchmarkRunsEachRepetitionOnce) {
  EXPECT_EQ(benchmark_min_time_arg(true), "--benchmark_min_time=1x");
  EXPECT_EQ(benchmark_min_time_arg(false), "--benchmark_min_time=0.000000001");
}
