// BareChase: the bare pointer chase the Latency family is held to, as a family of a test build
// (gpu_bench_parity, tests/CMakeLists.txt), so that it runs in the same process as the Latency cases, its
// repetitions interleaved with theirs (--benchmark_enable_random_interleaving): a load on the host link that
// comes and goes then falls on both alike. None of gpu_bench's measurement is used: its own memory, stream,
// events and sampling.
//
// One thread follows a cycle of pointers one 128-byte line apart through BYTES of memory of one kind
// (stride: address order; random: Sattolo's algorithm from the same seed as gpu_bench, so both follow the
// same cycle); peer memory is another GPU's, cudaMalloc'd there and mapped with peer access. As gpu_bench does at
// every run of a case: the cycle is written by a kernel as whole lines (the pointer, then zeros) through the GPU's
// addresses and the chase starts again at line 0; host lines are then flushed from the CPU's caches. So a footprint
// a cache holds starts each repetition where the write left it, as the Latency case's does, whatever other cases
// passed through the caches since. Each repetition walks WARM loads (gpu_bench's warm_loads), takes untimed samples
// for a millisecond and then kSamples timed ones: a chase of LOADS and one of 2 LOADS, each between two events on one
// stream, ungated, their difference LOADS loads. Each launch goes on from where the last stopped, and every repetition
// checks that the chase stands where its loads lead. Host, managed and peer memory are read with ld.global.cv. Its
// figure is the median sample; counter latency_ns (that median / LOADS).
//
// LOADS and WARM are the Latency case's own, given in the environment, as gpu_bench chose them:
// GPU_BENCH_BARE_CHASE="mem/pattern/bytes=LOADS,WARM;..." (tests/gpu/latency_check.py sets it), mem being peer:J for
// GPU J's memory; a case without them fails saying so. The peer cases are those the environment names: gpu_bench
// chooses which GPUs a Latency case chases through.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/registry.hpp"

namespace gpu_bench {
namespace {

constexpr std::size_t kLine = 128;
constexpr std::uint64_t kSeed = 0x6c6174656e6379ull;  // gpu_bench's kChaseSeed

template <bool Uncached>
__global__ void chase(void** cursor, unsigned long long loads) {
  void* p = *cursor;
  for (unsigned long long i = 0; i < loads; ++i) {
    if constexpr (Uncached)
      p = reinterpret_cast<void*>(__ldcv(reinterpret_cast<const unsigned long long*>(p)));
    else
      p = *static_cast<void* const*>(p);
  }
  *cursor = p;
}

__global__ void write_lines(char* base, const std::uint32_t* next, std::size_t lines) {
  const std::size_t words = kLine / sizeof(unsigned long long);
  for (std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; w < lines * words;
       w += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    reinterpret_cast<unsigned long long*>(base)[w] =
        w % words == 0 ? reinterpret_cast<unsigned long long>(base + static_cast<std::size_t>(next[w / words]) * kLine)
                       : 0ull;
}

std::vector<std::uint32_t> cycle(std::size_t n, bool random) {
  std::vector<std::uint32_t> next(n);
  for (std::size_t i = 0; i < n; ++i) next[i] = static_cast<std::uint32_t>(random ? i : (i + 1) % n);
  if (!random) return next;
  std::uint64_t state = kSeed;
  for (std::size_t i = n - 1; i > 0; --i) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    std::swap(next[i], next[((z >> 32) * i) >> 32]);
  }
  return next;
}

void flush_lines(const char* host, std::size_t lines) {
#if defined(__x86_64__) || defined(__i386__)
  for (std::size_t i = 0; i < lines; ++i) _mm_clflush(host + i * kLine);
  _mm_mfence();
#elif defined(__aarch64__)
  for (std::size_t i = 0; i < lines; ++i) asm volatile("dc civac, %0" ::"r"(host + i * kLine) : "memory");
  asm volatile("dsb sy" ::: "memory");
#else
  (void)host;
  (void)lines;
#endif
}

constexpr int kSamples = 30;

struct chase_setup {
  std::string kind;
  char* host = nullptr;  // the CPU's address of host and managed memory
  char* base = nullptr;  // the GPU's
  std::vector<std::uint32_t> next;
  std::uint32_t* next_dev = nullptr;  // the cycle's table, on the GPU, for the kernel that writes it
  void** cursor = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t a = nullptr, b = nullptr;
  unsigned long long walked = 0;
};

// The case's loads and warm-up loads, from GPU_BENCH_BARE_CHASE.
std::pair<unsigned long long, unsigned long long> loads_given(const std::string& key) {
  const char* env = std::getenv("GPU_BENCH_BARE_CHASE");
  std::stringstream all(env ? env : "");
  for (std::string item; std::getline(all, item, ';');) {
    const auto eq = item.find('=');
    const auto comma = item.find(',', eq);
    if (eq == std::string::npos || comma == std::string::npos || item.substr(0, eq) != key) continue;
    return {std::strtoull(item.c_str() + eq + 1, nullptr, 10), std::strtoull(item.c_str() + comma + 1, nullptr, 10)};
  }
  throw std::runtime_error("no loads given for " + key + " in GPU_BENCH_BARE_CHASE (mem/pattern/bytes=LOADS,WARM;...)");
}

// A chase of `n` loads from where the last one stopped, on the case's stream.
void launch(chase_setup& s, bool uncached, unsigned long long n) {
  if (uncached)
    chase<true><<<1, 1, 0, s.stream>>>(s.cursor, n);
  else
    chase<false><<<1, 1, 0, s.stream>>>(s.cursor, n);
  CUDA_CHECK(cudaGetLastError());
  s.walked += n;
}

// The peer GPU of a kind "peer:J", else -1.
int peer_of(const std::string& kind) {
  return kind.rfind("peer:", 0) == 0 ? std::atoi(kind.c_str() + 5) : -1;
}

// The cycle written into the footprint and the chase back at line 0, on the chase's stream (which does not wait
// for the legacy one), as a Latency case does at each run.
void write_cycle(chase_setup& s) {
  const std::size_t lines = s.next.size();
  write_lines<<<1024, 256, 0, s.stream>>>(s.base, s.next_dev, lines);
  CUDA_CHECK(cudaGetLastError());
  if (s.kind == "managed") {
    cudaMemLocation cpu{};
    cpu.type = cudaMemLocationTypeHost;
    CUDA_CHECK(cudaMemPrefetchAsync(s.base, lines * kLine, cpu, 0, s.stream));
  }
  CUDA_CHECK(cudaMemcpyAsync(s.cursor, &s.base, sizeof(void*), cudaMemcpyHostToDevice, s.stream));
  CUDA_CHECK(cudaStreamSynchronize(s.stream));
  s.walked = 0;
  if (s.host != nullptr) flush_lines(s.host, lines);
}

// Allocated once per case and kept for the process, as the cases' repetitions share it; each run writes the
// cycle again (write_cycle).
chase_setup& setup_for(const std::string& kind, bool random, std::size_t bytes) {
  static auto& kept = *new std::map<std::string, chase_setup>();  // never freed: see latency.cpp
  const std::string key = kind + (random ? "/random/" : "/stride/") + std::to_string(bytes);
  auto [it, fresh] = kept.try_emplace(key);
  chase_setup& s = it->second;
  if (!fresh) return s;
  s.kind = kind;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreate(&s.a));
  CUDA_CHECK(cudaEventCreate(&s.b));
  // Every page touched on the host first, as gpu_bench's host buffers are.
  if (kind == "device") {
    CUDA_CHECK(cudaMalloc(&s.base, bytes));
  } else if (const int peer = peer_of(kind); peer >= 0) {
    CUDA_CHECK(cudaSetDevice(peer));
    CUDA_CHECK(cudaMalloc(&s.base, bytes));
    (void)enable_peer_access(device, peer);  // `device` current again; left on: nothing here turns it off
  } else if (kind == "pinned") {
    CUDA_CHECK(cudaHostAlloc(&s.host, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&s.base), s.host, 0));
    std::memset(s.host, 0, bytes);
  } else if (kind == "registered") {
    s.host = static_cast<char*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
    if (s.host == nullptr) throw std::runtime_error("out of host memory");
    std::memset(s.host, 0, bytes);
    CUDA_CHECK(cudaHostRegister(s.host, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped));
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&s.base), s.host, 0));
  } else {
    CUDA_CHECK(cudaMallocManaged(&s.host, bytes, cudaMemAttachGlobal));
    s.base = s.host;
    std::memset(s.host, 0, bytes);
    cudaMemLocation cpu{};
    cpu.type = cudaMemLocationTypeHost;
    cudaMemLocation gpu{};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = device;
    CUDA_CHECK(cudaMemAdvise(s.host, bytes, cudaMemAdviseSetPreferredLocation, cpu));
    CUDA_CHECK(cudaMemAdvise(s.host, bytes, cudaMemAdviseSetAccessedBy, gpu));
  }
  const std::size_t lines = bytes / kLine;
  s.next = cycle(lines, random);
  CUDA_CHECK(cudaMalloc(&s.next_dev, lines * sizeof(std::uint32_t)));
  CUDA_CHECK(
      cudaMemcpyAsync(s.next_dev, s.next.data(), lines * sizeof(std::uint32_t), cudaMemcpyHostToDevice, s.stream));
  CUDA_CHECK(cudaMalloc(&s.cursor, sizeof(void*)));
  CUDA_CHECK(cudaStreamSynchronize(s.stream));
  return s;
}

void run_bare_chase(benchmark::State& state, const std::string& kind, bool random, std::size_t bytes) {
  const std::string key = kind + (random ? "/random/" : "/stride/") + std::to_string(bytes);
  const auto given = loads_given(key);
  const unsigned long long loads = given.first, warm = given.second;
  chase_setup& s = setup_for(kind, random, bytes);
  write_cycle(s);
  const bool uncached = kind != "device";  // host, managed and peer memory
  auto timed = [&](unsigned long long n) {
    CUDA_CHECK(cudaEventRecord(s.a, s.stream));
    launch(s, uncached, n);
    CUDA_CHECK(cudaEventRecord(s.b, s.stream));
    CUDA_CHECK(cudaEventSynchronize(s.b));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, s.a, s.b));
    return static_cast<double>(ms) * 1e-3;
  };
  auto sample_s = [&] { return timed(2 * loads) - timed(loads); };
  std::vector<double> t;
  for (auto _ : state) {
    // The warm-up walk, every repetition as every Latency case walks it: between two repetitions other
    // cases' footprints pass through the caches.
    if (warm > 0) {
      launch(s, uncached, warm);
      CUDA_CHECK(cudaStreamSynchronize(s.stream));
    }
    // Untimed samples for at least a millisecond, as gpu_bench's loop warms up.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    for (int i = 0; i < 1000 && (i == 0 || std::chrono::steady_clock::now() < until); ++i) (void)sample_s();
    t.clear();
    for (int k = 0; k < kSamples; ++k) t.push_back(sample_s());
    std::sort(t.begin(), t.end());
    state.SetIterationTime(std::max(t[t.size() / 2], 1e-12));
  }
  // Where the chase stands: the line its loads lead to along the cycle, or the samples timed another walk.
  void* at = nullptr;
  CUDA_CHECK(cudaMemcpyAsync(&at, s.cursor, sizeof(void*), cudaMemcpyDeviceToHost, s.stream));
  CUDA_CHECK(cudaStreamSynchronize(s.stream));
  std::size_t line = 0;
  for (unsigned long long k = s.walked % s.next.size(); k > 0; --k) line = s.next[line];
  if (static_cast<char*>(at) != s.base + line * kLine)
    return fail_case(state, "the bare chase does not stand where its loads lead");
  state.counters["latency_ns"] = t[t.size() / 2] / static_cast<double>(loads) * 1e9;
  state.counters["loads"] = static_cast<double>(loads);
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "BareChase";
  f.summary = "a test family: a bare pointer chase, the Latency cases' reference";
  f.axes = {{"mem", "{device,pinned,registered,managed,peer}"},
            optional_axis("peer", "{j}"),
            {"pattern", "{stride,random}"},
            {"bytes", "{N}"}};
  f.help = f.name_pattern() + "    counters  latency_ns (the median difference / LOADS), loads.\n";
  f.headline = "latency_ns";
  f.unit = "ns";
  f.better_is = better::lower;
  f.kind = headline_kind::time;
  f.host_link = "mem:pinned|mem:registered|mem:managed";
  f.plot = "x=bytes;series=mem,pattern";
  f.scope = family_scope::single_gpu;
  f.smoke = "^BareChase/mem:device/";
  f.buffers_of_size = 1;
  f.register_cases = [] {
    // Latency's default footprints.
    for (const std::string kind : {"device", "pinned", "registered", "managed"})
      for (const bool random : {false, true})
        for (const std::size_t n : kind == "device" ? std::vector<std::size_t>{16u << 10, 1u << 20, 32u << 20, 1u << 30}
                                                    : std::vector<std::size_t>{1u << 20, 256u << 20}) {
          case_name name("BareChase");
          name.add("mem", kind)
              .add("pattern", random ? "random" : "stride")
              .add("bytes", static_cast<std::uint64_t>(n));
          register_case(name, [kind, random, n](benchmark::State& st) { run_bare_chase(st, kind, random, n); });
        }
    // Another GPU's memory: the cases GPU_BENCH_BARE_CHASE names, as the Latency cases it was written from.
    const char* env = std::getenv("GPU_BENCH_BARE_CHASE");
    std::stringstream all(env ? env : "");
    for (std::string item; std::getline(all, item, ';');) {
      const std::string key = item.substr(0, item.find('='));
      std::stringstream parts(key);
      std::string kind, pattern, bytes;
      std::getline(parts, kind, '/');
      std::getline(parts, pattern, '/');
      std::getline(parts, bytes, '/');
      const int peer = peer_of(kind);
      if (peer < 0 || peer >= visible_gpu_count() || (pattern != "stride" && pattern != "random")) continue;
      const bool random = pattern == "random";
      const std::size_t n = std::strtoull(bytes.c_str(), nullptr, 10);
      case_name name("BareChase");
      name.add("mem", "peer").add("peer", peer).add("pattern", pattern).add("bytes", static_cast<std::uint64_t>(n));
      register_case(name, [kind, random, n](benchmark::State& st) { run_bare_chase(st, kind, random, n); });
    }
  };
}};

}  // namespace
}  // namespace gpu_bench
