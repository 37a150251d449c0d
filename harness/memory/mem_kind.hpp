#pragma once
// The memory kinds every family speaks of: one enum, one name table (for names, JSON and --help alike).
#include <vector>

#include "harness/run/enum_names.hpp"

namespace gpu_bench {

enum class mem_kind {
  pageable,          // ordinary malloc'd memory, pages touched before timing
  pinned,            // cudaMallocHost
  write_combined,    // cudaHostAlloc(WriteCombined): fast for the GPU to read, slow for the CPU to read
  registered,        // ordinary memory pinned in place with cudaHostRegister
  mapped,            // zero-copy host memory that kernels read or write directly over the bus
  managed_prefetch,  // cudaMallocManaged, moved with cudaMemPrefetchAsync
  managed_fault,     // cudaMallocManaged, moved by a kernel touching it (page faults)
  device,            // cudaMalloc: the far side of every host transfer, and both sides of d2d
};

template <>
inline constexpr enum_entries<mem_kind, 8> enum_names<mem_kind> = {{
    {mem_kind::pageable, "pageable"},
    {mem_kind::pinned, "pinned"},
    {mem_kind::write_combined, "write_combined"},
    {mem_kind::registered, "registered"},
    {mem_kind::mapped, "mapped"},
    {mem_kind::managed_prefetch, "managed_prefetch"},
    {mem_kind::managed_fault, "managed_fault"},
    {mem_kind::device, "device"},
}};

bool is_host_kind(mem_kind k);
bool is_managed(mem_kind k);
// Whether the enqueue of a copy from or to this kind can hold the host until the GPU reaches it
// (pageable staging does), which rules out the gate.
bool enqueue_may_block(mem_kind k);

}  // namespace gpu_bench
