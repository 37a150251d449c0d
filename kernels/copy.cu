#include <cstdint>

#include "kernels/kernels.hpp"
#include "kernels/launch.cuh"

namespace gpu_bench::kernels {
namespace {

__global__ void copy_vec16(uint4* __restrict__ dst, const uint4* __restrict__ src, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    dst[i] = src[i];
}

__global__ void copy_words(std::uint32_t* __restrict__ dst, const std::uint32_t* __restrict__ src, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    dst[i] = src[i];
}

}  // namespace

void copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  const bool aligned16 =
      (reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) && (reinterpret_cast<std::uintptr_t>(src) % 16 == 0);
  const std::size_t vec = aligned16 ? bytes / 16 : 0;
  if (vec > 0) {
    copy_vec16<<<grid_for(copy_vec16, vec), kThreads, 0, stream>>>(static_cast<uint4*>(dst),
                                                                   static_cast<const uint4*>(src), vec);
    CUDA_CHECK_LAUNCH();
  }
  const std::size_t done = vec * 16;
  const std::size_t tail_words = (bytes - done) / 4;
  if (tail_words > 0) {
    copy_words<<<grid_for(copy_words, tail_words), kThreads, 0, stream>>>(
        reinterpret_cast<std::uint32_t*>(static_cast<char*>(dst) + done),
        reinterpret_cast<const std::uint32_t*>(static_cast<const char*>(src) + done), tail_words);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace gpu_bench::kernels
