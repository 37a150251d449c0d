#include "harness/measure/planted.hpp"

#ifdef GPU_BENCH_PLANTED_DEFECTS
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "harness/cuda/check.hpp"

namespace gpu_bench {

bool planted(const char* defect) {
  const char* v = std::getenv("GPU_BENCH_PLANT");
  return v != nullptr && std::strcmp(v, defect) == 0;
}

void plant_extra_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  static const bool on = planted("extra_copy");
  if (on) CUDA_CHECK(cudaMemcpyAsync(dst, src, std::max<std::size_t>(1, bytes / 10), kind, stream));
}

}  // namespace gpu_bench
#endif
