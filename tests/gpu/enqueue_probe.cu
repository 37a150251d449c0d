// How long does enqueuing one pinned h2d copy hold the host thread, and what sets it? SyncPlacement's
// `copy/sync:before` (the enqueue of a 64 MiB copy on a drained stream) reads about 4 us in some processes
// and 20 to 25 us in others; HostBlocking's asynchronous pinned copies split by process the same way, more
// so the larger the copy. This probe times the enqueue alone, per buffer, size and stream state, so that
// the spread between buffers of one process can be set beside the spread between processes.
//   idle     the stream drained; the copy call timed on its own
//   busy     the stream held by a kernel while the call is timed (as a gated case's stream is)
//   pending  ten copies of the size queued and drained first (SyncPlacement's sync:before)
//   pending_pause  as pending, then 1 ms of sleep before the call: whether the slow state passes in time
//   pending_query  as pending, then cudaStreamQuery before the call: whether another call settles it first
// Buffers: three from cudaMallocHost and one malloc'd, touched and registered, each 256 MiB, with the
// page sizes /proc/self/smaps gives for each.
// One JSON object a line: {"what": "process", ...}, {"what": "buffer", ...}, {"what": "enqueue", ...}.
// usage: enqueue_probe [SAMPLES] [DEVICE]
#include <cuda_runtime_api.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/cuda/check.hpp"
#include "tests/gpu/hold_kernel.cuh"

namespace {

using clock_type = std::chrono::steady_clock;
constexpr std::size_t kBufferBytes = 256u << 20;
constexpr int kPending = 10;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// The cost of one steady-clock read on this thread, in ns: the process's CPU state (docs/notes/
// host_driven_variance.md) shows in it.
double clock_read_ns() {
  constexpr int kReads = 1 << 20;
  const auto t0 = clock_type::now();
  for (int i = 0; i < kReads; ++i) (void)clock_type::now();
  return seconds_since(t0) / kReads * 1e9;
}

// The smaps lines of the mapping holding `p` that say how it is paged, as one JSON-safe text.
std::string paging_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::string line, out;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {  // a mapping's header line
      inside = addr >= lo && addr < hi;
      if (inside) {
        const auto path = line.find('/');
        out += "map=" + (path == std::string::npos ? std::string("anon") : line.substr(path)) + ";";
      }
      continue;
    }
    if (!inside) continue;
    for (const char* key : {"Size:", "Rss:", "AnonHugePages:", "KernelPageSize:", "MMUPageSize:"})
      if (line.rfind(key, 0) == 0) {
        std::istringstream in(line.substr(std::strlen(key)));
        long kb = 0;
        in >> kb;
        out += std::string(key, std::strlen(key) - 1) + "=" + std::to_string(kb) + ";";
      }
  }
  return out;
}

struct host_buffer {
  void* p = nullptr;
  bool registered = false;
};

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * (v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  const int samples = argc > 1 ? std::atoi(argv[1]) : 40;
  const int device = argc > 2 ? std::atoi(argv[2]) : 0;
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaFree(nullptr));
  std::printf("{\"what\": \"process\", \"pid\": %d, \"cpu\": %d, \"clock_read_ns\": %.2f}\n", getpid(), sched_getcpu(),
              clock_read_ns());

  std::vector<host_buffer> hosts(4);
  for (int i = 0; i < 3; ++i) CUDA_CHECK(cudaMallocHost(&hosts[i].p, kBufferBytes));
  hosts[3].p = std::aligned_alloc(4096, kBufferBytes);
  if (!hosts[3].p) return std::fprintf(stderr, "enqueue_probe: malloc of 256 MiB failed\n"), 1;
  std::memset(hosts[3].p, 1, kBufferBytes);
  CUDA_CHECK(cudaHostRegister(hosts[3].p, kBufferBytes, cudaHostRegisterDefault));
  hosts[3].registered = true;
  for (int i = 0; i < 3; ++i) std::memset(hosts[i].p, 1, kBufferBytes);
  void* dev = nullptr;
  CUDA_CHECK(cudaMalloc(&dev, kBufferBytes));
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (std::size_t i = 0; i < hosts.size(); ++i)
    std::printf("{\"what\": \"buffer\", \"buffer\": %zu, \"registered\": %s, \"paging\": \"%s\"}\n", i,
                hosts[i].registered ? "true" : "false", paging_of(hosts[i].p).c_str());

  const std::size_t sizes[] = {64u << 10, 1u << 20, 16u << 20, 64u << 20, 256u << 20};
  for (const char* state : {"idle", "busy", "pending", "pending_pause", "pending_query"})
    for (std::size_t b = 0; b < hosts.size(); ++b)
      for (std::size_t bytes : sizes) {
        const bool pending = std::strncmp(state, "pending", 7) == 0;
        if (pending && bytes > (64u << 20)) continue;  // ten would take 50 ms
        std::vector<double> us;
        for (int k = -2; k < samples; ++k) {  // two warm-ups, not kept
          if (std::strcmp(state, "busy") == 0) {
            hold<<<1, 1, 0, s>>>(200ull * 1000);
            CUDA_CHECK(cudaGetLastError());
          } else {
            if (pending)
              for (int i = 0; i < kPending; ++i)
                CUDA_CHECK(cudaMemcpyAsync(dev, hosts[b].p, bytes, cudaMemcpyHostToDevice, s));
            CUDA_CHECK(cudaStreamSynchronize(s));
            if (std::strcmp(state, "pending_pause") == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            if (std::strcmp(state, "pending_query") == 0) CUDA_CHECK(cudaStreamQuery(s));
          }
          const auto t0 = clock_type::now();
          CUDA_CHECK(cudaMemcpyAsync(dev, hosts[b].p, bytes, cudaMemcpyHostToDevice, s));
          const double took = seconds_since(t0);
          CUDA_CHECK(cudaStreamSynchronize(s));
          if (k >= 0) us.push_back(took * 1e6);
        }
        std::printf(
            "{\"what\": \"enqueue\", \"state\": \"%s\", \"buffer\": %zu, \"bytes\": %zu, \"p10_us\": %.3f, "
            "\"median_us\": %.3f, \"p90_us\": %.3f, \"samples\": %zu, \"cpu\": %d}\n",
            state, b, bytes, percentile(us, 0.1), percentile(us, 0.5), percentile(us, 0.9), us.size(), sched_getcpu());
        std::fflush(stdout);
      }
  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaFree(dev));
  CUDA_CHECK(cudaHostUnregister(hosts[3].p));
  std::free(hosts[3].p);
  for (int i = 0; i < 3; ++i) CUDA_CHECK(cudaFreeHost(hosts[i].p));
  return 0;
}
