// Streams: independent work spread over streams. normalize: a three-kernel normalisation of
// ten 10M-float arrays with their copies in and out, on one stream or spread over S; small_kernels and
// large_kernels: 32 busy kernels of 100 us that fill one SM or the whole GPU; kind: which stream kinds a
// default-stream operation serialises. GPU time from events forked from and joined to the origin stream.
#include "harness/measure/streams.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/measure/gate.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/rates.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/pattern.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/registry.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {
namespace {

constexpr int kArrays = 10;
constexpr std::size_t kArrayElements = 10'000'000;
constexpr int kReduceBlocks = 32 * 40;  // 40 blocks per SM of a 32-SM GPU: a grid smaller than the GPU
constexpr int kBusyKernels = 32;
constexpr unsigned long long kBusyNs = 100'000;

int sm_count() {
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, current_device()));
  return sms;
}

unsigned next_stamp() {
  return next_seed() | 1u;
}  // never 0, the value of a block that did not run

// ---- normalize ----

struct normalize_buffers {
  float* host_in;
  float* host_out;
  float* dev;       // kArrays arrays
  float* partials;  // kArrays x kReduceBlocks
  float* sums;      // kArrays
};

float normalize_input(int array, std::size_t i) {
  return static_cast<float>(array + 1) * static_cast<float>(1 + i % 7);
}

normalize_buffers normalize_acquire() {
  auto& cache = buffer_cache::instance();
  const std::size_t bytes = kArrays * kArrayElements * sizeof(float);
  normalize_buffers b{};
  b.host_in = static_cast<float*>(cache.host(mem_kind::pinned, bytes, buffer_slot::h2d).data());
  b.host_out = static_cast<float*>(cache.host(mem_kind::pinned, bytes, buffer_slot::d2h).data());
  b.dev = static_cast<float*>(cache.device(bytes, buffer_slot::h2d).data());
  b.partials =
      static_cast<float*>(cache.device((kArrays * kReduceBlocks + kArrays) * sizeof(float), buffer_slot::d2h).data());
  b.sums = b.partials + kArrays * kReduceBlocks;
  parallel_slices(kArrays * kArrayElements, kArrayElements, [&b](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i)
      b.host_in[i] = normalize_input(static_cast<int>(i / kArrayElements), i % kArrayElements);
  });
  host_fill_bytes(b.host_out, 0xff, bytes);
  return b;
}

case_plan normalize_plan(stream_set& streams, const normalize_buffers& b) {
  const int streams_n = streams.size();
  case_plan plan;
  plan.measure = [&streams, &b, streams_n] {
    auto enqueue = [&] {
      for (int a = 0; a < kArrays; ++a) {
        const cudaStream_t s = streams[a % streams_n];
        float* d = b.dev + a * kArrayElements;
        const std::size_t bytes = kArrayElements * sizeof(float);
        CUDA_CHECK(cudaMemcpyAsync(d, b.host_in + a * kArrayElements, bytes, cudaMemcpyHostToDevice, s));
        kernels::partial_reduce(d, kArrayElements, b.partials + a * kReduceBlocks, kReduceBlocks, s);
        kernels::single_thread_sum(b.partials + a * kReduceBlocks, kReduceBlocks, b.sums + a, s);
        kernels::divide_by(d, kArrayElements, b.sums + a, kReduceBlocks, s);
        CUDA_CHECK(cudaMemcpyAsync(b.host_out + a * kArrayElements, d, bytes, cudaMemcpyDeviceToHost, s));
      }
    };
    // Every stream's first work is a copy in: a small one on the first stream, behind the gate, primes
    // the copy engine they share.
    stream_set::hooks h;
    h.prime = [&](int i) {
      if (i == 0) CUDA_CHECK(cudaMemcpyAsync(b.dev, b.host_in, 64 << 10, cudaMemcpyHostToDevice, streams[i]));
    };
    return streams.measure(true, enqueue, h);
  };
  return plan;
}

// One array's check: its outputs sum to 1, and a sample of them is its input over the input's sum.
std::string normalize_check_array(const normalize_buffers& b, int a) {
  double sum_in = 0, sum_out = 0;
  for (std::size_t i = 0; i < kArrayElements; ++i) {
    sum_in += normalize_input(a, i);
    sum_out += b.host_out[a * kArrayElements + i];
  }
  if (!(std::fabs(sum_out - 1.0) < 1e-3))
    return "data check failed: array " + std::to_string(a) + " sums to " + std::to_string(sum_out) + ", not 1";
  for (std::size_t i = 0; i < kArrayElements; i += 9973) {
    const double want = normalize_input(a, i) / sum_in;
    if (!(std::fabs(b.host_out[a * kArrayElements + i] - want) <= 1e-3 * want))
      return "data check failed: array " + std::to_string(a) + " element " + std::to_string(i) + " is " +
             std::to_string(b.host_out[a * kArrayElements + i]) + ", not " + std::to_string(want);
  }
  return {};
}

std::string normalize_check(const normalize_buffers& b) {
  // One array per slice, each checked on its own thread; the first failing array's sentence is reported.
  std::vector<std::string> why(kArrays);
  parallel_slices(kArrays, 1, [&](std::size_t first, std::size_t last) {
    for (std::size_t a = first; a < last; ++a) why[a] = normalize_check_array(b, static_cast<int>(a));
  });
  for (const std::string& w : why)
    if (!w.empty()) return w;
  return {};
}

void run_normalize(benchmark::State& state, int streams_n) {
  const normalize_buffers b = buffer_cache::instance().acquire_with_retry(normalize_acquire);
  // The one-stream time, for the speedup counter.
  const double base = calibrated_once("Streams/normalize", [&] { return normalize_plan(stream_set::cached(1), b); });
  host_fill_bytes(b.host_out, 0xff, kArrays * kArrayElements * sizeof(float));
  case_plan plan = normalize_plan(stream_set::cached(streams_n), b);
  plan.verify = [&b] { return normalize_check(b); };
  const auto t = run_case(state, plan);
  if (!t) return;
  state.counters["speedup"] = base / t->own_time_s();
  case_rates rates;
  rates.bytes = 2.0 * kArrays * kArrayElements * sizeof(float);  // in and out
  rates.bytes_per_second = false;
  report_rates(state, *t, rates);
}

// ---- small and large kernels ----

case_plan busy_plan(stream_set& streams, bool large, unsigned* marks, unsigned stamp) {
  const int blocks = large ? sm_count() * 8 : 1;
  case_plan plan;
  plan.measure = [&streams, blocks, marks, stamp] {
    auto enqueue = [&] {
      for (int k = 0; k < kBusyKernels; ++k)
        kernels::busy(blocks, 256, kBusyNs, marks + static_cast<std::size_t>(k) * blocks, stamp,
                      streams[k % streams.size()]);
    };
    return streams.measure(true, enqueue);
  };
  return plan;
}

void run_busy(benchmark::State& state, bool large, int streams_n) {
  const int blocks = large ? sm_count() * 8 : 1;
  const std::size_t count = static_cast<std::size_t>(kBusyKernels) * blocks;
  device_buffer& d = buffer_cache::instance().device(count * sizeof(unsigned), buffer_slot::h2d);
  unsigned* marks = static_cast<unsigned*>(d.data());
  const double base = calibrated_once(large ? "Streams/large_kernels" : "Streams/small_kernels",
                                      [&] { return busy_plan(stream_set::cached(1), large, marks, 1); });
  const unsigned stamp = next_stamp();
  CUDA_CHECK(cudaMemset(marks, 0, count * sizeof(unsigned)));
  case_plan plan = busy_plan(stream_set::cached(streams_n), large, marks, stamp);
  plan.verify = [&] {
    std::vector<unsigned> h(count);
    CUDA_CHECK(cudaMemcpy(h.data(), marks, count * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < count; ++i)
      if (h[i] != stamp) return "data check failed: block " + std::to_string(i) + " did not run";
    return std::string();
  };
  const auto t = run_case(state, plan);
  if (!t) return;
  state.counters["speedup"] = base / t->own_time_s();
  report_rates(state, *t, case_rates{});
  state.counters["kernel_us"] = kBusyNs / 1e3;
}

// ---- stream kinds around a default-stream operation ----

enum class stream_kind { legacy_default, per_thread_default, blocking, non_blocking };
}  // namespace
template <>
inline constexpr enum_entries<stream_kind, 4> enum_names<stream_kind> = {
    {{stream_kind::legacy_default, "legacy_default"},
     {stream_kind::per_thread_default, "per_thread_default"},
     {stream_kind::blocking, "blocking"},
     {stream_kind::non_blocking, "non_blocking"}}};
namespace {

constexpr unsigned long long kKindNs = 200'000;

void run_kind(benchmark::State& state, stream_kind kind) {
  const unsigned flags = kind == stream_kind::non_blocking ? cudaStreamNonBlocking : cudaStreamDefault;
  cuda_stream a(flags), b(flags);
  cuda_event e0, ea, eb;
  device_buffer& d = buffer_cache::instance().device(3 * sizeof(unsigned), buffer_slot::h2d);
  unsigned* marks = static_cast<unsigned*>(d.data());
  // The legacy default stream is handle 0; the per-thread one has its own handle.
  const cudaStream_t between = kind == stream_kind::per_thread_default ? cudaStreamPerThread : cudaStream_t{};
  const bool has_between = kind != stream_kind::blocking;
  const unsigned stamp = next_stamp();
  auto once = [&] {
    e0.record(a.get());
    CUDA_CHECK(cudaStreamWaitEvent(b.get(), e0.get(), 0));
    kernels::busy(1, 32, kKindNs, marks, stamp, a.get());
    if (has_between) kernels::busy(1, 32, 1000, marks + 1, stamp, between);
    kernels::busy(1, 32, kKindNs, marks + 2, stamp, b.get());
    ea.record(a.get());
    eb.record(b.get());
    CUDA_CHECK(cudaDeviceSynchronize());
    return std::max(elapsed_seconds(e0, ea), elapsed_seconds(e0, eb));
  };
  case_plan plan;
  plan.measure = [&] { return sample{once()}; };
  plan.verify = [&] {
    unsigned h[3] = {};
    CUDA_CHECK(cudaMemcpy(h, marks, sizeof h, cudaMemcpyDeviceToHost));
    const bool ran = h[0] == stamp && h[2] == stamp && (!has_between || h[1] == stamp);
    return ran ? std::string() : std::string("data check failed: a kernel did not run");
  };
  plan.notes.emplace_back("ungated");
  const auto t = run_case(state, plan);
  if (!t) return;
  const double mean = t->time_s();
  const double one = kKindNs * 1e-9;
  // 0: the two kernels ran side by side; 1: one waited for the other.
  state.counters["serial_fraction"] = std::max(0.0, (mean - one) / one);
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "Streams";
  f.summary = "independent work over streams: which work overlaps, and which stream kinds serialise";
  // Each op carries its own axes: normalize its arrays, the busy kernels their count, kind nothing else.
  f.axes = {optional_axis("op", "{normalize,small_kernels,large_kernels}"), optional_axis("streams", "{S}"),
            optional_axis("arrays", "10"), optional_axis("kernels", "32"),
            optional_axis("kind", "{legacy_default,per_thread_default,blocking,non_blocking}")};
  f.help = f.name_pattern({{"op", "normalize"}, {"streams", "{1,2,4,8,10,16}"}, "arrays"}) +
           "    ten 10M-float arrays, each copied in, normalised (partial reduce, one-thread sum, divide) and\n"
           "    copied out; arrays round-robin over the streams. counters: speedup (one-stream time / this),\n"
           "    gbps (bytes in + out / GPU time), host_blocked_us.\n" +
           f.name_pattern({{"op", "{small_kernels,large_kernels}"}, {"streams", "{1,2,4,8,16}"}, "kernels"}) +
           "    32 kernels busy for 100 us each: one block (small: they can run side by side) or enough blocks\n"
           "    to fill every SM (large: they cannot). counter: speedup against one stream.\n" +
           f.name_pattern({"kind"}) +
           "    kernel X (200 us) on stream A, a 1 us kernel on a third stream, kernel Y (200 us) on stream B;\n"
           "    legacy_default: A, B blocking streams, the middle one on the legacy default stream;\n"
           "    per_thread_default: the middle one on the per-thread default stream; blocking: no middle kernel;\n"
           "    non_blocking: A, B non-blocking, the middle one on the legacy default stream.\n"
           "    counter: serial_fraction, 0 when X and Y overlap, 1 when one waited for the other.\n";
  f.headline = "real_time";
  f.unit = "us";
  f.better_is = better::lower;
  f.kind = headline_kind::time;
  f.host_link = "no";
  f.plot = "x=streams;series=op";
  f.scope = family_scope::single_gpu;
  f.smoke = "^Streams/(op:(normalize|small_kernels|large_kernels)/streams:2/|kind:)";
  f.register_cases = [] {
    // 10: one stream per array.
    for (int s : {1, 2, 4, 8, 10, 16}) {
      case_name name("Streams");
      name.add("op", "normalize").add("streams", s).add("arrays", kArrays);
      register_case(name, [s](benchmark::State& st) { run_normalize(st, s); });
    }
    for (bool large : {false, true})
      for (int s : {1, 2, 4, 8, 16}) {
        case_name name("Streams");
        name.add("op", large ? "large_kernels" : "small_kernels").add("streams", s).add("kernels", kBusyKernels);
        register_case(name, [large, s](benchmark::State& st) { run_busy(st, large, s); });
      }
    for (stream_kind k : {stream_kind::legacy_default, stream_kind::per_thread_default, stream_kind::blocking,
                          stream_kind::non_blocking}) {
      case_name name("Streams");
      name.add("kind", k);
      register_case(name, [k](benchmark::State& st) { run_kind(st, k); });
    }
  };
}};

}  // namespace
}  // namespace gpu_bench
