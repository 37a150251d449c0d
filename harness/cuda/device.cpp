#include "harness/cuda/device.hpp"

#include <cuda_runtime_api.h>

#include "harness/cuda/check.hpp"

namespace gpu_bench {

int current_device() {
  int d = 0;
  CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

namespace {
int g_listed_gpus = 0;
}  // namespace

void list_as_if_gpus(int count) {
  g_listed_gpus = count;
}

int visible_gpu_count() {
  if (g_listed_gpus > 0) return g_listed_gpus;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // the failure says only that there is no usable GPU: nothing sticks
    return 0;
  }
  return count;
}

std::vector<int> device_range(int count) {
  std::vector<int> v;
  for (int d = 0; d < count; ++d) v.push_back(d);
  return v;
}

device_scope::device_scope(int device) : previous_(current_device()) {
  if (device != previous_) CUDA_CHECK(cudaSetDevice(device));
}

device_scope::device_scope(int device, std::nothrow_t) noexcept : previous_(device) {
  CUDA_CHECK_NOTHROW(cudaGetDevice(&previous_));
  if (device != previous_) CUDA_CHECK_NOTHROW(cudaSetDevice(device));
}

device_scope::~device_scope() {
  int now = previous_;
  CUDA_CHECK_NOTHROW(cudaGetDevice(&now));
  if (now != previous_) CUDA_CHECK_NOTHROW(cudaSetDevice(previous_));
}

bool enable_peer_access(int from, int to) {
  CUDA_CHECK(cudaSetDevice(from));
  const cudaError_t rc = cudaDeviceEnablePeerAccess(to, 0);
  if (rc == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();
    return false;
  }
  CUDA_CHECK(rc);
  return true;
}

}  // namespace gpu_bench
