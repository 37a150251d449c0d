#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "harness/run/flags.hpp"
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
  EXPECT_EQ(o.health_poll_ms, kDefaultHealthPollMs);
}

TEST(Options, HealthPollTakesMillisecondsOrOff) {
  argv_holder a({"gpu_bench", "--health_poll=off"});
  EXPECT_EQ(parse_options(a.argc, a.ptrs.data()).health_poll_ms, 0);
  for (const char* bad :
       {"--health_poll=0", "--health_poll=10001", "--health_poll=x", "--health_poll=", "--health_poll"}) {
    argv_holder b({"gpu_bench", bad});
    EXPECT_THROW(parse_options(b.argc, b.ptrs.data()), usage_error) << bad;
  }
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

namespace {
// A value each flag gpu_bench parses takes, and what parsing it sets: every entry of the table must be here,
// so a flag added without a test of its parse fails EveryFlagOfTheTableParses.
struct taken {
  std::string arg;
  bool (*holds)(const options&);
};
const std::map<std::string, taken>& parses() {
  static const std::map<std::string, taken> m = {
      {"--device", {"--device=2", [](const options& o) { return o.device == 2 && !o.all_devices; }}},
      {"--sizes", {"--sizes=4,1M", [](const options& o) { return o.sizes.size() == 2 && o.sizes_spec == "4,1M"; }}},
      {"--gate_timeout_ms", {"--gate_timeout_ms=250", [](const options& o) { return o.gate_timeout_s == 0.25; }}},
      {"--gate", {"--gate=off", [](const options& o) { return !o.gate; }}},
      {"--full", {"--full", [](const options& o) { return o.full; }}},
      {"--on-throttle", {"--on-throttle=skip", [](const options& o) { return o.on_throttle == "skip"; }}},
      {"--timeline", {"--timeline=t.json", [](const options& o) { return o.timeline_path == "t.json"; }}},
      {"--preset", {"--preset=nightly", [](const options& o) { return o.preset == "nightly"; }}},
      {"--rounds", {"--rounds=7", [](const options& o) { return o.rounds == 7; }}},
      {"--link_rounds", {"--link_rounds=9", [](const options& o) { return o.link_rounds == 9; }}},
      {"--host_rounds", {"--host_rounds=5", [](const options& o) { return o.host_rounds == 5; }}},
      {"--placements", {"--placements=1", [](const options& o) { return o.placements == 1; }}},
      {"--link_max_rounds", {"--link_max_rounds=12", [](const options& o) { return o.link_max_rounds == 12; }}},
      {"--target_detectable",
       {"--target_detectable=2.5", [](const options& o) { return o.target_detectable_pct == 2.5; }}},
      {"--noise", {"--noise=1.5", [](const options& o) { return o.noise_pct == 1.5; }}},
      {"--max_time_per_case", {"--max_time_per_case=2", [](const options& o) { return o.max_time_per_case_s == 2; }}},
      {"--samples", {"--samples=on", [](const options& o) { return o.record_samples; }}},
      {"--verify", {"--verify=each", [](const options& o) { return o.verify_each; }}},
      {"--progress", {"--progress=off", [](const options& o) { return o.progress == "off"; }}},
      {"--cpu", {"--cpu=auto", [](const options& o) { return o.cpu == kCpuAuto; }}},
      {"--health_poll", {"--health_poll=25", [](const options& o) { return o.health_poll_ms == 25; }}},
      {"--families", {"--families", [](const options& o) { return o.list_families; }}},
      {"--help", {"--help", [](const options& o) { return o.help; }}},
      {"-h", {"-h", [](const options& o) { return o.help; }}},
      {"--round", {"--round=2/4", [](const options& o) { return o.round == 2 && o.rounds == 4; }}},
      {"--round_walls", {"--round_walls=/tmp/w.tsv", [](const options& o) { return o.round_walls == "/tmp/w.tsv"; }}},
      {"--flags_markdown", {"--flags_markdown", [](const options& o) { return o.flags_markdown; }}},
      {"--list_gpus", {"--list_gpus=4", [](const options& o) { return o.list_gpus == 4; }}},
      {"--benchmark_min_time", {"--benchmark_min_time=50x", [](const options& o) { return o.min_samples == 50; }}},
  };
  return m;
}
}  // namespace

TEST(Flags, EveryFlagOfTheTableParses) {
  for (const flag& f : flags()) {
    if (f.take == nullptr) continue;  // --device=all's line, or Google Benchmark's own flag
    const auto it = parses().find(f.name);
    ASSERT_NE(it, parses().end()) << f.name << " has no test of its parse";
    argv_holder a({"gpu_bench", it->second.arg, "--benchmark_list_tests"});
    const options o = parse_options(a.argc, a.ptrs.data());
    EXPECT_TRUE(it->second.holds(o)) << it->second.arg;
    EXPECT_EQ(a.argc, 2) << it->second.arg << " was left for Google Benchmark";
  }
  for (const auto& [name, t] : parses()) {
    bool in_table = false;
    for (const flag& f : flags()) in_table = in_table || (f.name == name && f.take != nullptr);
    EXPECT_TRUE(in_table) << name << " is tested but not in the table";
  }
}

TEST(Flags, GoogleBenchmarksOwnFlagsAreLeftForIt) {
  for (const flag& f : flags()) {
    if (f.take != nullptr) continue;
    const std::string arg = f.takes_value ? f.name + "=x" : f.name;
    argv_holder a({"gpu_bench", arg});
    if (f.name == "--device") continue;  // --device=all's own line: --device's entry parses it
    (void)parse_options(a.argc, a.ptrs.data());
    EXPECT_EQ(a.argc, 2) << arg;
  }
}

// A flag's parse, its --help lines and its README row are one entry: the entry's range and default are the
// ones --help and the README print.
TEST(Flags, ParseHelpAndSummaryComeFromOneEntry) {
  const flag* rounds = nullptr;
  for (const flag& f : flags())
    if (f.name == "--rounds") rounds = &f;
  ASSERT_NE(rounds, nullptr);
  const std::string help = flags_help(flag_section::own);
  const std::string indent(24, ' ');
  std::string lines = rounds->help;
  for (std::size_t at = lines.find('\n'); at != std::string::npos; at = lines.find('\n', at + 1))
    lines.insert(at + 1, indent), at += indent.size();
  EXPECT_NE(help.find("  --rounds=N            " + lines + "\n"), std::string::npos);
  EXPECT_NE(rounds->help.find("(default\n" + std::to_string(kDefaultRounds) + ", 1 to 20)"), std::string::npos);
  EXPECT_NE(flags_markdown().find("| `--rounds=N` | " + rounds->summary + " |\n"), std::string::npos);
  EXPECT_NE(rounds->summary.find("(default " + std::to_string(kDefaultRounds) + ")"), std::string::npos);
  options o;
  EXPECT_NO_THROW(rounds->take(o, "20"));
  EXPECT_EQ(o.rounds, 20);
  EXPECT_THROW(rounds->take(o, "21"), usage_error);
  argv_holder bare({"gpu_bench", "--rounds"});
  try {
    (void)parse_options(bare.argc, bare.ptrs.data());
    ADD_FAILURE() << "a bare --rounds was accepted";
  } catch (const usage_error& e) {
    EXPECT_EQ(e.what(), rounds->without_value);
  }
}

TEST(Flags, HelpListsEveryShownFlagOnceInItsSectionAndHidesTheInternalOnes) {
  const std::string own = flags_help(flag_section::own);
  const std::string google_benchmark = flags_help(flag_section::google_benchmark);
  for (const flag& f : flags()) {
    const std::string& section = f.section == flag_section::own ? own : google_benchmark;
    if (f.spelling.empty()) {
      const std::string shown = f.name + (f.takes_value ? "=" : " ");
      EXPECT_EQ(own.find("  " + shown), std::string::npos) << f.name;
      EXPECT_EQ(flags_markdown().find("`" + shown), std::string::npos) << f.name;
      continue;
    }
    const auto at = section.find("\n  " + f.spelling + " ");
    EXPECT_TRUE(section.rfind("  " + f.spelling + " ", 0) == 0 || at != std::string::npos) << f.spelling;
  }
  // The two layouts --help has always had: a column at 24 and one at 32, and a wider spelling then a gap.
  EXPECT_NE(own.find("\n  --max_time_per_case=S stop sampling"), std::string::npos);
  EXPECT_NE(own.find("\n  --target_detectable=PCT  the detectable_pct"), std::string::npos);
  EXPECT_NE(google_benchmark.find("\n  --benchmark_out=FILE --benchmark_out_format=json   write"), std::string::npos);
  EXPECT_NE(google_benchmark.find("\n                                of one link class"), std::string::npos);
}

TEST(Flags, MarkdownRowsHaveTwoCellsEach) {
  // A '|' inside a cell would split it; the table escapes every one, so each row has three bars of its own.
  const std::string md = flags_markdown();
  EXPECT_EQ(md.rfind("| flag | meaning |\n| --- | --- |\n", 0), 0u);
  std::size_t rows = 0, start = 0;
  for (std::size_t end = md.find('\n'); end != std::string::npos; start = end + 1, end = md.find('\n', start)) {
    int bars = 0;
    for (std::size_t i = start; i < end; ++i) bars += md[i] == '|' && (i == 0 || md[i - 1] != '\\');
    EXPECT_EQ(bars, 3) << md.substr(start, end - start);
    ++rows;
  }
  std::size_t summaries = 0;
  for (const flag& f : flags()) summaries += !f.summary.empty();
  EXPECT_EQ(rows, summaries + 2);
}
