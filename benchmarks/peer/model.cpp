#include "benchmarks/peer/model.hpp"

#include <algorithm>

namespace gpu_bench {

std::vector<peer_case> peer_grid(int gpus, const std::vector<std::uint64_t>& sizes) {
  std::vector<peer_case> v;
  for (int src = 0; src < gpus; ++src)
    for (int dst = 0; dst < gpus; ++dst) {
      if (src == dst) continue;
      // Grouped by pair and peer access, so a run switches a pair's access twice, not once per case.
      for (bool access : {true, false})
        for (peer_dir d : {peer_dir::oneway, peer_dir::bidir}) {
          if (d == peer_dir::bidir && src > dst) continue;
          for (std::uint64_t n : sizes) v.push_back({src, dst, access, d, n});
          if (access)
            for (std::uint64_t n : sizes) v.push_back({src, dst, access, d, n, true});
          if (access && d == peer_dir::oneway)
            for (bool sm : {false, true})
              for (std::uint64_t n : sizes) v.push_back({src, dst, access, d, n, sm, true});
        }
    }
  return v;
}

std::vector<peer_case> peer_default_grid(int gpus, const std::vector<std::uint64_t>& sizes,
                                         const std::vector<std::pair<int, int>>& swept) {
  std::vector<peer_case> v;
  if (sizes.empty()) return v;
  const std::uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  for (const peer_case& c : peer_grid(gpus, sizes)) {
    const bool sweep = std::find(swept.begin(), swept.end(), std::make_pair(c.src, c.dst)) != swept.end();
    if (sweep || (c.peer_access && !c.sm && !c.read && c.bytes == largest)) v.push_back(c);
  }
  return v;
}

case_name peer_name(const peer_case& c) {
  case_name n("Peer");
  n.add("src", c.src).add("dst", c.dst).add("peer_access", c.peer_access ? "on" : "off");
  n.add("dir", c.dir);
  if (c.read) n.add("access", "read");
  if (c.sm) n.add("engine", "sm");
  n.add("bytes", c.bytes);
  return n;
}

double peer_bytes_moved(const peer_case& c) {
  const auto n = static_cast<double>(c.bytes);
  return c.dir == peer_dir::bidir ? 2 * n : n;
}

std::vector<peer_case> peer_latency_grid(int gpus) {
  std::vector<peer_case> v;
  for (int src = 0; src < gpus; ++src)
    for (int dst = 0; dst < gpus; ++dst)
      if (src != dst)
        for (bool access : {true, false}) v.push_back({src, dst, access, peer_dir::oneway, kPeerLatencyBytes});
  return v;
}

std::vector<peer_case> peer_latency_default_grid(int gpus, const std::vector<std::pair<int, int>>& swept) {
  std::vector<peer_case> v;
  for (const peer_case& c : peer_latency_grid(gpus))
    if (c.peer_access || std::find(swept.begin(), swept.end(), std::make_pair(c.src, c.dst)) != swept.end())
      v.push_back(c);
  return v;
}

case_name peer_latency_name(const peer_case& c) {
  case_name n("PeerLatency");
  n.add("src", c.src).add("dst", c.dst).add("peer_access", c.peer_access ? "on" : "off").add("bytes", c.bytes);
  return n;
}

std::vector<std::pair<int, int>> pattern_copies(peer_pattern p, int gpus) {
  std::vector<std::pair<int, int>> v;
  if (gpus < 2) return v;
  switch (p) {
    case peer_pattern::one_to_all:
      for (int d = 1; d < gpus; ++d) v.emplace_back(0, d);
      break;
    case peer_pattern::all_to_one:
      for (int s = 1; s < gpus; ++s) v.emplace_back(s, 0);
      break;
    case peer_pattern::all_pairs:
      for (int step = 1; step < gpus; ++step)
        for (int s = 0; s < gpus; ++s) v.emplace_back(s, (s + step) % gpus);
      break;
  }
  return v;
}

int pattern_gpu_of(peer_pattern p, const std::pair<int, int>& copy) {
  return p == peer_pattern::one_to_all ? copy.second : copy.first;
}

case_name peer_pattern_name(peer_pattern p, std::uint64_t bytes, bool sm, bool together) {
  case_name n("PeerPattern");
  n.add("pattern", p);
  if (sm) n.add("engine", "sm");
  if (together) n.add("release", "together");
  n.add("bytes", bytes);
  return n;
}

}  // namespace gpu_bench
