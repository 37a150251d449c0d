#pragma once
// Plain host launchers for the project's kernels. Nothing here knows of Google Benchmark; each launcher
// checks its launch and throws gpu_bench::cuda_error.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpu_bench::kernels {

// SM-driven copy of `bytes` (a multiple of 4) between any two addresses the GPU can reach: device memory,
// mapped host memory, managed memory. 16-byte accesses where both ends allow it.
void copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

void fill_pattern(void* dst, std::size_t bytes, std::uint32_t seed, cudaStream_t stream);
void fill_poison(void* dst, std::size_t bytes, std::uint32_t seed, cudaStream_t stream);
// Adds the number of words of `src` that differ from the pattern to *count (device-visible memory).
void count_mismatches(const void* src, std::size_t bytes, std::uint32_t seed, unsigned long long* count,
                      cudaStream_t stream);

// One thread that holds `stream` until *flag becomes non-zero, or sets *timed_out after `timeout_ns`.
void gate_spin(const volatile int* flag, int* timed_out, unsigned long long timeout_ns, cudaStream_t stream);

}  // namespace gpu_bench::kernels
