#include "harness/measure/verify.hpp"

#include <stdexcept>

#include "harness/cuda/check.hpp"
#include "harness/memory/pattern.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {
namespace {

void* address_for(const region& r, side by) {
  void* p = by == side::gpu ? r.dev : r.host;
  if (p == nullptr)
    throw std::logic_error(by == side::gpu ? "the GPU cannot address this memory"
                                           : "the CPU cannot address this memory");
  return p;
}

}  // namespace

region region_of(const host_buffer& b, std::size_t bytes) {
  if (bytes > b.bytes()) throw std::logic_error("region larger than its buffer");
  return region{b.data(), b.device_ptr(), bytes};
}

region region_of(const device_buffer& b, std::size_t bytes) {
  if (bytes > b.bytes()) throw std::logic_error("region larger than its buffer");
  return region{nullptr, b.data(), bytes};
}

side natural_side(mem_kind k) {
  if (k == mem_kind::pageable || is_managed(k)) return side::host;
  return side::gpu;
}

void fill_pattern(const region& r, std::uint32_t seed, side by, cudaStream_t stream) {
  if (by == side::gpu)
    kernels::fill_pattern(address_for(r, by), r.bytes, seed, stream);
  else
    host_fill_pattern(address_for(r, by), r.bytes, seed);
}

void fill_poison(const region& r, std::uint32_t seed, side by, cudaStream_t stream) {
  if (by == side::gpu)
    kernels::fill_poison(address_for(r, by), r.bytes, seed, stream);
  else
    host_fill_poison(address_for(r, by), r.bytes, seed);
}

std::uint64_t count_mismatches(const region& r, std::uint32_t seed, side by, cudaStream_t stream) {
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (by == side::host) return host_count_mismatches(address_for(r, by), r.bytes, seed);
  // The counter the mismatch kernel adds into, on the device that runs it (the current one).
  const scratch_word w = device_scratch_word();
  *static_cast<volatile unsigned long long*>(w.host) = 0;
  kernels::count_mismatches(address_for(r, by), r.bytes, seed, static_cast<unsigned long long*>(w.dev), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return *static_cast<volatile unsigned long long*>(w.host);
}

std::string verify_message(const region& r, std::uint32_t seed, side by, cudaStream_t stream, const std::string& what) {
  const std::uint64_t bad = count_mismatches(r, seed, by, stream);
  if (bad == 0) return {};
  return "data check failed: " + std::to_string(bad) + " of " + std::to_string(r.bytes / 4) + " words of " + what +
         " differ from what was sent";
}

}  // namespace gpu_bench
