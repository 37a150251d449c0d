#include "harness/run/progress.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "harness/run/case_name.hpp"

namespace gpu_bench {

bool progress_shown(const std::string& when) {
  return when != "off";
}

namespace {
// An earlier round's results reach the last round through its --benchmark_out file alone.
class silent_reporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};
}  // namespace

std::unique_ptr<benchmark::BenchmarkReporter> round_display_reporter(int round) {
  if (round > 0) return std::make_unique<silent_reporter>();
  return nullptr;
}

std::string format_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%lds", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  return buf;
}

double time_left_s(const std::vector<double>& left, double spent_s, double extra_share, double last_s) {
  double earlier = 0;
  for (double s : left) earlier += s;
  return earlier + extra_share * (spent_s + earlier) + last_s;
}

std::string round_done_line(int round, int rounds, double took_s, double left_s) {
  return "gpu_bench: round " + std::to_string(round) + " of " + std::to_string(rounds) + " took " +
         format_duration(took_s) + "; about " + format_duration(left_s) + " left";
}

progress::progress(std::size_t total, double budget_s, std::FILE* out, double every_s, int rounds, bool announce)
    : total_(total),
      rounds_(std::max(1, rounds)),
      budget_s_(budget_s),
      every_s_(every_s),
      out_(out),
      start_(std::chrono::steady_clock::now()) {
  if (out_ && announce) std::fprintf(out_, "%s\n", opening().c_str());
}

void progress::expect_walls(const std::map<std::string, double>& walls_s, int repetitions) {
  expected_s_.clear();
  expected_total_s_ = 0;
  const double reps = std::max(1, repetitions);
  for (const auto& [name, wall] : walls_s) {
    if (!(wall > 0)) continue;
    expected_s_[without_manual_time(name)] = wall / reps;
    expected_total_s_ += wall;
  }
  expected_mean_s_ = expected_s_.empty() ? 0 : expected_total_s_ / reps / static_cast<double>(expected_s_.size());
}

void progress::start_round(int round) {
  round_ = round;
  done_ = 0;
  expected_done_s_ = 0;
  last_print_s_ = 0;
  start_ = std::chrono::steady_clock::now();
}

std::string progress::opening() const {
  // Set-up, warm-up and checks come on top of each run's sampling budget; a tenth of a second covers them
  // for most cases, and most cases reach their noise target well before the budget.
  const double most = static_cast<double>(total_) * (budget_s_ + 0.1 * rounds_);
  char budget[32];
  std::snprintf(budget, sizeof budget, "%g", budget_s_);
  const std::string in_rounds =
      rounds_ == 1 ? "" : ", each in " + std::to_string(rounds_) + " rounds of their own processes";
  return "gpu_bench: " + std::to_string(total_) + " case run" + (total_ == 1 ? "" : "s") + " selected" + in_rounds +
         "; about " + format_duration(most) + " at most (--max_time_per_case=" + budget +
         " s each, longer where a case's minimum of samples or of sampling time a round takes longer)";
}

std::string progress::line(const std::string& family, std::size_t done, double elapsed_s) const {
  const std::string round =
      round_ > 0 ? "round " + std::to_string(round_) + "/" + std::to_string(rounds_) + " " : std::string();
  std::string s = "gpu_bench: [" + round + family + " " + std::to_string(done) + "/" + std::to_string(total_) + ", " +
                  format_duration(elapsed_s);
  if (done > 0 && done < total_) {
    double left_s = elapsed_s / static_cast<double>(done) * static_cast<double>(total_ - done);
    if (expected_done_s_ > 0 && expected_total_s_ > expected_done_s_)
      left_s = (expected_total_s_ - expected_done_s_) * elapsed_s / expected_done_s_;
    s += ", ~" + format_duration(left_s) + " left";
  }
  return s + "]";
}

void progress::say(const std::string& text) {
  if (out_) std::fprintf(out_, "%s\n", text.c_str());
}

void progress::finished(const std::string& name, const std::string& family) {
  ++done_;
  if (!expected_s_.empty()) {
    const auto it = expected_s_.find(without_manual_time(name));
    expected_done_s_ += it != expected_s_.end() ? it->second : expected_mean_s_;
  }
  if (!out_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (done_ < total_ && elapsed - last_print_s_ < every_s_) return;
  last_print_s_ = elapsed;
  std::fprintf(out_, "%s\n", line(family, done_, elapsed).c_str());
  std::fflush(out_);
}

std::string walls_text(const std::map<std::string, double>& walls_s) {
  std::ostringstream out;
  out.precision(9);
  for (const auto& [name, wall] : walls_s) out << wall << '\t' << name << '\n';
  return out.str();
}

std::map<std::string, double> walls_from_text(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    char* end = nullptr;
    const double wall = std::strtod(line.c_str(), &end);
    if (end == line.c_str() + tab && std::isfinite(wall)) out[line.substr(tab + 1)] = wall;
  }
  return out;
}

namespace {
progress* g_progress = nullptr;
}

void set_run_progress(progress* p) {
  g_progress = p;
}
progress* run_progress() {
  return g_progress;
}

}  // namespace gpu_bench
