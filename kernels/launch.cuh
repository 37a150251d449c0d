#pragma once
// Grid sizing shared by the element-wise kernels: enough blocks to fill every SM a few times over, then a
// grid-stride loop, so one launch serves 4 bytes and 4 GiB alike.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <mutex>

#include "fixtures/cuda_check.hpp"

namespace gpu_bench::kernels {

constexpr int kThreads = 256;

// Eight blocks per SM of the current device, read once per device: cases switch GPUs, and the GPUs of
// one machine need not have the same SM count.
inline int max_blocks_on_current_device() {
  static std::mutex m;
  static std::map<int, int> blocks;
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(m);
  auto it = blocks.find(dev);
  if (it != blocks.end()) return it->second;
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return blocks[dev] = sms * 8;
}

inline int grid_for(std::size_t items) {
  const int max_blocks = max_blocks_on_current_device();
  const std::size_t needed = (items + kThreads - 1) / kThreads;
  return static_cast<int>(
      std::max<std::size_t>(1, std::min<std::size_t>(needed, static_cast<std::size_t>(max_blocks))));
}

}  // namespace gpu_bench::kernels
