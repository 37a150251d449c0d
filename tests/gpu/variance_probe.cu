// Where does a copy's time change between independent runs? Measures pinned copies in several rounds inside
// one process, where each round renews one thing a new process would also renew, so the spread between
// rounds can be set beside the spread between processes (docs/methodology.md, "Where run-to-run variance
// comes from"). The conditions:
//   same     nothing renewed: the spread one process sees
//   stream   a new stream (and its events) each round
//   buffers  new pinned and device buffers each round, made before the old ones are freed so they differ
//   cpu      the host thread moved to another CPU each round
//   context  cudaDeviceReset, then everything made anew
// Each round times every copy between its own pair of events, 8 pairs queued behind a kernel that holds the
// stream for 1 ms (no host gap inside a pair: what a gated gpu_bench case measures), and prints the median.
// One JSON object a line: {"condition", "round", "dir", "bytes", "median_us", "copies"}.
// usage: variance_probe [ROUNDS] [DEVICE]
#include <cuda_runtime_api.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixtures/cuda/check.hpp"
#include "tests/gpu/hold_kernel.cuh"

namespace {

constexpr std::size_t kLargest = 256u << 20;
struct copy_case {
  bool h2d;
  std::size_t bytes;
  int copies;
};
const copy_case kCases[] = {{true, 64u << 10, 400}, {false, 64u << 10, 400}, {true, 1u << 20, 400},
                            {false, 1u << 20, 400}, {true, kLargest, 16},    {false, kLargest, 16}};

struct buffers {
  void* host = nullptr;
  void* dev = nullptr;
  buffers() {
    CUDA_CHECK(cudaMallocHost(&host, kLargest));
    CUDA_CHECK(cudaMalloc(&dev, kLargest));
    std::memset(host, 1, kLargest);
    CUDA_CHECK(cudaMemset(dev, 2, kLargest));
  }
  void release() {
    CUDA_CHECK(cudaFreeHost(host));
    CUDA_CHECK(cudaFree(dev));
  }
};

struct timing {
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> events;
  timing() {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    events.resize(16);
    for (auto& e : events) CUDA_CHECK(cudaEventCreate(&e));
  }
  void release() {
    for (auto& e : events) CUDA_CHECK(cudaEventDestroy(e));
    CUDA_CHECK(cudaStreamDestroy(stream));
  }
};

double median_us(const buffers& b, const timing& t, const copy_case& c) {
  void* dst = c.h2d ? b.dev : b.host;
  const void* src = c.h2d ? b.host : b.dev;
  const cudaMemcpyKind kind = c.h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  std::vector<double> us;
  // The first batch warms the engine and the link, and is not kept.
  for (int done = -8; done < c.copies; done += 8) {
    hold<<<1, 1, 0, t.stream>>>(1000ull * 1000);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpyAsync(dst, src, 4096, kind, t.stream));  // the switch from the kernel, untimed
    for (int i = 0; i < 8; ++i) {
      CUDA_CHECK(cudaEventRecord(t.events[2 * i], t.stream));
      CUDA_CHECK(cudaMemcpyAsync(dst, src, c.bytes, kind, t.stream));
      CUDA_CHECK(cudaEventRecord(t.events[2 * i + 1], t.stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(t.stream));
    if (done < 0) continue;
    for (int i = 0; i < 8; ++i) {
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, t.events[2 * i], t.events[2 * i + 1]));
      us.push_back(ms * 1e3);
    }
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

void print_round(const char* condition, int round, const buffers& b, const timing& t) {
  for (const copy_case& c : kCases)
    std::printf(
        "{\"condition\": \"%s\", \"round\": %d, \"dir\": \"%s\", \"bytes\": %zu, \"median_us\": %.4f, "
        "\"copies\": %d}\n",
        condition, round, c.h2d ? "h2d" : "d2h", c.bytes, median_us(b, t, c), c.copies);
  std::fflush(stdout);
}
}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 6;
  const int device = argc > 2 ? std::atoi(argv[2]) : 0;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "variance_probe: no CUDA GPU is visible\n");
    return 77;
  }
  try {
    CUDA_CHECK(cudaSetDevice(device));
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) throw std::runtime_error("sched_getaffinity failed");
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
    {
      buffers b;
      timing t;
      for (int r = 0; r < rounds; ++r) print_round("same", r, b, t);
      for (int r = 0; r < rounds; ++r) {
        timing fresh;
        t.release();
        t = fresh;
        print_round("stream", r, b, t);
      }
      for (int r = 0; r < rounds; ++r) {
        buffers fresh;
        b.release();
        b = fresh;
        print_round("buffers", r, b, t);
      }
      for (int r = 0; r < rounds; ++r) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[(static_cast<std::size_t>(r) * 5 + 1) % cpus.size()], &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) throw std::runtime_error("sched_setaffinity failed");
        print_round("cpu", r, b, t);
      }
      if (sched_setaffinity(0, sizeof allowed, &allowed) != 0) throw std::runtime_error("sched_setaffinity failed");
      b.release();
      t.release();
    }
    for (int r = 0; r < rounds; ++r) {
      CUDA_CHECK(cudaDeviceReset());
      CUDA_CHECK(cudaSetDevice(device));
      buffers b;
      timing t;
      print_round("context", r, b, t);
      b.release();
      t.release();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "variance_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
