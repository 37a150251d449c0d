#pragma once
// Where host memory lies on a host with several NUMA nodes. Host buffers are bound to the node of the GPU
// they serve (a family's remote cases to another node), the thread that drives the GPU runs on that
// node's CPUs, and the node a buffer's pages landed on is read back rather than assumed. libnuma does the
// binding; built without it nothing is bound and every query answers "unknown".
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/run/enum_names.hpp"

namespace gpu_bench {

enum class numa_place { local, remote };
template <>
inline constexpr enum_entries<numa_place, 2> enum_names<numa_place> = {
    {{numa_place::local, "local"}, {numa_place::remote, "remote"}}};

// "0-1,3" (the kernel's node-list form, as in /sys/devices/system/node/has_memory) -> {0, 1, 3};
// nullopt for anything else.
std::optional<std::vector<int>> parse_node_list(std::string_view text);

// The nodes that have memory; empty where the kernel does not say.
std::vector<int> host_memory_nodes();

// Whether this build can bind memory and threads to a node (built with libnuma, and the kernel has NUMA).
bool numa_binding_available();

// Whether the process started under a memory policy of its own (numactl --membind, --preferred, ...):
// then gpu_bench binds nothing, so the user's placement holds. Read once, before any binding.
bool numa_user_policy();

// A numa:{local,remote} axis: only where there is a choice (more than one node with memory), a
// way to make it, and no placement chosen by the user.
bool numa_axis_available();

// The node a buffer for a GPU on `gpu_node` goes to: local is the GPU's node, remote the first other node
// with memory. nullopt where there is no such node: the GPU's node unknown (negative) or not in `nodes`,
// or no other node.
std::optional<int> numa_target(numa_place p, int gpu_node, const std::vector<int>& nodes);

// "3" -> 3; "none", "unavailable" and anything else -> -1 (unknown).
int parse_numa_node(std::string_view text);

// While alive, pages the calling thread faults in come from `node` only (MPOL_BIND); the thread's previous
// policy is restored after. Without a node, or without libnuma, it does nothing.
class numa_bind_scope {
 public:
  explicit numa_bind_scope(std::optional<int> node);
  ~numa_bind_scope();
  numa_bind_scope(const numa_bind_scope&) = delete;
  numa_bind_scope& operator=(const numa_bind_scope&) = delete;

 private:
  bool active_ = false;
  int mode_ = 0;
  std::vector<unsigned long> mask_;
};

// The node the page holding `p` lies on; nullopt where the kernel cannot say (memory it does not manage
// as ordinary pages, such as a driver's mapping, or a build without libnuma).
std::optional<int> page_node(const void* p);

// Runs the calling thread on `node`'s CPUs only. Returns an empty string, or why it could not.
std::string run_on_node(int node);

}  // namespace gpu_bench
