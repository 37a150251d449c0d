// The reference the Transfer family is held to: a bare event-timed cudaMemcpyAsync loop on host memory of
// one kind (pinned by default; write_combined, registered, pageable), with none of gpu_bench's machinery.
// Prints one JSON object:
//   per_copy_*  : an event pair around each copy, synchronised each time (latency of one copy, including
//                 whatever gap the host leaves between recording the start event and issuing the copy)
//   queued_*    : an event pair around each copy, 8 pairs at a time queued behind a kernel that holds the
//                 stream for 1 ms, so no host gap falls inside a pair (the latency of one copy between two
//                 events: what a gated gpu_bench case measures)
//   deep_*      : the same with 2000 pairs behind a 50 ms hold (the GPU then also fetches a long command
//                 queue while it works)
//   batched_*   : one event pair around `iterations` back-to-back copies (per-copy throughput)
// Pageable copies wait for the GPU inside the call, so only per_copy and batched are measured for them.
// usage: bare_memcpy h2d|d2h BYTES ITERATIONS [DEVICE] [KIND]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/cuda/check.hpp"
#include "tests/gpu/hold_kernel.cuh"
#include "tests/gpu/skip_without_gpu.hpp"

namespace {

struct stats {
  double mean, median;
};
stats summarize(std::vector<double> us) {
  double sum = 0;
  for (double v : us) sum += v;
  std::sort(us.begin(), us.end());
  return {sum / static_cast<double>(us.size()), us[us.size() / 2]};
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: bare_memcpy h2d|d2h BYTES ITERATIONS [DEVICE] [pinned|write_combined|registered|pageable]\n");
    return 2;
  }
  const bool h2d = std::strcmp(argv[1], "h2d") == 0;
  const std::size_t bytes = std::strtoull(argv[2], nullptr, 10);
  const int iters = std::atoi(argv[3]);
  const int device = argc > 4 ? std::atoi(argv[4]) : 0;
  const std::string kind_name = argc > 5 ? argv[5] : "pinned";
  if (kind_name != "pinned" && kind_name != "write_combined" && kind_name != "registered" && kind_name != "pageable") {
    std::fprintf(stderr, "bare_memcpy: unknown memory kind '%s'\n", kind_name.c_str());
    return 2;
  }
  const bool pageable = kind_name == "pageable";
  if (!gpu_bench::test::gpu_visible("bare_memcpy")) return gpu_bench::test::kSkipCode;
  try {
    CUDA_CHECK(cudaSetDevice(device));
    void *host = nullptr, *dev = nullptr;
    if (kind_name == "pinned") {
      CUDA_CHECK(cudaMallocHost(&host, bytes));
    } else if (kind_name == "write_combined") {
      CUDA_CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocWriteCombined));
    } else {
      host = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
      if (host == nullptr) throw std::runtime_error("out of host memory");
      if (kind_name == "registered") CUDA_CHECK(cudaHostRegister(host, bytes, cudaHostRegisterDefault));
    }
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
    const stats per_copy = summarize(us);

    // Queued: batches of event pairs behind a hold, so the host is ahead of the GPU.
    auto queued_pairs = [&](int depth, unsigned long long hold_ns) {
      const int batch = std::min(iters, depth);
      std::vector<cudaEvent_t> ev(2 * static_cast<std::size_t>(batch));
      for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
      std::vector<double> queued;
      for (int done = 0; done < iters; done += batch) {
        hold<<<1, 1, 0, s>>>(hold_ns);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));  // the engine switch after the kernel, untimed
        for (int i = 0; i < batch; ++i) {
          CUDA_CHECK(cudaEventRecord(ev[2 * static_cast<std::size_t>(i)], s));
          CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
          CUDA_CHECK(cudaEventRecord(ev[2 * static_cast<std::size_t>(i) + 1], s));
        }
        CUDA_CHECK(cudaStreamSynchronize(s));
        for (int i = 0; i < batch; ++i) {
          float ms = 0;
          CUDA_CHECK(
              cudaEventElapsedTime(&ms, ev[2 * static_cast<std::size_t>(i)], ev[2 * static_cast<std::size_t>(i) + 1]));
          queued.push_back(ms * 1e3);
        }
      }
      for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
      return summarize(queued);
    };
    const stats q = pageable ? per_copy : queued_pairs(8, 1000ull * 1000);
    const stats deep = pageable ? per_copy : queued_pairs(2000, 50ull * 1000 * 1000);

    CUDA_CHECK(cudaEventRecord(a, s));
    for (int i = 0; i < iters; ++i) CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
    CUDA_CHECK(cudaEventRecord(b, s));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    const double batched = ms * 1e3 / iters;

    const double gb = static_cast<double>(bytes) / 1e9;
    std::printf(
        "{\"dir\": \"%s\", \"kind\": \"%s\", \"bytes\": %zu, \"iterations\": %d, \"per_copy_mean_us\": %.4f, "
        "\"per_copy_median_us\": %.4f, \"per_copy_gbps\": %.4f, \"per_copy_median_gbps\": %.4f, "
        "\"queued_mean_us\": %.4f, \"queued_median_us\": %.4f, \"queued_gbps\": %.4f, \"queued_median_gbps\": %.4f, "
        "\"deep_mean_us\": %.4f, \"batched_us\": %.4f, \"batched_gbps\": %.4f}\n",
        argv[1], kind_name.c_str(), bytes, iters, per_copy.mean, per_copy.median, gb / (per_copy.mean * 1e-6),
        gb / (per_copy.median * 1e-6), q.mean, q.median, gb / (q.mean * 1e-6), gb / (q.median * 1e-6), deep.mean,
        batched, gb / (batched * 1e-6));
    if (kind_name == "pinned" || kind_name == "write_combined") {
      CUDA_CHECK(cudaFreeHost(host));
    } else {
      if (kind_name == "registered") CUDA_CHECK(cudaHostUnregister(host));
      std::free(host);
    }
    CUDA_CHECK(cudaFree(dev));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bare_memcpy: %s\n", e.what());
    return 1;
  }
  return 0;
}
