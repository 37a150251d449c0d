#include "harness/run/options.hpp"

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "harness/run/sizes.hpp"

namespace gpu_bench {
namespace {

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

bool take_value(std::string_view arg, std::string_view flag, std::string& value) {
  if (arg.substr(0, flag.size()) != flag) return false;
  const std::string_view rest = arg.substr(flag.size());
  if (rest.empty() || rest.front() != '=') return false;
  value = std::string(rest.substr(1));
  return true;
}

bool flag_is_true(std::string_view arg, std::string_view flag) {
  if (arg == flag) return true;
  std::string v;
  if (!take_value(arg, flag, v)) return false;
  return v == "true" || v == "1" || v == "yes";
}

double parse_seconds(const std::string& text, const char* flag, double lo, double hi) {
  std::string t = text;
  if (!t.empty() && t.back() == 's') t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end == nullptr || *end != '\0' || !(v >= lo) || !(v <= hi))
    throw usage_error(std::string(flag) + " takes a number from " + format_number(lo) + " to " + format_number(hi) +
                      ", not '" + text + "'");
  return v;
}

long parse_int(const std::string& text, const char* flag, long lo, long hi) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end == nullptr || *end != '\0' || v < lo || v > hi)
    throw usage_error(std::string(flag) + " takes a whole number from " + std::to_string(lo) + " to " +
                      std::to_string(hi) + ", not '" + text + "'");
  return v;
}

options g_options;

}  // namespace

options parse_options(int& argc, char** argv) {
  options o;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    std::string value;
    if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (take_value(arg, "--device", value)) {
      o.all_devices = value == "all";
      if (o.all_devices) {
        o.device = 0;
      } else {
        try {
          o.device = static_cast<int>(parse_int(value, "--device", 0, 1023));
        } catch (const usage_error&) {
          throw usage_error("--device takes a GPU number from 0 to 1023 or all, not '" + value + "'");
        }
      }
    } else if (arg == "--device") {
      throw usage_error("--device takes a value: --device=N or --device=all");
    } else if (take_value(arg, "--sizes", value)) {
      try {
        o.sizes = parse_size_spec(value);
      } catch (const std::invalid_argument& e) {
        throw usage_error(std::string("--sizes: ") + e.what());
      }
      o.sizes_spec = value;
    } else if (take_value(arg, "--on-throttle", value)) {
      if (value != "warn" && value != "skip" && value != "fail")
        throw usage_error("--on-throttle takes warn, skip or fail, not '" + value + "'");
      o.on_throttle = value;
    } else if (take_value(arg, "--cpu", value)) {
      if (value == "off")
        o.cpu = kCpuOff;
      else if (value == "auto")
        o.cpu = kCpuAuto;
      else
        try {
          o.cpu = static_cast<int>(parse_int(value, "--cpu", 0, 65535));
        } catch (const usage_error&) {
          throw usage_error("--cpu takes a CPU number, auto or off, not '" + value + "'");
        }
    } else if (arg == "--cpu") {
      throw usage_error("--cpu takes a value: --cpu=N, --cpu=auto or --cpu=off");
    } else if (arg == "--families") {
      o.list_families = true;
    } else if (arg == "--full") {
      o.full = true;
    } else if (take_value(arg, "--timeline", value)) {
      if (value.empty()) throw usage_error("--timeline takes a file name: --timeline=FILE");
      o.timeline_path = value;
    } else if (take_value(arg, "--gate", value)) {
      if (value != "on" && value != "off") throw usage_error("--gate takes on or off, not '" + value + "'");
      o.gate = value == "on";
    } else if (arg == "--gate") {
      throw usage_error("--gate takes a value: --gate=on or --gate=off");
    } else if (take_value(arg, "--gate_timeout_ms", value)) {
      o.gate_timeout_s = static_cast<double>(parse_int(value, "--gate_timeout_ms", 10, 600000)) / 1000.0;
    } else if (take_value(arg, "--noise", value)) {
      o.noise_pct = parse_seconds(value, "--noise", 0.01, 100);
    } else if (take_value(arg, "--max_time_per_case", value)) {
      o.max_time_per_case_s = parse_seconds(value, "--max_time_per_case", 0.001, 3600);
    } else if (take_value(arg, "--benchmark_min_time", value)) {
      // The sampling loop is gpu_bench's own, so it honours Google Benchmark's flag: seconds of timed samples
      // at least (a plain number, or Google Benchmark 1.8's "0.5s"), or a count of samples ("100x").
      if (!value.empty() && value.back() == 'x')
        o.min_samples =
            static_cast<int>(parse_int(value.substr(0, value.size() - 1), "--benchmark_min_time", 1, 100000000));
      else
        o.min_time_s = parse_seconds(value, "--benchmark_min_time", 0, 3600);
    } else if (take_value(arg, "--rounds", value)) {
      o.rounds = static_cast<int>(parse_int(value, "--rounds", 1, 20));
    } else if (take_value(arg, "--link_rounds", value)) {
      o.link_rounds = static_cast<int>(parse_int(value, "--link_rounds", 1, 20));
    } else if (take_value(arg, "--link_max_rounds", value)) {
      o.link_max_rounds = static_cast<int>(parse_int(value, "--link_max_rounds", 1, 20));
    } else if (take_value(arg, "--target_detectable", value)) {
      o.target_detectable_pct = parse_seconds(value, "--target_detectable", 1, 100);
    } else if (take_value(arg, "--round", value)) {
      const auto slash = value.find('/');
      if (slash == std::string::npos) throw usage_error("--round takes K/N (a round run by gpu_bench itself)");
      o.round = static_cast<int>(parse_int(value.substr(0, slash), "--round", 1, 19));
      o.rounds = static_cast<int>(parse_int(value.substr(slash + 1), "--round", 2, 20));
      if (o.round >= o.rounds) throw usage_error("--round takes K/N with K below N");
    } else if (take_value(arg, "--list_gpus", value)) {
      o.list_gpus = static_cast<int>(parse_int(value, "--list_gpus", 1, 64));
    } else if (take_value(arg, "--samples", value)) {
      if (value != "on" && value != "off") throw usage_error("--samples takes on or off, not '" + value + "'");
      o.record_samples = value == "on";
    } else if (take_value(arg, "--verify", value)) {
      if (value != "end" && value != "each") throw usage_error("--verify takes end or each, not '" + value + "'");
      o.verify_each = value == "each";
    } else if (take_value(arg, "--progress", value)) {
      if (value != "on" && value != "off" && value != "auto")
        throw usage_error("--progress takes on, off or auto, not '" + value + "'");
      o.progress = value;
    } else if (take_value(arg, "--preset", value)) {
      if (value != "default" && value != "nightly" && value != "gate")
        throw usage_error("--preset takes default, nightly or gate, not '" + value + "'");
      o.preset = value;
    } else if (arg == "--noise" || arg == "--max_time_per_case" || arg == "--samples" || arg == "--rounds" ||
               arg == "--link_rounds" || arg == "--link_max_rounds" || arg == "--target_detectable" ||
               arg == "--verify" || arg == "--progress" || arg == "--preset" || arg == "--list_gpus") {
      throw usage_error(std::string(arg) + " takes a value: " + std::string(arg) + "=...");
    } else {
      if (flag_is_true(arg, "--benchmark_list_tests")) o.list_only = true;
      argv[out++] = argv[i];
      continue;
    }
  }
  argc = out;
  argv[argc] = nullptr;
  if (o.list_gpus > 0 && !o.list_only)
    throw usage_error("--list_gpus=N lists the cases of a machine of N GPUs; give it with --benchmark_list_tests");
  if (o.sizes.empty()) o.sizes = parse_size_spec(o.sizes_spec);
  return o;
}

bool benchmark_has_iteration_counts() {
  const std::string v = GPU_BENCH_BENCHMARK_VERSION;  // "1.8.3", or "unavailable"
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) != 2) return false;
  return major > 1 || (major == 1 && minor >= 8);
}

std::string benchmark_min_time_arg(bool iteration_counts) {
  // 1.7 runs one iteration first and stops once its (manual) time reaches the minimum; a case's median
  // sample is never below a nanosecond.
  return iteration_counts ? "--benchmark_min_time=1x" : "--benchmark_min_time=0.000000001";
}

const options& current_options() {
  return g_options;
}
void set_current_options(options o) {
  g_options = std::move(o);
}

}  // namespace gpu_bench

namespace gpu_bench {

std::vector<std::uint64_t> sizes_or(std::vector<std::uint64_t> family_default) {
  const options& o = current_options();
  return o.sizes_spec == "pow4" ? std::move(family_default) : o.sizes;
}

}  // namespace gpu_bench
