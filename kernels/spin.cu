#include "kernels/kernels.hpp"
#include "kernels/launch.cuh"

namespace gpu_bench::kernels {
namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void gate_kernel(const volatile int* flag, int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long t0 = global_ns();
  while (*flag == 0) {
    if (global_ns() - t0 > timeout_ns) {
      *timed_out = 1;
      return;
    }
    __nanosleep(64);  // poll the bus gently: the flag lives in host memory
  }
}

}  // namespace

void gate_spin(const volatile int* flag, int* timed_out, unsigned long long timeout_ns, cudaStream_t stream) {
  gate_kernel<<<1, 1, 0, stream>>>(flag, timed_out, timeout_ns);
  CUDA_CHECK_LAUNCH();
}

}  // namespace gpu_bench::kernels
