// Does a small copy's time depend on where its buffers lie? A copy of a few bytes is mostly fixed cost, and
// gpu_bench's small copies spread between processes three to nine times what their samples explain
// (docs/notes/variance_sources.md). Each round allocates K pinned host buffers and K device buffers afresh,
// each 2 MiB and allocated on its own, and makes K streams; then times a 4-byte copy under four conditions,
// each over k = 0..K-1:
//   pair     host k <-> device k, on stream 0
//   host     host k <-> device 0, on stream 0
//   device   host 0 <-> device k, on stream 0
//   stream   host 0 <-> device 0, on stream k
// for h2d and d2h, and d2d (device k to device (k+1) mod K for pair and device; 0 to 1 for host and stream).
// Each figure is the median of 24 copies, each between its own pair of events, queued 8 at a time behind a
// kernel that holds the stream for 1 ms (what a gated gpu_bench case measures); a first batch is a warm-up.
// If the figures of one condition spread within a round as rounds and processes do, the state that moves a
// small copy is the buffer's (or stream's) placement, and a round whose samples rotate over K placements
// sees their mix rather than one draw. Every copy's bytes are checked at the end of each round.
// One JSON object a line: {"round", "condition", "k", "dir", "median_us"}.
// usage: placement_probe [ROUNDS] [K] [DEVICE]
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

constexpr std::size_t kBufferBytes = 2u << 20;
constexpr std::size_t kCopyBytes = 4;
constexpr int kBatch = 8;
constexpr int kCopies = 24;

struct placements {
  std::vector<unsigned char*> host, dev;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> events;
  explicit placements(int k) : host(k), dev(k), streams(k), events(2 * kBatch) {
    for (auto& h : host) {
      CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&h), kBufferBytes));
      std::memset(h, 0, kBufferBytes);
    }
    for (auto& d : dev) {
      CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d), kBufferBytes));
      CUDA_CHECK(cudaMemset(d, 0, kBufferBytes));
    }
    for (auto& s : streams) CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (auto& e : events) CUDA_CHECK(cudaEventCreate(&e));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~placements() {
    for (auto e : events) (void)cudaEventDestroy(e);
    for (auto s : streams) (void)cudaStreamDestroy(s);
    for (auto d : dev) (void)cudaFree(d);
    for (auto h : host) (void)cudaFreeHost(h);
  }
  placements(const placements&) = delete;
  placements& operator=(const placements&) = delete;
};

// The median of kCopies copies of kCopyBytes from `src` to `dst` on `s`, each between its own events.
double median_us(placements& p, void* dst, const void* src, cudaMemcpyKind kind, cudaStream_t s) {
  std::vector<double> us;
  for (int done = -kBatch; done < kCopies; done += kBatch) {
    hold<<<1, 1, 0, s>>>(1000ull * 1000);
    CUDA_CHECK(cudaGetLastError());
    for (int i = 0; i < kBatch; ++i) {
      CUDA_CHECK(cudaEventRecord(p.events[2 * i], s));
      CUDA_CHECK(cudaMemcpyAsync(dst, src, kCopyBytes, kind, s));
      CUDA_CHECK(cudaEventRecord(p.events[2 * i + 1], s));
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    if (done < 0) continue;
    for (int i = 0; i < kBatch; ++i) {
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, p.events[2 * i], p.events[2 * i + 1]));
      us.push_back(ms * 1e3);
    }
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

void print(int round, const char* condition, int k, const char* dir, double us) {
  std::printf("{\"round\": %d, \"condition\": \"%s\", \"k\": %d, \"dir\": \"%s\", \"median_us\": %.4f}\n", round,
              condition, k, dir, us);
}

// Host buffer h, device buffer d, stream s; d2d goes from device d to device d2. Each copy leaves a value
// behind that the round's check reads back: h2d writes host h's stamp into device d, d2h device d's into
// host h, d2d device d's into device d2.
void time_one(placements& p, int round, const char* condition, int k, int h, int d, int d2, int s) {
  cudaStream_t st = p.streams[static_cast<std::size_t>(s)];
  unsigned char* host = p.host[static_cast<std::size_t>(h)];
  unsigned char* dev = p.dev[static_cast<std::size_t>(d)];
  unsigned char* dev2 = p.dev[static_cast<std::size_t>(d2)];
  // Each stamp is distinct per copy set, so a copy that did not happen leaves the wrong value behind.
  const unsigned char stamp = static_cast<unsigned char>(1 + (round * 31 + k * 7 + h) % 250);
  std::memset(host, stamp, kCopyBytes);
  print(round, condition, k, "h2d", median_us(p, dev, host, cudaMemcpyHostToDevice, st));
  unsigned char back[kCopyBytes] = {};
  std::memset(host + 64, 0, kCopyBytes);
  print(round, condition, k, "d2h", median_us(p, host + 64, dev, cudaMemcpyDeviceToHost, st));
  std::memcpy(back, host + 64, kCopyBytes);
  for (unsigned char b : back)
    if (b != stamp) throw std::runtime_error("data check failed: a copy did not carry its bytes");
  if (d2 != d) {
    print(round, condition, k, "d2d", median_us(p, dev2, dev, cudaMemcpyDeviceToDevice, st));
    CUDA_CHECK(cudaMemcpy(back, dev2, kCopyBytes, cudaMemcpyDeviceToHost));
    for (unsigned char b : back)
      if (b != stamp) throw std::runtime_error("data check failed: a d2d copy did not carry its bytes");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 4;
  const int k_count = argc > 2 ? std::atoi(argv[2]) : 8;
  const int device = argc > 3 ? std::atoi(argv[3]) : 0;
  if (rounds < 1 || k_count < 2) {
    std::fprintf(stderr, "placement_probe: ROUNDS must be at least 1 and K at least 2\n");
    return 2;
  }
  if (!gpu_bench::test::gpu_visible("placement_probe")) return gpu_bench::test::kSkipCode;
  try {
    CUDA_CHECK(cudaSetDevice(device));
    for (int r = 0; r < rounds; ++r) {
      placements p(k_count);
      for (int k = 0; k < k_count; ++k) {
        const int next = (k + 1) % k_count;
        time_one(p, r, "pair", k, k, k, next, 0);
        time_one(p, r, "host", k, k, 0, 1, 0);
        time_one(p, r, "device", k, 0, k, next, 0);
        time_one(p, r, "stream", k, 0, 0, 1, k);
      }
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "placement_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
