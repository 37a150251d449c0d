// The Latency family's kernels: one thread following pointers, and the writing and checking of the cycle
// they follow.
#include "kernels/kernels.hpp"
#include "kernels/launch.cuh"

namespace gpu_bench::kernels {
namespace {

// Each load's address is the value the previous load returned, so no two loads overlap: the time of the
// loop is `loads` round trips to wherever the lines are. The chase starts where the previous launch left
// off and leaves its own end there, so over many launches it walks the whole cycle rather than the same
// first lines, and storing it keeps the compiler from dropping the loads.
template <bool Uncached>
__global__ void chase_kernel(void** cursor, unsigned long long loads) {
  void* p = *cursor;
  for (unsigned long long i = 0; i < loads; ++i) {
    if constexpr (Uncached) {
      // ld.global.cv: the line is fetched again at every load, whatever a cache holds.
      p = reinterpret_cast<void*>(__ldcv(reinterpret_cast<const unsigned long long*>(p)));
    } else {
      p = *static_cast<void* const*>(p);
    }
  }
  *cursor = p;
}

// Whole lines, the pointer then zeros: a write of the pointer alone would leave each line's sectors partly
// written in the L2, and the first load of each then waits for the rest of its sector from DRAM.
__global__ void write_cycle_kernel(char* base, const std::uint32_t* next, std::size_t lines, std::size_t line_bytes) {
  const std::size_t words = line_bytes / sizeof(unsigned long long);
  for (std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; w < lines * words;
       w += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t i = w / words;
    reinterpret_cast<unsigned long long*>(base)[w] =
        w % words == 0 ? reinterpret_cast<unsigned long long>(base + static_cast<std::size_t>(next[i]) * line_bytes)
                       : 0ull;
  }
}

__global__ void count_cycle_mismatches_kernel(const char* base, const std::uint32_t* next, std::size_t lines,
                                              std::size_t line_bytes, std::size_t step, unsigned long long* count) {
  unsigned long long bad = 0;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k * step < lines;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t i = k * step;
    const char* want = base + static_cast<std::size_t>(next[i]) * line_bytes;
    bad += __ldcv(reinterpret_cast<const unsigned long long*>(base + i * line_bytes)) !=
           reinterpret_cast<unsigned long long>(want);
  }
  if (bad) atomicAdd(count, bad);
}

}  // namespace

void chase(void** cursor, std::uint64_t loads, bool uncached, cudaStream_t stream) {
  if (uncached)
    chase_kernel<true><<<1, 1, 0, stream>>>(cursor, loads);
  else
    chase_kernel<false><<<1, 1, 0, stream>>>(cursor, loads);
  CUDA_CHECK_LAUNCH();
}

void write_cycle(void* base, const std::uint32_t* next, std::size_t lines, std::size_t line_bytes,
                 cudaStream_t stream) {
  const std::size_t words = lines * (line_bytes / sizeof(unsigned long long));
  write_cycle_kernel<<<grid_for(write_cycle_kernel, words), kThreads, 0, stream>>>(static_cast<char*>(base), next,
                                                                                   lines, line_bytes);
  CUDA_CHECK_LAUNCH();
}

void count_cycle_mismatches(const void* base, const std::uint32_t* next, std::size_t lines, std::size_t line_bytes,
                            std::size_t step, unsigned long long* count, cudaStream_t stream) {
  const std::size_t checked = (lines + step - 1) / step;
  count_cycle_mismatches_kernel<<<grid_for(count_cycle_mismatches_kernel, checked), kThreads, 0, stream>>>(
      static_cast<const char*>(base), next, lines, line_bytes, step, count);
  CUDA_CHECK_LAUNCH();
}

}  // namespace gpu_bench::kernels
