// The reference the Transfer family is held to: a bare event-timed cudaMemcpyAsync loop on pinned memory,
// with none of gpu_bench's machinery. Prints one JSON object:
//   per_copy_*  : an event pair around each copy, synchronised each time (latency of one copy, including
//                 whatever gap the host leaves between recording the start event and issuing the copy)
//   batched_*   : one event pair around `iterations` back-to-back copies (per-copy throughput)
// usage: bare_memcpy h2d|d2h BYTES ITERATIONS [DEVICE]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fixtures/cuda_check.hpp"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: bare_memcpy h2d|d2h BYTES ITERATIONS [DEVICE]\n");
    return 2;
  }
  const bool h2d = std::strcmp(argv[1], "h2d") == 0;
  const std::size_t bytes = std::strtoull(argv[2], nullptr, 10);
  const int iters = std::atoi(argv[3]);
  const int device = argc > 4 ? std::atoi(argv[4]) : 0;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "bare_memcpy: no CUDA GPU is visible\n");
    return 77;
  }
  try {
    CUDA_CHECK(cudaSetDevice(device));
    void *host = nullptr, *dev = nullptr;
    CUDA_CHECK(cudaMallocHost(&host, bytes));
    CUDA_CHECK(cudaMalloc(&dev, bytes));
    std::memset(host, 1, bytes);
    CUDA_CHECK(cudaMemset(dev, 2, bytes));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    void* dst = h2d ? dev : host;
    const void* src = h2d ? host : dev;
    const cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    for (int i = 0; i < 5; ++i) CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
    CUDA_CHECK(cudaStreamSynchronize(s));

    std::vector<double> us(static_cast<std::size_t>(iters));
    for (int i = 0; i < iters; ++i) {
      CUDA_CHECK(cudaEventRecord(a, s));
      CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
      CUDA_CHECK(cudaEventRecord(b, s));
      CUDA_CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      us[static_cast<std::size_t>(i)] = ms * 1e3;
    }
    double sum = 0;
    for (double v : us) sum += v;
    const double mean = sum / iters;
    std::sort(us.begin(), us.end());
    const double median = us[us.size() / 2];

    CUDA_CHECK(cudaEventRecord(a, s));
    for (int i = 0; i < iters; ++i) CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
    CUDA_CHECK(cudaEventRecord(b, s));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    const double batched = ms * 1e3 / iters;

    const double gb = static_cast<double>(bytes) / 1e9;
    std::printf(
        "{\"dir\": \"%s\", \"bytes\": %zu, \"iterations\": %d, \"per_copy_mean_us\": %.4f, \"per_copy_median_us\": "
        "%.4f, \"per_copy_gbps\": %.4f, \"batched_us\": %.4f, \"batched_gbps\": %.4f}\n",
        argv[1], bytes, iters, mean, median, gb / (mean * 1e-6), batched, gb / (batched * 1e-6));
    CUDA_CHECK(cudaFreeHost(host));
    CUDA_CHECK(cudaFree(dev));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bare_memcpy: %s\n", e.what());
    return 1;
  }
  return 0;
}
