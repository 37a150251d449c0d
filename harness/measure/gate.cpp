#include "harness/measure/gate.hpp"

#include <atomic>

#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {

const char* gate_timeout::what() const noexcept {
  return "the gate timed out: the host could not finish enqueueing the iteration while the stream was held "
         "(does the enqueue wait for the GPU?)";
}

gate::gate(double timeout_s, bool enabled)
    : timeout_ns_(static_cast<unsigned long long>(timeout_s * 1e9)), device_(current_device()), enabled_(enabled) {
  void* p = nullptr;
  CUDA_CHECK(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped));
  flags_ = static_cast<volatile int*>(p);
  flags_[0] = 1;
  flags_[1] = 0;
  void* d = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(&d, p, 0));
  dev_flags_ = static_cast<int*>(d);
}

gate::~gate() {
  if (flags_) CUDA_CHECK_NOTHROW(cudaFreeHost(const_cast<int*>(flags_)));
}

void gate::close(cudaStream_t stream, double timeout_s) {
  if (!enabled_) return;
  const unsigned long long timeout_ns = timeout_s > 0 ? static_cast<unsigned long long>(timeout_s * 1e9) : timeout_ns_;
  flags_[0] = 0;
  flags_[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  device_scope on(device_);  // a kernel launches on the current device's streams only
  kernels::gate_spin(dev_flags_, dev_flags_ + 1, timeout_ns, stream);
}

void gate::open() noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  flags_[0] = 1;
}

void gate::check() {
  if (flags_[1] != 0) {
    flags_[1] = 0;
    throw gate_timeout();
  }
}

}  // namespace gpu_bench

#include <map>
#include <memory>

#include "harness/run/options.hpp"

namespace gpu_bench {
gate& process_gate(int device) {
  // One gate per GPU: its flags are mapped into the device that made them, and its kernel runs there.
  static std::map<int, std::unique_ptr<gate>> gates;
  auto& g = gates[device];
  if (!g) {
    device_scope on(device);
    g = std::make_unique<gate>(current_options().gate_timeout_s, current_options().gate);
  }
  return *g;
}

gate& process_gate() {
  return process_gate(current_device());
}
}  // namespace gpu_bench
