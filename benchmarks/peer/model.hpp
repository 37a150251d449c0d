#pragma once
// The Peer and PeerLatency families' cases and names: a copy between two GPUs' memories, and one 4-byte
// peer copy. Pure functions, tested without a GPU.
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/run/case_name.hpp"

namespace gpu_bench {

enum class peer_dir { oneway, bidir };
template <>
inline constexpr enum_entries<peer_dir, 2> enum_names<peer_dir> = {
    {{peer_dir::oneway, "oneway"}, {peer_dir::bidir, "bidir"}}};

struct peer_case {
  int src, dst;      // GPU ordinals; bidir also copies dst -> src at the same time
  bool peer_access;  // on: cudaDeviceEnablePeerAccess both ways; off: staged through host memory
  peer_dir dir;
  std::uint64_t bytes;
  // With peer access, the same copy by the source GPU's SMs (a copy kernel writing through the peer
  // mapping): engine:sm in the name. Without it, cudaMemcpyPeerAsync's copy engines.
  bool sm = false;
  // The copy issued by the destination GPU, which pulls the bytes (a read of the source's memory, on a
  // stream of the destination; with sm, a kernel there reading through the peer mapping): access:read in
  // the name. Without it, the source GPU issues the copy and pushes the bytes (a write).
  bool read = false;
};

// Every ordered pair of `gpus` GPUs, peer access on then off, oneway then bidir, then sizes, with peer
// access also by the SMs (engine:sm), and oneway with peer access also read by the destination
// (access:read, by copy engine then by SMs). bidir only for src < dst: the pair's two directions at once
// are the same measurement whichever GPU is named first.
// Empty for fewer than two GPUs. What --full registers.
std::vector<peer_case> peer_grid(int gpus, const std::vector<std::uint64_t>& sizes);

// The default matrix, which grows with the pairs only where pairs differ: every ordered pair's copy with
// peer access at the largest size, oneway, and bidir for src < dst; and for each pair of `swept` (src < dst,
// one per link class) everything peer_grid has for it from src to dst: every size, peer access off, engine:sm,
// access:read. In peer_grid's order: N(N-1) + N(N-1)/2 cases, and 22 more per swept pair for three sizes.
std::vector<peer_case> peer_default_grid(int gpus, const std::vector<std::uint64_t>& sizes,
                                         const std::vector<std::pair<int, int>>& swept);
// Peer/src:{i}/dst:{j}/peer_access:{on,off}/dir:{oneway,bidir}[/access:read][/engine:sm]/bytes:{N}
case_name peer_name(const peer_case& c);
// Bytes a case moves per iteration: N, both directions counted for bidir (2N).
double peer_bytes_moved(const peer_case& c);

inline constexpr std::uint64_t kPeerLatencyBytes = 4;
// Every ordered pair, peer access on then off, 4-byte oneway copies (--full).
std::vector<peer_case> peer_latency_grid(int gpus);
// The default: every ordered pair with peer access, and without it only the pairs of `swept`, src to dst.
std::vector<peer_case> peer_latency_default_grid(int gpus, const std::vector<std::pair<int, int>>& swept);
// PeerLatency/src:{i}/dst:{j}/peer_access:{on,off}/bytes:4
case_name peer_latency_name(const peer_case& c);

// PeerPattern: several peer copies at once. one_to_all: GPU 0 to every other GPU; all_to_one: every other
// GPU to GPU 0; all_pairs: every ordered pair.
enum class peer_pattern { one_to_all, all_to_one, all_pairs };
template <>
inline constexpr enum_entries<peer_pattern, 3> enum_names<peer_pattern> = {{{peer_pattern::one_to_all, "one_to_all"},
                                                                            {peer_pattern::all_to_one, "all_to_one"},
                                                                            {peer_pattern::all_pairs, "all_pairs"}}};

// The (src, dst) copies a pattern makes among `gpus` GPUs, in the order they are queued (each on a stream of
// its own); empty for fewer than two GPUs. all_pairs goes round in steps: step k (1 to N-1) copies every GPU
// s to GPU (s + k) mod N, so that where a GPU's copies run one after another in the order queued, every GPU
// receives from one sender at a time rather than all of them sending to GPU 0 first, then to GPU 1, ...
std::vector<std::pair<int, int>> pattern_copies(peer_pattern p, int gpus);
// The GPU each copy's figure belongs to: what it sent (one_to_all: its destination's, each GPU 0 sends to;
// all_pairs: its source's) or, for all_to_one, what its destination received from it (its source's).
int pattern_gpu_of(peer_pattern p, const std::pair<int, int>& copy);
// PeerPattern/pattern:{...}[/engine:sm][/release:together]/bytes:{N}
case_name peer_pattern_name(peer_pattern p, std::uint64_t bytes, bool sm = false, bool together = false);

}  // namespace gpu_bench
