#include "harness/run/timeline.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace gpu_bench {

timeline& timeline::instance() {
  static timeline t;
  return t;
}

bool timeline::has_case(const std::string& name) const {
  for (const auto& c : cases_)
    if (c == name) return true;
  return false;
}

int timeline::begin_case(const std::string& name) {
  const int pid = static_cast<int>(cases_.size()) + 1;
  cases_.push_back(name);
  events_.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", name}}}});
  return pid;
}

void timeline::span(int pid, int tid, const std::string& name, const std::string& cat, double start_us, double dur_us) {
  events_.push_back({{"ph", "X"},
                     {"name", name},
                     {"cat", cat},
                     {"pid", pid},
                     {"tid", tid},
                     {"ts", start_us},
                     {"dur", dur_us},
                     {"args", {{"stream", tid}}}});
}

nlohmann::json timeline::to_json() const {
  return {{"traceEvents", events_}, {"displayTimeUnit", "ns"}, {"otherData", {{"source", "gpu_bench --timeline"}}}};
}

std::string timeline::write() const {
  if (!enabled()) return {};
  const std::string tmp = path_ + ".partial";
  {
    std::ofstream out(tmp);
    if (!out) return "cannot write the timeline to " + path_ + ": " + std::strerror(errno);
    out << to_json().dump(1) << '\n';
    if (!out) return "cannot write the timeline to " + path_ + ": " + std::strerror(errno);
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    std::remove(tmp.c_str());
    return "cannot write the timeline to " + path_ + ": " + std::strerror(errno);
  }
  return {};
}

}  // namespace gpu_bench
