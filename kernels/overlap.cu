#include <cmath>

#include "kernels/kernels.hpp"
#include "kernels/launch.cuh"

namespace gpu_bench::kernels {
namespace {

__global__ void sincos_work_kernel(float* a, std::size_t offset, std::size_t n, int work) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    float acc = 0.0f;
    for (int k = 0; k < work; ++k) {
      const float x = static_cast<float>(offset + i + static_cast<std::size_t>(k));
      const float s = sinf(x);
      const float c = cosf(x);
      acc += sqrtf(s * s + c * c);
    }
    a[offset + i] += acc;
  }
}

__global__ void max_add_error_kernel(const float* in, const float* out, std::size_t n, float expected_add,
                                     unsigned* max_bits) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  float worst = 0.0f;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    const float err = fabsf(out[i] - in[i] - expected_add);
    worst = (err > worst || isnan(err)) ? (isnan(err) ? INFINITY : err) : worst;
  }
  for (int offset = 16; offset > 0; offset /= 2) worst = fmaxf(worst, __shfl_down_sync(0xffffffffu, worst, offset));
  // Non-negative floats order like their bit patterns, so an integer max is a float max.
  if ((threadIdx.x & 31) == 0) atomicMax(max_bits, __float_as_uint(worst));
}

}  // namespace

void sincos_work(float* a, std::size_t offset, std::size_t n, int work, cudaStream_t stream) {
  if (n == 0) return;
  sincos_work_kernel<<<grid_for(sincos_work_kernel, n), kThreads, 0, stream>>>(a, offset, n, work);
  CUDA_CHECK_LAUNCH();
}

void max_add_error(const float* in, const float* out, std::size_t n, float expected_add, unsigned* max_bits,
                   cudaStream_t stream) {
  if (n == 0) return;
  max_add_error_kernel<<<grid_for(max_add_error_kernel, n), kThreads, 0, stream>>>(in, out, n, expected_add, max_bits);
  CUDA_CHECK_LAUNCH();
}

}  // namespace gpu_bench::kernels
