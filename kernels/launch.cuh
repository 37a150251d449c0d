#pragma once
// Grid sizing shared by the element-wise kernels: enough blocks to fill every SM a few times over, then a
// grid-stride loop, so one launch serves 4 bytes and 4 GiB alike.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "fixtures/cuda_check.hpp"

namespace gpu_bench::kernels {

constexpr int kThreads = 256;

inline int grid_for(std::size_t items) {
  static const int max_blocks = [] {
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    return sms * 8;
  }();
  const std::size_t needed = (items + kThreads - 1) / kThreads;
  return static_cast<int>(
      std::max<std::size_t>(1, std::min<std::size_t>(needed, static_cast<std::size_t>(max_blocks))));
}

}  // namespace gpu_bench::kernels
