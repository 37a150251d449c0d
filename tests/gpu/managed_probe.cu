// Where does a small managed copy's step come from? gpu_bench's managed copies of 4 B to 64 KiB hold one
// time within a process and differ between processes by whole steps of about 9 us
// (docs/notes/variance_sources.md). This program times cudaMemPrefetchAsync of each size each way, with
// none of gpu_bench's machinery, so that several of its processes tell the driver's share from gpu_bench's:
//   queued  the prefetch between two events, queued behind a kernel that holds the stream for 1 ms, as
//           gpu_bench's gated cases issue it
//   idle    the prefetch between two events on an idle stream, called at once
//   host    the host clock around the idle prefetch and the stream's synchronize
//   host_evented  the host clock around the idle way's events and prefetch, to its stop event's synchronize:
//           what recording the events costs the prefetch
// Each size is timed in BUFFERS allocations of its own, one after the other, each on a stream of its own: where
// they differ within one process, the step belongs to the buffer or the stream, and gpu_bench could spread a
// case's samples over several. All of it runs again in CONTEXTS contexts one after the other, each after a
// cudaDeviceReset: where contexts of one process differ, the step belongs to the context, not the process.
// Before each sample the pages go back to where the copy starts, and that side writes them. After the last
// d2h sample the host checks every byte the GPU wrote.
// One JSON object a line: {"pid", "cpu", "clock_read_ns", "context", "case", "buffer", "address", "p10_us",
// "p50_us", "p90_us"}.
// usage: managed_probe [SAMPLES] [DEVICE] [BUFFERS] [CONTEXTS]
#include <cuda_runtime_api.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/context/host_facts.hpp"
#include "harness/cuda/check.hpp"
#include "tests/gpu/hold_kernel.cuh"
#include "tests/gpu/skip_without_gpu.hpp"

namespace {

enum class how { queued, idle, host, host_evented };

struct probe {
  int device;
  std::vector<cudaStream_t> streams;  // one a buffer
  cudaEvent_t start = nullptr, stop = nullptr;

  probe(int dev, int buffers) : device(dev), streams(static_cast<std::size_t>(buffers), nullptr) {
    for (cudaStream_t& s : streams) CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~probe() {
    (void)cudaEventDestroy(stop);
    (void)cudaEventDestroy(start);
    for (cudaStream_t s : streams) (void)cudaStreamDestroy(s);
  }
  probe(const probe&) = delete;
  probe& operator=(const probe&) = delete;

  cudaMemLocation where(bool on_gpu) const {
    cudaMemLocation at{};
    at.type = on_gpu ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
    at.id = on_gpu ? device : 0;
    return at;
  }

  // The pages go to the copy's source side, which writes them with `seed`.
  void refill(cudaStream_t stream, char* p, std::size_t n, bool from_gpu, int seed) {
    CUDA_CHECK(cudaMemPrefetchAsync(p, n, where(from_gpu), 0, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (from_gpu) {
      CUDA_CHECK(cudaMemsetAsync(p, seed, n, stream));
    } else {
      std::memset(p, seed, n);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  // One prefetch of `n` bytes at `p` to the GPU (h2d) or to the host, timed `way`; microseconds.
  double sample(cudaStream_t stream, char* p, std::size_t n, bool h2d, how way) {
    if (way == how::host) {
      const auto t0 = std::chrono::steady_clock::now();
      CUDA_CHECK(cudaMemPrefetchAsync(p, n, where(h2d), 0, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));
      return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (way == how::queued) hold<<<1, 1, 0, stream>>>(1000000ull);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(start, stream));
    CUDA_CHECK(cudaMemPrefetchAsync(p, n, where(h2d), 0, stream));
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    if (way == how::host_evented)
      return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms * 1e3;
  }
};

double at_share(std::vector<double> v, double share) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(share * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  const int samples = argc > 1 ? std::atoi(argv[1]) : 31;
  const int device = argc > 2 ? std::atoi(argv[2]) : 0;
  const int buffers = argc > 3 ? std::atoi(argv[3]) : 4;
  const int contexts = argc > 4 ? std::atoi(argv[4]) : 1;
  if (samples <= 0 || buffers <= 0 || contexts <= 0) {
    std::fprintf(stderr, "managed_probe: SAMPLES, BUFFERS and CONTEXTS must be positive\n");
    return 2;
  }
  if (!gpu_bench::test::gpu_visible("managed_probe")) return gpu_bench::test::kSkipCode;
  try {
    const double clock_ns = gpu_bench::steady_clock_read_ns(15, 200);
    const std::pair<how, const char*> ways[] = {
        {how::queued, "queued"}, {how::idle, "idle"}, {how::host, "host"}, {how::host_evented, "host_evented"}};
    for (int context = 0; context < contexts; ++context) {
      if (context > 0) CUDA_CHECK(cudaDeviceReset());  // the next context: the process's primary one, made anew
      CUDA_CHECK(cudaSetDevice(device));
      probe pr(device, buffers);
      for (const std::size_t n : {std::size_t{4}, std::size_t{64} << 10, std::size_t{1} << 20}) {
        std::vector<char*> bufs(static_cast<std::size_t>(buffers), nullptr);
        for (char*& p : bufs) CUDA_CHECK(cudaMallocManaged(&p, n));
        for (const bool h2d : {true, false}) {
          for (const auto& [way, way_name] : ways) {
            for (std::size_t b = 0; b < bufs.size(); ++b) {
              char* p = bufs[b];
              cudaStream_t stream = pr.streams[b];
              std::vector<double> us;
              for (int s = 0; s < samples; ++s) {
                pr.refill(stream, p, n, !h2d, 1 + s % 250);
                us.push_back(pr.sample(stream, p, n, h2d, way));
              }
              if (!h2d) {  // the host now holds the pages the GPU wrote last
                const int seed = 1 + (samples - 1) % 250;
                for (std::size_t i = 0; i < n; ++i)
                  if (static_cast<unsigned char>(p[i]) != seed)
                    throw std::runtime_error("d2h byte " + std::to_string(i));
              }
              std::printf(
                  "{\"pid\": %d, \"cpu\": %d, \"clock_read_ns\": %.2f, \"context\": %d, \"case\": \"%s_%s_%zuB\", "
                  "\"buffer\": %zu, \"address\": \"%p\", \"p10_us\": %.3f, \"p50_us\": %.3f, \"p90_us\": %.3f}\n",
                  static_cast<int>(getpid()), sched_getcpu(), clock_ns, context, h2d ? "h2d" : "d2h", way_name, n, b,
                  static_cast<void*>(p), at_share(us, 0.1), at_share(us, 0.5), at_share(us, 0.9));
            }
          }
        }
        for (char* p : bufs) CUDA_CHECK(cudaFree(p));
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "managed_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
