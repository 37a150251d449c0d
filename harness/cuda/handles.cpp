#include "harness/cuda/handles.hpp"

#include <map>
#include <mutex>

#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"

namespace gpu_bench {

cuda_stream::cuda_stream(unsigned flags) {
  CUDA_CHECK(cudaStreamCreateWithFlags(&s_, flags));
}
cuda_stream::~cuda_stream() {
  if (s_) CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
}
cuda_stream& cuda_stream::operator=(cuda_stream&& o) noexcept {
  if (this != &o) {
    if (s_) CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
    s_ = std::exchange(o.s_, nullptr);
  }
  return *this;
}
void cuda_stream::synchronize() const {
  CUDA_CHECK(cudaStreamSynchronize(s_));
}

cuda_event::cuda_event(unsigned flags) {
  CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags));
}
cuda_event::~cuda_event() {
  if (e_) CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
}
cuda_event& cuda_event::operator=(cuda_event&& o) noexcept {
  if (this != &o) {
    if (e_) CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
    e_ = std::exchange(o.e_, nullptr);
  }
  return *this;
}
void cuda_event::record(cudaStream_t s) const {
  CUDA_CHECK(cudaEventRecord(e_, s));
}

double elapsed_seconds(const cuda_event& start, const cuda_event& stop) {
  CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) * 1e-3;
}

device_buffer::device_buffer(std::size_t bytes) : bytes_(bytes), device_(current_device()) {
  const cudaError_t rc = cudaMalloc(&p_, bytes);
  if (rc == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    p_ = nullptr;
    throw allocation_error("cannot allocate " + format_bytes(bytes) + " of device memory (" + format_bytes(free_b) +
                           " free of " + format_bytes(total_b) + ")");
  }
  if (rc != cudaSuccess) throw_cuda_error(rc, "cudaMalloc", __FILE__, __LINE__);
}
device_buffer::~device_buffer() {
  release();
}
device_buffer& device_buffer::operator=(device_buffer&& o) noexcept {
  if (this != &o) {
    release();
    p_ = std::exchange(o.p_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    device_ = o.device_;
  }
  return *this;
}
void device_buffer::release() noexcept {
  if (p_) {
    device_scope on(device_, std::nothrow);
    CUDA_CHECK_NOTHROW(cudaFree(p_));
  }
  p_ = nullptr;
  bytes_ = 0;
}

scratch_word device_scratch_word() {
  static std::mutex m;
  static std::map<int, scratch_word> words;
  const int dev = current_device();
  std::lock_guard<std::mutex> lock(m);
  if (auto it = words.find(dev); it != words.end()) return it->second;
  void* p = nullptr;
  CUDA_CHECK(cudaHostAlloc(&p, 8, cudaHostAllocMapped));
  void* d = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(&d, p, 0));
  return words[dev] = scratch_word{p, d};
}

}  // namespace gpu_bench
