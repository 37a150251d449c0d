#pragma once
// The Latency family's cases apart from any GPU: which memories, placements, patterns and footprints, which
// other GPUs' memory a GPU chases through, and the cases' names. Pure functions, tested without a GPU.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "benchmarks/latency/cycle.hpp"
#include "harness/memory/numa.hpp"
#include "harness/run/case_name.hpp"
#include "harness/run/enum_names.hpp"

namespace gpu_bench {

// device: the GPU's own memory; pinned, registered, managed: host memory across the host link; peer: another
// GPU's memory, mapped with peer access, across NVLink or PCIe.
enum class latency_mem { device, pinned, registered, managed, peer };
template <>
inline constexpr enum_entries<latency_mem, 5> enum_names<latency_mem> = {{{latency_mem::device, "device"},
                                                                          {latency_mem::pinned, "pinned"},
                                                                          {latency_mem::registered, "registered"},
                                                                          {latency_mem::managed, "managed"},
                                                                          {latency_mem::peer, "peer"}}};

// Whether a kind's lines lie across a link from the GPU that chases (host memory or another GPU's): its
// loads are then uncached, so that every one crosses the link, and its chases sized for about a
// microsecond a load.
bool across_link(latency_mem m);
// Whether a kind's lines lie in host memory.
bool in_host_memory(latency_mem m);

struct latency_case {
  latency_mem mem = latency_mem::device;
  numa_place numa = numa_place::local;
  chase_pattern pattern = chase_pattern::stride;
  std::uint64_t bytes = 0;
  int peer = -1;  // mem:peer: the GPU whose memory the chase follows
};

// Latency/mem:{device,pinned,registered,managed,peer}[/peer:{j}][/numa:remote]/pattern:{stride,random}/bytes:{N}
case_name latency_name(const latency_case& c);

// What joins GPU `from` to GPU `to` as far as a load's way there goes: one token per kind of link, equal for
// pairs joined alike; nullopt where `from` cannot map `to`'s memory.
using link_class_of = std::function<std::optional<std::string>(int from, int to)>;

// The GPUs whose memory GPU `device` chases through, in increasing order, among `gpus` visible GPUs (none
// where `device` can map no other's memory). `every`: every GPU it can map (--full). Otherwise one pair of
// each class of link: under --device=all (`node_wide`) only the node's first pair of each class (the lowest
// `from`, then the lowest `to`), so that a class is measured once in the node and not once from every GPU;
// else the lowest-numbered GPU of each class seen from `device`.
std::vector<int> chased_peers(int device, int gpus, bool every, bool node_wide, const link_class_of& link);

// What the family registers on one GPU.
struct latency_plan {
  bool numa_remote = false;                      // pinned and registered cases gain numa:remote twins
  std::vector<std::uint64_t> device_footprints;  // of device and peer memory
  std::vector<std::uint64_t> host_footprints;    // of pinned, registered and managed memory
  std::vector<int> peers;                        // chased_peers
};

// Every case of the plan: device, pinned, registered, managed, then peer memory of each peer in turn; local
// before remote; stride before random; footprints in the order given.
std::vector<latency_case> latency_grid(const latency_plan& plan);

}  // namespace gpu_bench
