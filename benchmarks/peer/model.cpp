#include "benchmarks/peer/model.hpp"

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
        }
    }
  return v;
}

case_name peer_name(const peer_case& c) {
  case_name n("Peer");
  n.add("src", c.src).add("dst", c.dst).add("peer_access", c.peer_access ? "on" : "off");
  n.add("dir", c.dir).add("bytes", c.bytes);
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

case_name peer_latency_name(const peer_case& c) {
  case_name n("PeerLatency");
  n.add("src", c.src).add("dst", c.dst).add("peer_access", c.peer_access ? "on" : "off").add("bytes", c.bytes);
  return n;
}

}  // namespace gpu_bench
