// BareCopy: the bare reference the pinned Transfer cases are held to, as a family of a test build
// (gpu_bench_parity, tests/CMakeLists.txt), so that it runs in the same process as the cases it judges,
// its repetitions interleaved with theirs (--benchmark_enable_random_interleaving): a load on the host link
// that comes and goes then falls on both sides alike, and the process (its context, where its buffers
// landed), the unit of run-to-run variance, is the same for both.
//
// None of gpu_bench's measurement is used: its own pinned and device buffers (cudaMallocHost, cudaMalloc),
// its own stream and events, no gate, no timed loop. One repetition queues kPairs event pairs, each around
// one cudaMemcpyAsync, behind a kernel that holds the stream, so no host gap falls inside a pair: the time
// of one copy between two events, which is what a gated Transfer case measures. Its figure is the pairs'
// median; counters gbps (bytes / that time) and us.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "harness/cuda/check.hpp"
#include "harness/run/registry.hpp"
#include "tests/gpu/hold_kernel.cuh"

namespace gpu_bench {
namespace {

constexpr int kPairs = 16;

struct bare_buffers {
  void* host = nullptr;
  void* dev = nullptr;
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> events;  // start and end of each pair
};

// Allocated once per size and kept for the process: pinning 256 MiB per repetition would dominate it.
bare_buffers& buffers_for(std::uint64_t bytes) {
  static auto& kept = *new std::map<std::uint64_t, bare_buffers>();  // never freed: see latency.cpp
  auto [it, fresh] = kept.try_emplace(bytes);
  bare_buffers& b = it->second;
  if (fresh) {
    CUDA_CHECK(cudaMallocHost(&b.host, bytes));
    CUDA_CHECK(cudaMalloc(&b.dev, bytes));
    std::memset(b.host, 1, bytes);
    CUDA_CHECK(cudaMemset(b.dev, 2, bytes));
    CUDA_CHECK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
    b.events.resize(2 * kPairs);
    for (auto& e : b.events) CUDA_CHECK(cudaEventCreate(&e));
  }
  return b;
}

double median_pair_s(bool h2d, std::uint64_t bytes) {
  bare_buffers& b = buffers_for(bytes);
  void* dst = h2d ? b.dev : b.host;
  const void* src = h2d ? b.host : b.dev;
  const cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  // Long enough for the host to queue every pair before the GPU reaches the first.
  hold<<<1, 1, 0, b.stream>>>(2000ull * 1000);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, b.stream));  // the engine's switch after the kernel, untimed
  for (int i = 0; i < kPairs; ++i) {
    CUDA_CHECK(cudaEventRecord(b.events[2 * static_cast<std::size_t>(i)], b.stream));
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, b.stream));
    CUDA_CHECK(cudaEventRecord(b.events[2 * static_cast<std::size_t>(i) + 1], b.stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(b.stream));
  std::vector<double> s(kPairs);
  for (int i = 0; i < kPairs; ++i) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, b.events[2 * static_cast<std::size_t>(i)],
                                    b.events[2 * static_cast<std::size_t>(i) + 1]));
    s[static_cast<std::size_t>(i)] = ms * 1e-3;
  }
  std::nth_element(s.begin(), s.begin() + kPairs / 2, s.end());
  return s[kPairs / 2];
}

void run_bare_copy(benchmark::State& state, bool h2d, std::uint64_t bytes) {
  double t = 0;
  for (auto _ : state) {
    t = median_pair_s(h2d, bytes);
    state.SetIterationTime(t);
  }
  state.counters["gbps"] = static_cast<double>(bytes) / t / 1e9;
  state.counters["us"] = t * 1e6;
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "BareCopy";
  f.summary = "a test family: a bare event-timed cudaMemcpyAsync of pinned memory, the Transfer cases' reference";
  f.axes = {{"dir", "{h2d,d2h}"}, {"bytes", "{4,268435456}"}};
  f.help = f.name_pattern() + "    counters  gbps (N / the median pair's time, GB = 1e9 B), us.\n";
  f.headline = "gbps";
  f.unit = "GB/s";
  f.better_is = better::higher;
  f.kind = headline_kind::rate;
  f.host_link = "yes";
  f.plot = "x=bytes;series=dir";
  f.scope = family_scope::single_gpu;
  f.smoke = "^BareCopy/";
  f.register_cases = [] {
    for (const bool h2d : {true, false})
      for (const std::uint64_t n : {std::uint64_t{4}, std::uint64_t{256} << 20}) {
        case_name name("BareCopy");
        name.add("dir", h2d ? "h2d" : "d2h").add("bytes", n);
        register_case(name, [h2d, n](benchmark::State& st) { run_bare_copy(st, h2d, n); });
      }
  };
}};

}  // namespace
}  // namespace gpu_bench
