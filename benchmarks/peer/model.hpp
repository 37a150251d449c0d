#pragma once
// The Peer and PeerLatency families' cases and names: a copy between two GPUs' memories, and one 4-byte
// peer copy. Pure functions, tested without a GPU.
#include <cstdint>
#include <string_view>
#include <vector>

#include "fixtures/run/case_name.hpp"

namespace gpu_bench {

enum class peer_dir { oneway, bidir };
template <>
inline constexpr enum_entries<peer_dir, 2> enum_names<peer_dir> = {{{peer_dir::oneway, "oneway"}, {peer_dir::bidir, "bidir"}}};

struct peer_case {
  int src, dst;      // GPU ordinals; bidir also copies dst -> src at the same time
  bool peer_access;  // on: cudaDeviceEnablePeerAccess both ways; off: staged through host memory
  peer_dir dir;
  std::uint64_t bytes;
};

// Every ordered pair of `gpus` GPUs, peer access on then off, oneway then bidir, then sizes. bidir only
// for src < dst: the pair's two directions at once are the same measurement whichever GPU is named first.
// Empty for fewer than two GPUs.
std::vector<peer_case> peer_grid(int gpus, const std::vector<std::uint64_t>& sizes);
// Peer/src:{i}/dst:{j}/peer_access:{on,off}/dir:{oneway,bidir}/bytes:{N}
case_name peer_name(const peer_case& c);
// Bytes a case moves per iteration: N, both directions counted for bidir (2N).
double peer_bytes_moved(const peer_case& c);

inline constexpr std::uint64_t kPeerLatencyBytes = 4;
// Every ordered pair, peer access on then off, 4-byte oneway copies.
std::vector<peer_case> peer_latency_grid(int gpus);
// PeerLatency/src:{i}/dst:{j}/peer_access:{on,off}/bytes:4
case_name peer_latency_name(const peer_case& c);

}  // namespace gpu_bench
