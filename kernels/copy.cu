#include <cstdint>
#include <stdexcept>

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

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void copy_two_ways_kernel(char* __restrict__ dst0, const char* __restrict__ src0, char* __restrict__ dst1,
                                     const char* __restrict__ src1, std::size_t bytes, unsigned long long* spans) {
  const unsigned half = gridDim.x / 2;
  const bool second = blockIdx.x >= half;
  const std::size_t block = second ? blockIdx.x - half : blockIdx.x;
  const std::size_t blocks = second ? gridDim.x - half : half;
  char* dst = second ? dst1 : dst0;
  const char* src = second ? src1 : src0;
  if (threadIdx.x == 0) atomicMin(&spans[2 * second], global_ns());
  const std::size_t stride = blocks * blockDim.x;
  const std::size_t first = block * blockDim.x + threadIdx.x;
  const bool aligned16 =
      (reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) && (reinterpret_cast<std::uintptr_t>(src) % 16 == 0);
  const std::size_t vec = aligned16 ? bytes / 16 : 0;
  for (std::size_t i = first; i < vec; i += stride)
    reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
  const std::size_t words = (bytes - vec * 16) / 4;
  auto* dw = reinterpret_cast<std::uint32_t*>(dst + vec * 16);
  const auto* sw = reinterpret_cast<const std::uint32_t*>(src + vec * 16);
  for (std::size_t i = first; i < words; i += stride) dw[i] = sw[i];
  // Writes to mapped host memory are posted: the span ends when they are visible to the host, not issued.
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(&spans[2 * second + 1], global_ns());
}

// One block per copy at a time: a copy's words spread over the block's threads.
__global__ void scatter_copy_kernel(const void* const* srcs, void* const* dsts, std::size_t words, std::size_t count) {
  for (std::size_t c = blockIdx.x; c < count; c += gridDim.x) {
    const auto* src = static_cast<const std::uint32_t*>(srcs[c]);
    auto* dst = static_cast<std::uint32_t*>(dsts[c]);
    for (std::size_t i = threadIdx.x; i < words; i += blockDim.x) dst[i] = src[i];
  }
}

struct destination_list {
  uint4* to[kMaxCopyDestinations];
};

// blockIdx.y picks the destination; the blocks of one destination stride over the whole source.
__global__ void copy_to_many_kernel(destination_list d, const uint4* __restrict__ src, std::size_t n) {
  uint4* __restrict__ dst = d.to[blockIdx.y];
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    dst[i] = src[i];
}

__global__ void reset_spans_kernel(unsigned long long* spans, int count) {
  for (int i = threadIdx.x; i < count; i += blockDim.x) spans[i] = i % 2 == 0 ? ~0ull : 0ull;
}

}  // namespace

void copy_two_ways(void* dst0, const void* src0, void* dst1, const void* src1, std::size_t bytes,
                   unsigned long long* spans_ns, cudaStream_t stream) {
  // Every block resident at once, an even count so each direction gets the same share.
  const int wave = grid_for(copy_two_ways_kernel, ~std::size_t{0} / 2);
  const int blocks = std::max(2, wave / 2 * 2);
  copy_two_ways_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<char*>(dst0), static_cast<const char*>(src0),
                                                        static_cast<char*>(dst1), static_cast<const char*>(src1), bytes,
                                                        spans_ns);
  CUDA_CHECK_LAUNCH();
}

void scatter_copy(const void* const* srcs, void* const* dsts, std::size_t bytes, std::size_t count,
                  cudaStream_t stream) {
  if (count == 0) return;
  const int blocks = grid_for(scatter_copy_kernel, count * kThreads);
  scatter_copy_kernel<<<blocks, kThreads, 0, stream>>>(srcs, dsts, bytes / 4, count);
  CUDA_CHECK_LAUNCH();
}

void copy_to_many(void* const* dsts, int count, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (count < 1 || count > kMaxCopyDestinations || bytes % 16 != 0 || reinterpret_cast<std::uintptr_t>(src) % 16 != 0)
    throw std::invalid_argument("copy_to_many: 1 to 16 destinations, 16-byte aligned, a multiple of 16 bytes");
  destination_list d{};
  for (int i = 0; i < count; ++i) {
    if (reinterpret_cast<std::uintptr_t>(dsts[i]) % 16 != 0)
      throw std::invalid_argument("copy_to_many: every destination must be 16-byte aligned");
    d.to[i] = static_cast<uint4*>(dsts[i]);
  }
  const std::size_t n = bytes / 16;
  // One wave in all, shared by the destinations: more blocks would run one destination's share after another's.
  const int wave = grid_for(copy_to_many_kernel, ~std::size_t{0} / 2);
  const dim3 grid(static_cast<unsigned>(std::max(1, wave / count)), static_cast<unsigned>(count));
  copy_to_many_kernel<<<grid, kThreads, 0, stream>>>(d, static_cast<const uint4*>(src), n);
  CUDA_CHECK_LAUNCH();
}

void reset_spans(unsigned long long* spans_ns, int count, cudaStream_t stream) {
  reset_spans_kernel<<<1, 32, 0, stream>>>(spans_ns, count);
  CUDA_CHECK_LAUNCH();
}

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
