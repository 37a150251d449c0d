#include "harness/measure/visits.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace gpu_bench {
namespace {
case_visit g_visit;
std::map<std::string, visits_so_far> g_visits;
}  // namespace

void set_case_visit(case_visit visit) {
  g_visit = visit;
}

case_visit current_case_visit() {
  return g_visit;
}

visits_so_far& earlier_visits(const std::string& name) {
  return g_visits[name];
}

visits_so_far take_earlier_visits(const std::string& name) {
  const auto it = g_visits.find(name);
  if (it == g_visits.end()) return {};
  visits_so_far taken = std::move(it->second);
  g_visits.erase(it);
  return taken;
}

void fail_visit(const std::string& name, const std::string& why) {
  std::string& failure = g_visits[name].failure;
  if (failure.empty()) failure = why;
}

std::vector<sample> as_this_visits(std::vector<sample> samples, int placements) {
  const int offset = (g_visit.index - 1) * std::max(1, placements);
  for (sample& s : samples) s.placement += offset;
  return samples;
}

}  // namespace gpu_bench
