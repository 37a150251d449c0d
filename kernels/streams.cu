#include "kernels/kernels.hpp"
#include "kernels/launch.cuh"

namespace gpu_bench::kernels {
namespace {

__global__ void add_kernel(float* c, const float* a, const float* b, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

constexpr int kReduceThreads = 256;

__global__ void partial_reduce_kernel(const float* a, std::size_t n, float* partial) {
  __shared__ float s[kReduceThreads];
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  float acc = 0.0f;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) acc += a[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

__global__ void single_thread_sum_kernel(const float* partial, int count, float* sum) {
  float acc = 0.0f;
  for (int i = 0; i < count; ++i) acc += partial[i];
  *sum = acc;
}

__global__ void divide_by_kernel(float* a, std::size_t n, const float* sum) {
  const float v = *sum;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) a[i] /= v;
}

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void busy_kernel(unsigned long long ns, unsigned* marks, unsigned stamp) {
  const unsigned long long t0 = now_ns();
  while (now_ns() - t0 < ns) {
  }
  __syncthreads();
  if (threadIdx.x == 0) marks[blockIdx.x] = stamp;
}

__global__ void empty_kernel() {}

}  // namespace

void add(float* c, const float* a, const float* b, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  add_kernel<<<static_cast<unsigned>((n + 1023) / 1024), 1024, 0, stream>>>(c, a, b, n);
  CUDA_CHECK_LAUNCH();
}

void partial_reduce(const float* a, std::size_t n, float* partial, int blocks, cudaStream_t stream) {
  partial_reduce_kernel<<<blocks, kReduceThreads, 0, stream>>>(a, n, partial);
  CUDA_CHECK_LAUNCH();
}

void single_thread_sum(const float* partial, int count, float* sum, cudaStream_t stream) {
  single_thread_sum_kernel<<<1, 1, 0, stream>>>(partial, count, sum);
  CUDA_CHECK_LAUNCH();
}

void divide_by(float* a, std::size_t n, const float* sum, int blocks, cudaStream_t stream) {
  divide_by_kernel<<<blocks, kReduceThreads, 0, stream>>>(a, n, sum);
  CUDA_CHECK_LAUNCH();
}

void busy(int blocks, int threads, unsigned long long ns, unsigned* marks, unsigned stamp, cudaStream_t stream) {
  busy_kernel<<<blocks, threads, 0, stream>>>(ns, marks, stamp);
  CUDA_CHECK_LAUNCH();
}

void empty(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  CUDA_CHECK_LAUNCH();
}

}  // namespace gpu_bench::kernels
