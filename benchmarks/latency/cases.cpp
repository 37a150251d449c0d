#include "benchmarks/latency/cases.hpp"

#include <map>
#include <set>
#include <utility>

namespace gpu_bench {

bool across_link(latency_mem m) {
  return m != latency_mem::device;
}

bool in_host_memory(latency_mem m) {
  return m == latency_mem::pinned || m == latency_mem::registered || m == latency_mem::managed;
}

case_name latency_name(const latency_case& c) {
  case_name name("Latency");
  name.add("mem", c.mem);
  if (c.mem == latency_mem::peer) name.add("peer", c.peer);
  if (c.numa == numa_place::remote) name.add("numa", c.numa);
  name.add("pattern", c.pattern).add("bytes", c.bytes);
  return name;
}

std::vector<int> chased_peers(int device, int gpus, bool every, bool node_wide, const link_class_of& link) {
  std::vector<int> out;
  if (node_wide && !every) {
    // The node's first pair of each class, in the order (from, to).
    std::map<std::string, std::pair<int, int>> first;
    for (int from = 0; from < gpus; ++from)
      for (int to = 0; to < gpus; ++to)
        if (from != to)
          if (const auto c = link(from, to)) first.emplace(*c, std::make_pair(from, to));
    std::set<int> mine;
    for (const auto& [cls, pair] : first)
      if (pair.first == device) mine.insert(pair.second);
    return {mine.begin(), mine.end()};
  }
  std::set<std::string> seen;
  for (int to = 0; to < gpus; ++to) {
    if (to == device) continue;
    const auto c = link(device, to);
    if (c && (every || seen.insert(*c).second)) out.push_back(to);
  }
  return out;
}

std::vector<latency_case> latency_grid(const latency_plan& plan) {
  std::vector<latency_case> out;
  auto add = [&](latency_mem m, numa_place p, int peer) {
    for (chase_pattern pattern : {chase_pattern::stride, chase_pattern::random})
      for (std::uint64_t n : in_host_memory(m) ? plan.host_footprints : plan.device_footprints)
        out.push_back(latency_case{m, p, pattern, n, peer});
  };
  for (latency_mem m : {latency_mem::device, latency_mem::pinned, latency_mem::registered, latency_mem::managed}) {
    add(m, numa_place::local, -1);
    if (plan.numa_remote && (m == latency_mem::pinned || m == latency_mem::registered)) add(m, numa_place::remote, -1);
  }
  for (int peer : plan.peers) add(latency_mem::peer, numa_place::local, peer);
  return out;
}

}  // namespace gpu_bench
