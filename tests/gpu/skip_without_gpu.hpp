#pragma once
// The GPU test programs' first step. Without a CUDA GPU a program says so in one line and exits with CTest's
// skip code, so a machine without one (CI) skips its test rather than failing it.
#include <cuda_runtime_api.h>

#include <cstdio>

namespace gpu_bench::test {

inline constexpr int kSkipCode = 77;  // the tests' SKIP_RETURN_CODE (tests/CMakeLists.txt)

// Whether a CUDA GPU is visible; where none is, `program` says so on stderr.
inline bool gpu_visible(const char* program) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) return true;
  std::fprintf(stderr, "%s: no CUDA GPU is visible\n", program);
  return false;
}

}  // namespace gpu_bench::test
