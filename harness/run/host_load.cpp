#include "harness/run/host_load.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>

namespace gpu_bench {
namespace {

cpu_times g_last_start;
rusage g_last_start_usage{};

double seconds_of(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

}  // namespace

cpu_times parse_cpu_times(const std::string& proc_stat) {
  std::istringstream in(proc_stat.substr(0, proc_stat.find('\n')));
  std::string label;
  in >> label;
  if (label != "cpu") return {};
  // user nice system idle iowait irq softirq steal; kernels before 2.6.11 stop before steal.
  std::uint64_t v[8] = {};
  int read = 0;
  while (read < 8 && in >> v[read]) ++read;
  if (read < 4) return {};
  cpu_times t;
  t.busy = v[0] + v[1] + v[2] + v[5] + v[6];
  t.idle = v[3] + v[4];
  t.steal = v[7];
  t.known = true;
  return t;
}

cpu_times read_cpu_times() {
  std::ifstream in("/proc/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  return parse_cpu_times(line);
}

host_load host_load_between(const cpu_times& before, const cpu_times& after, double own_cpu_s, long preemptions,
                            long ticks_per_s) {
  host_load load;
  load.preemptions = preemptions;
  if (!before.known || !after.known || ticks_per_s <= 0 || after.busy < before.busy || after.idle < before.idle ||
      after.steal < before.steal)
    return load;
  const double busy = static_cast<double>(after.busy - before.busy);
  const double steal = static_cast<double>(after.steal - before.steal);
  const double total = busy + static_cast<double>(after.idle - before.idle) + steal;
  if (total <= 0) return load;
  // Ticks are coarse (10 ms): a round's own time can exceed the busy ticks counted for it.
  load.others_pct = std::max(0.0, busy - own_cpu_s * static_cast<double>(ticks_per_s)) / total * 100;
  load.steal_pct = steal / total * 100;
  return load;
}

host_load host_load_of(const cpu_times& before, const cpu_times& after, const rusage& own) {
  return host_load_between(before, after, seconds_of(own.ru_utime) + seconds_of(own.ru_stime), own.ru_nivcsw,
                           sysconf(_SC_CLK_TCK));
}

void mark_last_round_start() {
  g_last_start = read_cpu_times();
  getrusage(RUSAGE_SELF, &g_last_start_usage);
}

host_load last_round_host_load() {
  rusage now{};
  if (!g_last_start.known || getrusage(RUSAGE_SELF, &now) != 0) return {};
  const double own_cpu_s = seconds_of(now.ru_utime) + seconds_of(now.ru_stime) -
                           seconds_of(g_last_start_usage.ru_utime) - seconds_of(g_last_start_usage.ru_stime);
  return host_load_between(g_last_start, read_cpu_times(), own_cpu_s, now.ru_nivcsw - g_last_start_usage.ru_nivcsw,
                           sysconf(_SC_CLK_TCK));
}

std::string round_host_text(const std::vector<std::pair<std::string, host_load>>& rounds) {
  std::string out;
  char part[200];
  const auto pct = [](double v) {
    char s[32];
    if (v < 0) return std::string("-");
    std::snprintf(s, sizeof s, "%.2f", v);
    return std::string(s);
  };
  for (const auto& [label, load] : rounds) {
    std::snprintf(part, sizeof part, "%s%s=%s/%s/%s", out.empty() ? "" : " ", label.c_str(),
                  pct(load.others_pct).c_str(), pct(load.steal_pct).c_str(),
                  load.preemptions < 0 ? "-" : std::to_string(load.preemptions).c_str());
    out += part;
  }
  return out;
}

}  // namespace gpu_bench
