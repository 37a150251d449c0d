#pragma once
// Filling sources with the pattern, poisoning destinations, and counting the words that came out wrong.
// Either processor can do it: the GPU for anything it can address (fast, even for write-combined memory,
// which the CPU reads very slowly), the CPU for pageable memory and for managed memory whose pages must
// stay where they are.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/memory/host_buffer.hpp"

namespace gpu_bench {

enum class side { host, gpu };

struct region {
  void* host = nullptr;  // the CPU's address, or nullptr for device memory
  void* dev = nullptr;   // the GPU's address, or nullptr for pageable memory
  std::size_t bytes = 0;
};

region region_of(const host_buffer& b, std::size_t bytes);
region region_of(const device_buffer& b, std::size_t bytes);

// Which processor fills and checks memory of this kind without disturbing the measurement.
side natural_side(mem_kind k);

void fill_pattern(const region& r, std::uint32_t seed, side by, cudaStream_t stream);
void fill_poison(const region& r, std::uint32_t seed, side by, cudaStream_t stream);
// Waits for `stream`, then counts.
std::uint64_t count_mismatches(const region& r, std::uint32_t seed, side by, cudaStream_t stream);

// "" when the region holds the pattern, else a sentence for SkipWithError.
std::string verify_message(const region& r, std::uint32_t seed, side by, cudaStream_t stream, const std::string& what);

}  // namespace gpu_bench
