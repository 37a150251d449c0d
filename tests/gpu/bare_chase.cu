// The reference the Latency family is held to: a bare pointer chase with none of gpu_bench's machinery. One
// thread follows a cycle of pointers one 128-byte line apart through BYTES of memory of one kind (stride:
// address order; random: Sattolo's algorithm from the same seed as gpu_bench, so both follow the same
// cycle); each sample is a chase of LOADS and one of 2 LOADS, each between two events on one stream, and
// their difference is LOADS loads. Each launch goes on from where the last stopped. Host and managed memory
// are read with ld.global.cv, as gpu_bench does, so every load crosses the link.
// Prints one JSON object: latency_ns (median difference / LOADS) and every sample's latency_ns.
// usage: bare_chase device|pinned|registered|managed stride|random BYTES LOADS SAMPLES [DEVICE]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr,
                 "usage: bare_chase device|pinned|registered|managed stride|random BYTES LOADS SAMPLES [DEVICE]\n");
    return 2;
  }
  const std::string kind = argv[1];
  const bool random = std::strcmp(argv[2], "random") == 0;
  const std::size_t bytes = std::strtoull(argv[3], nullptr, 10);
  const unsigned long long loads = std::strtoull(argv[4], nullptr, 10);
  const int samples = std::atoi(argv[5]);
  const int device = argc > 6 ? std::atoi(argv[6]) : 0;
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
    char* host = nullptr;  // the CPU's address of host and managed memory
    char* base = nullptr;  // the GPU's
    if (kind == "device") {
      CUDA_CHECK(cudaMalloc(&base, bytes));
    } else if (kind == "pinned") {
      CUDA_CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
      CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&base), host, 0));
    } else if (kind == "registered") {
      host = static_cast<char*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
      if (host == nullptr) throw std::runtime_error("out of host memory");
      std::memset(host, 0, bytes);
      CUDA_CHECK(cudaHostRegister(host, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped));
      CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&base), host, 0));
    } else {
      CUDA_CHECK(cudaMallocManaged(&host, bytes, cudaMemAttachGlobal));
      base = host;
      cudaMemLocation cpu{};
      cpu.type = cudaMemLocationTypeHost;
      cudaMemLocation gpu{};
      gpu.type = cudaMemLocationTypeDevice;
      gpu.id = device;
      CUDA_CHECK(cudaMemAdvise(host, bytes, cudaMemAdviseSetPreferredLocation, cpu));
      CUDA_CHECK(cudaMemAdvise(host, bytes, cudaMemAdviseSetAccessedBy, gpu));
    }
    // The cycle, as GPU addresses: written by the CPU where it can reach the memory, else copied over.
    const std::vector<std::uint32_t> next = cycle(lines, random);
    if (host != nullptr) {
      for (std::size_t i = 0; i < lines; ++i)
        *reinterpret_cast<char**>(host + i * kLine) = base + static_cast<std::size_t>(next[i]) * kLine;
    } else {
      std::vector<char> image(lines * kLine, 0);
      for (std::size_t i = 0; i < lines; ++i)
        *reinterpret_cast<char**>(image.data() + i * kLine) = base + static_cast<std::size_t>(next[i]) * kLine;
      CUDA_CHECK(cudaMemcpy(base, image.data(), image.size(), cudaMemcpyHostToDevice));
    }
    void** cursor = nullptr;
    CUDA_CHECK(cudaMalloc(&cursor, sizeof(void*)));
    CUDA_CHECK(cudaMemcpy(cursor, &base, sizeof(void*), cudaMemcpyHostToDevice));
    const bool uncached = kind != "device";
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    auto timed = [&](unsigned long long n) {
      CUDA_CHECK(cudaEventRecord(a, s));
      if (uncached)
        chase<true><<<1, 1, 0, s>>>(cursor, n);
      else
        chase<false><<<1, 1, 0, s>>>(cursor, n);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaEventRecord(b, s));
      CUDA_CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      return static_cast<double>(ms) * 1e-3;
    };
    for (int w = 0; w < 3; ++w) timed(loads);  // warm-up
    std::vector<double> ns;
    for (int k = 0; k < samples; ++k) {
      const double once = timed(loads);
      const double twice = timed(2 * loads);
      ns.push_back((twice - once) / static_cast<double>(loads) * 1e9);
    }
    std::vector<double> sorted = ns;
    std::sort(sorted.begin(), sorted.end());
    const double median =
        sorted.size() % 2 ? sorted[sorted.size() / 2] : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
    std::printf(
        "{\"mem\": \"%s\", \"pattern\": \"%s\", \"bytes\": %zu, \"loads\": %llu, \"latency_ns\": %.4f, \"samples_ns\": "
        "[",
        kind.c_str(), random ? "random" : "stride", bytes, loads, median);
    for (std::size_t k = 0; k < ns.size(); ++k) std::printf("%s%.4f", k ? ", " : "", ns[k]);
    std::printf("]}\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bare_chase: %s\n", e.what());
    return 1;
  }
  return 0;
}
