#pragma once
// The Transfer family's parameter grid: which direction goes with which memory kind, and how each case
// is named and counted.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "harness/context/profile.hpp"
#include "harness/memory/mem_kind.hpp"
#include "harness/memory/numa.hpp"
#include "harness/run/case_name.hpp"

namespace gpu_bench {

enum class direction { h2d, d2h, bidir, d2d };
template <>
inline constexpr enum_entries<direction, 4> enum_names<direction> = {
    {{direction::h2d, "h2d"}, {direction::d2h, "d2h"}, {direction::bidir, "bidir"}, {direction::d2d, "d2d"}}};

// d2d only: whether L2 holds what the copy reads when a sample starts. cold (the default) writes a buffer
// twice the L2's size before every sample, so a copy that fits in L2 is not timed at L2's speed.
enum class cache_state { cold, warm };
template <>
inline constexpr enum_entries<cache_state, 2> enum_names<cache_state> = {
    {{cache_state::cold, "cold"}, {cache_state::warm, "warm"}}};

// What moves the bytes: a copy engine (cudaMemcpyAsync, and the driver's prefetch) or the SMs (a copy
// kernel reading and writing through device addresses).
enum class copy_engine { ce, sm };
template <>
inline constexpr enum_entries<copy_engine, 2> enum_names<copy_engine> = {
    {{copy_engine::ce, "ce"}, {copy_engine::sm, "sm"}}};

// The engine a kind's plain case uses: the SMs for mapped memory and page faults, a copy engine otherwise.
copy_engine natural_engine(mem_kind k);
// The kinds a case can also be measured with the other engine: pinned, registered and mapped host memory
// (every one has a device address and a host one), and device memory.
bool has_engine_twin(mem_kind k);

struct transfer_case {
  direction dir;
  mem_kind mem;
  std::uint64_t bytes;
  // remote only on the numa axis (several NUMA nodes, a kind numa_kind() allows); the name marks only
  // remote cases, so a case's name is the same on hosts with one node and with several.
  numa_place numa = numa_place::local;
  cache_state cache = cache_state::cold;  // named for d2d only
  // The other engine than the kind's natural one is named (engine:sm on pinned, engine:ce on mapped), so
  // the plain names stay those of every earlier run.
  std::optional<copy_engine> engine = std::nullopt;
  copy_engine engine_used() const { return engine.value_or(natural_engine(mem)); }
};

// The kinds whose pages gpu_bench places itself and so can put on a chosen node: not device memory, and
// not managed memory, whose pages the driver migrates wherever it decides.
bool numa_kind(mem_kind k);

// The memory kinds a direction is measured with: d2d with device memory only; managed_fault only h2d
// (a kernel touching host-resident pages pulls them to the GPU; there is no GPU-timed way to fault them
// back).
const std::vector<mem_kind>& transfer_kinds(direction d);
bool transfer_valid(direction d, mem_kind k);

// Every valid case, directions in the order h2d, d2h, bidir, d2d, then kinds, then (with `numa_axis`, for
// the kinds numa_kind() allows) local and remote, then for d2d cold and warm, then sizes; then the other
// engine's twins of the kinds that have one, at `engine_sizes` (those of `sizes` among them).
std::vector<transfer_case> transfer_grid(const std::vector<std::uint64_t>& sizes, bool numa_axis = false,
                                         const std::vector<std::uint64_t>& engine_sizes = {});

case_name transfer_name(const transfer_case& c);

// Bytes a case moves per iteration: N, except bidir, which moves N each way at once (2N); d2d counts
// the N bytes copied once, not the 2N read and written.
double transfer_bytes_moved(const transfer_case& c);

// "" when `gbps` is possible for this case on a GPU with profile `p`, else the sentence it fails with.
// Host copies are held to the host link (per direction; bidir to both at once). d2d counts its bytes
// once, so it moves 2 x gbps over the memory bus; it is judged only when its working set (2 x bytes)
// does not fit in L2, whose bandwidth exceeds device memory's.
std::string beyond_link_peak(const transfer_case& c, const device_profile& p, double gbps);

}  // namespace gpu_bench
