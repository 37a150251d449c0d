#include "harness/run/output_file.hpp"

#include <regex.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "harness/memory/mem_kind.hpp"
#include "harness/run/case_name.hpp"

namespace gpu_bench {
namespace {

constexpr const char* kOutFlag = "--benchmark_out=";

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// What the signal handler needs, in storage it can read without allocating.
char g_temp[4096];
volatile sig_atomic_t g_round_child = 0;

extern "C" void on_interrupt(int sig) {
  if (g_temp[0] != '\0') unlink(g_temp);
  // A round running in a process of its own stops with this one (a terminal's Ctrl-C reaches it anyway;
  // a SIGTERM sent to this process alone would not).
  if (g_round_child > 0) kill(static_cast<pid_t>(g_round_child), sig);
  static const char msg[] = "\ngpu_bench: interrupted; no output file written\n";
  ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
  _exit(128 + sig);
}

}  // namespace

atomic_output::atomic_output(std::vector<std::string>& args) {
  for (auto& a : args) {
    if (a.rfind(kOutFlag, 0) != 0) continue;
    final_ = a.substr(std::strlen(kOutFlag));
    if (final_.empty()) continue;
    temp_ = directory_of(final_) + "/." + final_.substr(final_.find_last_of('/') + 1) + ".partial." +
            std::to_string(getpid());
    a = kOutFlag + temp_;
  }
}

atomic_output::~atomic_output() {
  abandon();
}

std::string cannot_write(const std::string& path, const std::string& flag) {
  const std::string dir = directory_of(path);
  if (access(dir.c_str(), W_OK) != 0)
    return "cannot write " + flag + "=" + path + ": directory '" + dir + "' " +
           (access(dir.c_str(), F_OK) != 0 ? "does not exist" : "is not writable");
  return {};
}

std::string atomic_output::problem() const {
  return active() ? cannot_write(final_, "--benchmark_out") : "";
}

std::string atomic_output::commit() {
  if (!active() || temp_.empty()) return {};
  if (std::rename(temp_.c_str(), final_.c_str()) != 0)
    return "cannot move the results into " + final_ + ": " + std::strerror(errno) + " (they are in " + temp_ + ")";
  temp_.clear();
  return {};
}

void atomic_output::abandon() noexcept {
  if (!temp_.empty()) std::remove(temp_.c_str());
  temp_.clear();
}

namespace {

// Google Benchmark writes a value that is not finite as a bare NaN, Infinity or -Infinity (the cv
// aggregate of a counter whose mean is 0, e.g. numa_node), which JSON and nlohmann_json reject. Such a
// value is carried through the parse as a marked string and written back as it was, so the file's
// readers (Python's json reads these tokens) see no change. One linear pass each way: the file may hold
// every sample of a run, megabytes of them.
constexpr std::string_view kMark = "gpu_bench-non-finite:";
constexpr std::string_view kNonFinite[] = {"-Infinity", "Infinity", "-NaN", "NaN"};

std::string mark_non_finite(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '-' || c == 'N' || c == 'I') {
      const std::string_view rest(text.data() + i, text.size() - i);
      const auto* tok = std::find_if(std::begin(kNonFinite), std::end(kNonFinite),
                                     [&](std::string_view t) { return rest.substr(0, t.size()) == t; });
      if (tok != std::end(kNonFinite)) {
        ((out += '"') += kMark) += *tok;
        out += '"';
        i += tok->size() - 1;
        continue;
      }
    }
    out += c;
  }
  return out;
}

std::string unmark_non_finite(const std::string& text) {
  const std::string quoted_mark = '"' + std::string(kMark);
  std::string out;
  out.reserve(text.size());
  std::size_t from = 0;
  for (std::size_t at; (at = text.find(quoted_mark, from)) != std::string::npos;) {
    const std::size_t value = at + quoted_mark.size(), close = text.find('"', value);
    out.append(text, from, at - from).append(text, value, close - value);
    from = close + 1;
  }
  return out.append(text, from, std::string::npos);
}

}  // namespace

std::string annotate_results(const std::string& path, const std::vector<std::pair<std::string, std::string>>& context,
                             const std::vector<run_samples>& samples) {
  nlohmann::ordered_json doc;
  {
    std::ifstream in(path);
    if (!in) return "cannot read the results in " + path + " to add the run's totals";
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      doc = nlohmann::ordered_json::parse(mark_non_finite(text));
    } catch (const nlohmann::json::exception& e) {
      return "cannot read the results in " + path + ": " + e.what();
    }
  }
  for (const auto& [k, v] : context) doc["context"][k] = v;
  if (!samples.empty() && doc.contains("benchmarks")) {
    std::map<std::pair<std::string, int>, const run_samples*> by_run;
    for (const auto& r : samples) by_run[{r.name, r.repetition}] = &r;
    for (auto& b : doc["benchmarks"]) {
      if (b.value("run_type", "iteration") != "iteration" || !b.contains("run_name")) continue;
      const std::string name = without_manual_time(b["run_name"].get<std::string>());
      const auto it = by_run.find({name, b.value("repetition_index", 0)});
      if (it == by_run.end()) continue;
      if (it->second->times_s && !it->second->times_s->empty()) b["sample_times_s"] = *it->second->times_s;
      if (it->second->round_times_s && !it->second->round_times_s->empty())
        b["round_times_s"] = *it->second->round_times_s;
      if (it->second->earlier_times_s && !it->second->earlier_times_s->empty())
        b["earlier_sample_times_s"] = *it->second->earlier_times_s;
      if (it->second->placements && !it->second->placements->empty()) b["sample_placements"] = *it->second->placements;
      if (it->second->round_prior_dof > 0) {
        b["round_prior_sd"] = it->second->round_prior_sd;
        b["round_prior_dof"] = it->second->round_prior_dof;
      }
      if (it->second->wall_s >= 0) {
        b["wall_s"] = it->second->wall_s;
        b["sampling_wall_s"] = it->second->sampling_wall_s;
        b["calibration_wall_s"] = it->second->calibration_wall_s;
      }
    }
  }
  std::ofstream out(path, std::ios::trunc);
  out << unmark_non_finite(doc.dump(2)) << '\n';
  if (!out) return "cannot write the run's totals into " + path + ": " + std::strerror(errno);
  return {};
}

std::string read_round_results(const std::string& path, std::map<std::pair<std::string, int>, double>& medians_s,
                               double& timed_s, std::map<std::string, double>* wall_s,
                               std::map<std::pair<std::string, int>, std::vector<double>>* samples_s) {
  std::ifstream in(path);
  if (!in) return "cannot read " + path;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(mark_non_finite(text));
  } catch (const nlohmann::json::exception& e) {
    return "cannot read " + path + ": " + e.what();
  }
  static const std::map<std::string, double> kUnitSeconds = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
  for (const auto& b : doc.value("benchmarks", nlohmann::json::array())) {
    if (b.value("run_type", "iteration") != "iteration" || b.value("error_occurred", false) ||
        !b.contains("run_name") || !b.contains("real_time") || !b["real_time"].is_number())
      continue;
    const auto unit = kUnitSeconds.find(b.value("time_unit", "ns"));
    if (unit == kUnitSeconds.end()) continue;
    const std::string run_name = b["run_name"].get<std::string>();
    if (wall_s && b.contains("wall_s") && b["wall_s"].is_number()) (*wall_s)[run_name] += b["wall_s"].get<double>();
    const std::string name = without_manual_time(run_name);
    const double seconds = b["real_time"].get<double>() * unit->second;
    if (std::isfinite(seconds) && seconds > 0) medians_s[{name, b.value("repetition_index", 0)}] = seconds;
    if (samples_s && b.contains("sample_times_s") && b["sample_times_s"].is_array()) {
      std::vector<double>& kept = (*samples_s)[{name, b.value("repetition_index", 0)}];
      for (const auto& t : b["sample_times_s"])
        if (t.is_number() && std::isfinite(t.get<double>())) kept.push_back(t.get<double>());
    }
  }
  const auto& ctx = doc.value("context", nlohmann::json::object());
  timed_s = 0;
  if (ctx.contains("gpu_bench.timed_s") && ctx["gpu_bench.timed_s"].is_string())
    timed_s = std::strtod(ctx["gpu_bench.timed_s"].get<std::string>().c_str(), nullptr);
  return {};
}

line_rewriter::line_rewriter(std::ostream& stream, std::string from, std::string to)
    : stream_(stream), original_(stream.rdbuf()), from_(std::move(from)), to_(std::move(to)) {
  stream_.rdbuf(this);
}

line_rewriter::~line_rewriter() {
  if (!line_.empty()) emit_line();
  stream_.rdbuf(original_);
}

void line_rewriter::emit_line() {
  const bool whole = !line_.empty() && line_.back() == '\n';
  const std::string body = whole ? line_.substr(0, line_.size() - 1) : line_;
  const std::string& text = body == from_ ? to_ : body;
  original_->sputn(text.data(), static_cast<std::streamsize>(text.size()));
  if (whole) original_->sputc('\n');
  line_.clear();
}

int line_rewriter::overflow(int c) {
  if (c == traits_type::eof()) return traits_type::not_eof(c);
  line_ += static_cast<char>(c);
  if (c == '\n') emit_line();
  return c;
}

int line_rewriter::sync() {
  // A partial line stays until its end comes: the line to replace is matched whole.
  return original_->pubsync();
}

void forward_interrupts_to(int pid) {
  g_round_child = pid;
}

void install_interrupt_handler(const std::string& temp_path) {
  std::snprintf(g_temp, sizeof g_temp, "%s", temp_path.c_str());
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

namespace {

// Calls `selected` for each of `names` the filter selects; false when the expression does not compile.
bool for_each_match(const std::string& filter, const std::vector<std::string>& names,
                    const std::function<void(const std::string&)>& selected) {
  if (filter.empty() || filter == "all") {
    for (const auto& name : names) selected(name);
    return true;
  }
  const bool negate = filter.front() == '-';
  const std::string expr = negate ? filter.substr(1) : filter;
  regex_t re;
  if (regcomp(&re, expr.c_str(), REG_EXTENDED | REG_NOSUB) != 0) return false;
  for (const auto& name : names)
    if ((regexec(&re, name.c_str(), 0, nullptr, 0) == 0) != negate) selected(name);
  regfree(&re);
  return true;
}

}  // namespace

long count_filter_matches(const std::string& filter, const std::vector<std::string>& names) {
  long n = 0;
  return for_each_match(filter, names, [&n](const std::string&) { ++n; }) ? n : -1;
}

std::vector<std::string> filter_matches(const std::string& filter, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for_each_match(filter, names, [&out](const std::string& name) { out.push_back(name); });
  return out;
}

std::vector<std::string> unknown_mem_kinds_in_filter(const std::string& filter) {
  std::vector<std::string> unknown;
  for (std::size_t pos = filter.find("mem:"); pos != std::string::npos; pos = filter.find("mem:", pos + 4)) {
    std::size_t end = pos + 4;
    while (end < filter.size() && ((filter[end] >= 'a' && filter[end] <= 'z') || filter[end] == '_')) ++end;
    const std::string kind = filter.substr(pos + 4, end - pos - 4);
    // Only a whole token can be judged: `mem:pin.*` is a pattern, not a name.
    const bool whole =
        end == filter.size() || filter[end] == '/' || filter[end] == '$' || filter[end] == ')' || filter[end] == '|';
    if (!kind.empty() && whole && !parse_name<mem_kind>(kind)) unknown.push_back(kind);
  }
  return unknown;
}

}  // namespace gpu_bench
