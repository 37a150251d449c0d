#include "benchmarks/overlap/pipeline.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "harness/cuda/device.hpp"
#include "harness/memory/pattern.hpp"
#include "harness/run/options.hpp"

namespace gpu_bench {
namespace {

constexpr std::size_t kMinFloatsPerThread = std::size_t{4} << 20;  // below 16 MiB a thread costs more

// Input values that are not all alike and not zero, small enough that adding `work` stays exact-ish.
float input_value(std::size_t i) {
  return static_cast<float>(i % 1024) * 0.25f + 0.5f;
}

}  // namespace

overlap_buffers acquire(mem_kind mem, std::size_t bytes) {
  auto& cache = buffer_cache::instance();
  return cache.acquire_with_retry([&] {
    return overlap_buffers{&cache.host(mem, bytes, buffer_slot::h2d), &cache.host(mem, bytes, buffer_slot::d2h),
                           &cache.device(bytes, buffer_slot::h2d), &cache.device(bytes, buffer_slot::d2h), bytes};
  });
}

void poison_output(const overlap_buffers& b) {
  host_fill_bytes(b.out->data(), 0xff, b.bytes);
}

void fill_input(const overlap_buffers& b) {
  float* in = b.in_f();
  parallel_slices(b.bytes / sizeof(float), kMinFloatsPerThread, [in](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) in[i] = input_value(i);
  });
  poison_output(b);
}

double max_error(const overlap_buffers& b, int work, cudaStream_t s) {
  const std::size_t n = b.bytes / sizeof(float);
  CUDA_CHECK(cudaStreamSynchronize(s));
  if (b.in->device_ptr() && b.out->device_ptr()) {
    const scratch_word bits = device_scratch_word();
    *static_cast<volatile unsigned*>(bits.host) = 0;
    kernels::max_add_error(static_cast<const float*>(b.in->device_ptr()),
                           static_cast<const float*>(b.out->device_ptr()), n, static_cast<float>(work),
                           static_cast<unsigned*>(bits.dev), s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    float worst = 0;
    const unsigned v = *static_cast<volatile unsigned*>(bits.host);
    std::memcpy(&worst, &v, sizeof worst);
    return worst;
  }
  const float* in = b.in_f();
  const float* out = b.out_f();
  std::mutex m;
  double worst = 0;
  parallel_slices(n, kMinFloatsPerThread, [&](std::size_t first, std::size_t last) {
    double mine = 0;
    for (std::size_t i = first; i < last; ++i) {
      const double err = std::fabs(static_cast<double>(out[i]) - in[i] - work);
      if (!(err <= mine)) mine = std::isnan(err) ? INFINITY : err;
    }
    const std::lock_guard<std::mutex> lock(m);
    worst = std::max(worst, mine);
  });
  return worst;
}

int chunks_of(const overlap_case& c) {
  return c.sched == schedule::serial ? 1 : c.streams;
}

prime_buffers priming_buffers(mem_kind mem, std::size_t bytes) {
  auto& cache = buffer_cache::instance();
  const std::size_t n = std::min<std::size_t>(bytes, 64 << 10);
  return {cache.host(mem, n, buffer_slot::h2d_prime).data(), cache.device(n, buffer_slot::h2d_prime).data(), n};
}

sampling_rules calibration_rules(int min_samples) {
  sampling_rules r = rules_from_options();
  r.min_samples = min_samples;
  r.budget_s = 0.03;
  r.min_time_s = 0;
  return r;
}

double serial_baseline_s(const overlap_case& c, const overlap_buffers& b, const prime_buffers& pb) {
  static std::map<std::tuple<int, mem_kind, std::size_t, int>, double> measured;
  const auto key = std::make_tuple(current_device(), c.mem, b.bytes, c.work);
  if (const auto it = measured.find(key); it != measured.end()) return it->second;
  overlap_case serial = c;
  serial.sched = schedule::serial;
  serial.streams = 1;
  serial.sync = sync_point::end;
  pipeline_run baseline(serial, b, pb);
  return measured[key] = calibrate(baseline.plan(), calibration_rules()).time_s();
}

}  // namespace gpu_bench
