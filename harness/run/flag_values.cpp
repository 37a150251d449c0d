#include "harness/run/flag_values.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "harness/run/sizes.hpp"

namespace gpu_bench::flag_values {

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

std::string needs_value(const std::string& name) {
  return name + " takes a value: " + name + "=...";
}

int number_or_word(const std::string& value, const char* flag, long lo, long hi,
                   std::initializer_list<std::pair<const char*, int>> words, const char* takes) {
  for (const auto& [word, number] : words)
    if (value == word) return number;
  try {
    return static_cast<int>(parse_int(value, flag, lo, hi));
  } catch (const usage_error&) {
    throw usage_error(std::string(flag) + " takes " + takes + ", not '" + value + "'");
  }
}

void take_device(options& o, const std::string& value) {
  o.device = number_or_word(value, "--device", 0, 1023, {{"all", 0}}, "a GPU number from 0 to 1023 or all");
  o.all_devices = value == "all";
}

void take_sizes(options& o, const std::string& value) {
  try {
    o.sizes = parse_size_spec(value);
  } catch (const std::invalid_argument& e) {
    throw usage_error(std::string("--sizes: ") + e.what());
  }
  o.sizes_spec = value;
}

void take_cpu(options& o, const std::string& value) {
  o.cpu = number_or_word(value, "--cpu", 0, 65535, {{"off", kCpuOff}, {"auto", kCpuAuto}, {"fast", kCpuFast}},
                         "a CPU number, fast, auto or off");
}

void take_health_poll(options& o, const std::string& value) {
  o.health_poll_ms =
      number_or_word(value, "--health_poll", 1, 10000, {{"off", 0}}, "milliseconds from 1 to 10000, or off");
}

void take_round(options& o, const std::string& value) {
  const auto slash = value.find('/');
  if (slash == std::string::npos) throw usage_error("--round takes K/N (a round run by gpu_bench itself)");
  o.round = static_cast<int>(parse_int(value.substr(0, slash), "--round", 1, 19));
  o.rounds = static_cast<int>(parse_int(value.substr(slash + 1), "--round", 2, 20));
  if (o.round >= o.rounds) throw usage_error("--round takes K/N with K below N");
}

void take_min_time(options& o, const std::string& value) {
  // The sampling loop is gpu_bench's own, so it honours Google Benchmark's flag: seconds of timed samples
  // at least (a plain number, or Google Benchmark 1.8's "0.5s"), or a count of samples ("100x").
  if (!value.empty() && value.back() == 'x')
    o.min_samples =
        static_cast<int>(parse_int(value.substr(0, value.size() - 1), "--benchmark_min_time", 1, 100000000));
  else
    o.min_time_s = parse_seconds(value, "--benchmark_min_time", 0, 3600);
}

void check_word(const std::string& value, const char* flag, std::initializer_list<const char*> words,
                const char* listed) {
  for (const char* w : words)
    if (value == w) return;
  throw usage_error(std::string(flag) + " takes " + listed + ", not '" + value + "'");
}

}  // namespace gpu_bench::flag_values
