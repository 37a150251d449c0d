#pragma once
// Grid sizing shared by the element-wise kernels: one full wave of blocks, then a grid-stride loop, so one
// launch serves 4 bytes and 4 GiB alike.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

#include "harness/cuda/check.hpp"

namespace gpu_bench::kernels {

constexpr int kThreads = 256;

// As many blocks as the current device's SMs hold at once for this kernel (read once per kernel and
// device: cases switch GPUs, and one machine's GPUs need not be alike). One full wave and a grid-stride
// loop give every block the same share of the work.
template <typename Kernel>
int grid_for(Kernel* kernel, std::size_t items) {
  static std::mutex lock;
  static std::map<std::pair<const void*, int>, int> wave_by_kernel;  // kernels of one type share it
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  int wave = 0;
  {
    std::lock_guard<std::mutex> hold(lock);
    const auto key = std::make_pair(reinterpret_cast<const void*>(kernel), dev);
    auto it = wave_by_kernel.find(key);
    if (it == wave_by_kernel.end()) {
      int sms = 0, per_sm = 0;
      CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
      it = wave_by_kernel.emplace(key, std::max(1, sms * per_sm)).first;
    }
    wave = it->second;
  }
  const std::size_t needed = (items + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(needed, static_cast<std::size_t>(wave))));
}

}  // namespace gpu_bench::kernels
