// The reference the Latency family is held to: a bare pointer chase with none of gpu_bench's machinery. One
// thread follows a cycle of pointers one 128-byte line apart through BYTES of fresh memory of one kind
// (stride: address order; random: Sattolo's algorithm from the same seed as gpu_bench, so both follow the
// same cycle). As gpu_bench does: the cycle is written by a kernel as whole lines (the pointer, then zeros)
// through the GPU's addresses; host lines are then flushed from the CPU's caches; the chase walks WARM loads
// (gpu_bench's warm_loads) and then untimed samples for a millisecond; each sample is a chase of LOADS and
// one of 2 LOADS, each between two events on one stream, ungated, and their difference is LOADS loads. Each
// launch goes on from where the last stopped. Host and managed memory are read with ld.global.cv.
// Prints one JSON object: latency_ns (median difference / LOADS), the fastest and slowest sample, every
// sample's latency_ns, and whether the chase ended where its loads lead.
// usage: bare_chase device|pinned|registered|managed stride|random BYTES LOADS WARM SAMPLES [DEVICE]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "fixtures/cuda/check.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr,
                 "usage: bare_chase device|pinned|registered|managed stride|random BYTES LOADS WARM SAMPLES "
                 "[DEVICE]\n");
    return 2;
  }
  const std::string kind = argv[1];
  const bool random = std::strcmp(argv[2], "random") == 0;
  const std::size_t bytes = std::strtoull(argv[3], nullptr, 10);
  const unsigned long long loads = std::strtoull(argv[4], nullptr, 10);
  const unsigned long long warm = std::strtoull(argv[5], nullptr, 10);
  const int samples = std::atoi(argv[6]);
  const int device = argc > 7 ? std::atoi(argv[7]) : 0;
  if (kind != "device" && kind != "pinned" && kind != "registered" && kind != "managed") {
    std::fprintf(stderr, "bare_chase: unknown memory kind '%s'\n", kind.c_str());
    return 2;
  }
  const std::size_t lines = bytes / kLine;
  if (lines == 0 || loads == 0 || samples < 1) {
    std::fprintf(stderr, "bare_chase: BYTES must hold a line of %zu, LOADS and SAMPLES be positive\n", kLine);
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "bare_chase: no CUDA GPU is visible\n");
    return 77;
  }
  try {
    CUDA_CHECK(cudaSetDevice(device));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    char* host = nullptr;  // the CPU's address of host and managed memory
    char* base = nullptr;  // the GPU's
    // Every page touched on the host first, as gpu_bench's host buffers are.
    if (kind == "device") {
      CUDA_CHECK(cudaMalloc(&base, bytes));
    } else if (kind == "pinned") {
      CUDA_CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
      CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&base), host, 0));
      std::memset(host, 0, bytes);
    } else if (kind == "registered") {
      host = static_cast<char*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
      if (host == nullptr) throw std::runtime_error("out of host memory");
      std::memset(host, 0, bytes);
      CUDA_CHECK(cudaHostRegister(host, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped));
      CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&base), host, 0));
    } else {
      CUDA_CHECK(cudaMallocManaged(&host, bytes, cudaMemAttachGlobal));
      base = host;
      std::memset(host, 0, bytes);
      cudaMemLocation cpu{};
      cpu.type = cudaMemLocationTypeHost;
      cudaMemLocation gpu{};
      gpu.type = cudaMemLocationTypeDevice;
      gpu.id = device;
      CUDA_CHECK(cudaMemAdvise(host, bytes, cudaMemAdviseSetPreferredLocation, cpu));
      CUDA_CHECK(cudaMemAdvise(host, bytes, cudaMemAdviseSetAccessedBy, gpu));
    }
    // The cycle, as GPU addresses, written on the chase's stream (which does not wait for the legacy one).
    const std::vector<std::uint32_t> next = cycle(lines, random);
    std::uint32_t* next_dev = nullptr;
    CUDA_CHECK(cudaMalloc(&next_dev, lines * sizeof(std::uint32_t)));
    CUDA_CHECK(cudaMemcpyAsync(next_dev, next.data(), lines * sizeof(std::uint32_t), cudaMemcpyHostToDevice, s));
    write_lines<<<1024, 256, 0, s>>>(base, next_dev, lines);
    CUDA_CHECK(cudaGetLastError());
    if (kind == "managed") {
      cudaMemLocation cpu{};
      cpu.type = cudaMemLocationTypeHost;
      CUDA_CHECK(cudaMemPrefetchAsync(base, lines * kLine, cpu, 0, s));
    }
    void** cursor = nullptr;
    CUDA_CHECK(cudaMalloc(&cursor, sizeof(void*)));
    CUDA_CHECK(cudaMemcpyAsync(cursor, &base, sizeof(void*), cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaFree(next_dev));
    if (host != nullptr) flush_lines(host, lines);
    const bool uncached = kind != "device";
    unsigned long long walked = 0;
    auto launch = [&](unsigned long long n) {
      if (uncached)
        chase<true><<<1, 1, 0, s>>>(cursor, n);
      else
        chase<false><<<1, 1, 0, s>>>(cursor, n);
      CUDA_CHECK(cudaGetLastError());
      walked += n;
    };
    if (warm > 0) {
      launch(warm);
      CUDA_CHECK(cudaStreamSynchronize(s));
    }
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    auto timed = [&](unsigned long long n) {
      CUDA_CHECK(cudaEventRecord(a, s));
      launch(n);
      CUDA_CHECK(cudaEventRecord(b, s));
      CUDA_CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      return static_cast<double>(ms) * 1e-3;
    };
    auto sample_ns = [&] {
      const double once = timed(loads);
      const double twice = timed(2 * loads);
      return (twice - once) / static_cast<double>(loads) * 1e9;
    };
    // Untimed samples for at least a millisecond, as gpu_bench's loop warms up.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    for (int i = 0; i < 1000 && (i == 0 || std::chrono::steady_clock::now() < until); ++i) (void)sample_ns();
    std::vector<double> ns;
    for (int k = 0; k < samples; ++k) ns.push_back(sample_ns());
    // Where the chase stands: the line its loads lead to along the cycle, or the samples timed another walk.
    void* at = nullptr;
    CUDA_CHECK(cudaMemcpyAsync(&at, cursor, sizeof(void*), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::size_t line = 0;
    for (unsigned long long k = walked % lines; k > 0; --k) line = next[line];
    const bool where_loads_lead = static_cast<char*>(at) == base + line * kLine;
    std::vector<double> sorted = ns;
    std::sort(sorted.begin(), sorted.end());
    const double median =
        sorted.size() % 2 ? sorted[sorted.size() / 2] : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
    std::printf(
        "{\"mem\": \"%s\", \"pattern\": \"%s\", \"bytes\": %zu, \"loads\": %llu, \"warm_loads\": %llu, "
        "\"latency_ns\": %.4f, \"min_ns\": %.4f, \"max_ns\": %.4f, \"chase_checked\": %s, \"samples_ns\": [",
        kind.c_str(), random ? "random" : "stride", bytes, loads, warm, median, sorted.front(), sorted.back(),
        where_loads_lead ? "true" : "false");
    for (std::size_t k = 0; k < ns.size(); ++k) std::printf("%s%.4f", k ? ", " : "", ns[k]);
    std::printf("]}\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bare_chase: %s\n", e.what());
    return 1;
  }
  return 0;
}
