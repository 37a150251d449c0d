#include "harness/memory/pattern.hpp"
#include "kernels/kernels.hpp"
#include "kernels/launch.cuh"

namespace gpu_bench::kernels {
namespace {

template <bool Poison>
__global__ void fill_kernel(std::uint32_t* dst, std::size_t n, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    dst[i] = Poison ? poison_word(i, seed) : pattern_word(i, seed);
}

__global__ void mismatch_kernel(const std::uint32_t* src, std::size_t n, std::uint32_t seed,
                                unsigned long long* count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    bad += (src[i] != pattern_word(i, seed));
  // Warp-reduce first so a badly broken copy does not turn into millions of atomics.
  for (int offset = 16; offset > 0; offset /= 2) bad += __shfl_down_sync(0xffffffffu, bad, offset);
  if ((threadIdx.x & 31) == 0 && bad != 0) atomicAdd(count, bad);
}

}  // namespace

void fill_pattern(void* dst, std::size_t bytes, std::uint32_t seed, cudaStream_t stream) {
  const std::size_t n = bytes / 4;
  if (n == 0) return;
  fill_kernel<false>
      <<<grid_for(fill_kernel<false>, n), kThreads, 0, stream>>>(static_cast<std::uint32_t*>(dst), n, seed);
  CUDA_CHECK_LAUNCH();
}

void fill_poison(void* dst, std::size_t bytes, std::uint32_t seed, cudaStream_t stream) {
  const std::size_t n = bytes / 4;
  if (n == 0) return;
  fill_kernel<true><<<grid_for(fill_kernel<true>, n), kThreads, 0, stream>>>(static_cast<std::uint32_t*>(dst), n, seed);
  CUDA_CHECK_LAUNCH();
}

void count_mismatches(const void* src, std::size_t bytes, std::uint32_t seed, unsigned long long* count,
                      cudaStream_t stream) {
  const std::size_t n = bytes / 4;
  if (n == 0) return;
  mismatch_kernel<<<grid_for(mismatch_kernel, n), kThreads, 0, stream>>>(static_cast<const std::uint32_t*>(src), n,
                                                                         seed, count);
  CUDA_CHECK_LAUNCH();
}

}  // namespace gpu_bench::kernels
