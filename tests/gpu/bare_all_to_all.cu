// A reference for PeerPattern/pattern:all_pairs with none of gpu_bench's machinery: every GPU pushes BYTES to
// every other GPU at once, with peer access enabled for every ordered pair.
//   sm  one copy kernel per GPU, launched on one stream of it, whose blocks are split evenly between the
//       destinations: each block writes its share of the GPU's source buffer through the peer mapping into
//       one destination's buffer (stores over NVLink or PCIe; the source is read locally).
//   ce  one cudaMemcpyPeerAsync per destination, each on a stream of its own of the source GPU (forked from
//       and joined back to that GPU's first stream), so the copy engines take them side by side.
// Each GPU times ITERATIONS rounds of its copies back to back between two events on its first stream, every
// GPU's work enqueued before any is waited for (the launches lie microseconds apart; the rounds last
// milliseconds each). A GPU's rate: the bytes it sent over its own span; the total: every byte sent over the
// longest GPU's span (events of different GPUs cannot be compared); the wall rate: every byte over the
// host's time from the first enqueue to the last GPU done. GB = 1e9 bytes. Repeated REPETITIONS times after
// one untimed round; each figure is the median repetition's, and every repetition's total is printed.
// Every destination is filled with poison first and checked word by word against the pattern its source
// holds after the repetitions.
// Prints one JSON object per line, one per mode.
// usage: bare_all_to_all BYTES [ITERATIONS=5] [REPETITIONS=5] [MODES=sm,ce]; exits 77 with fewer than two
// GPUs, 3 where a pair cannot map each other's memory.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fixtures/cuda/check.hpp"
#include "fixtures/cuda/device.hpp"

namespace {

constexpr int kMaxPeers = 15;
constexpr int kThreads = 512;

struct destinations {
  uint4* to[kMaxPeers];
};

__host__ __device__ std::uint32_t word_of(int src, std::size_t i) {
  return static_cast<std::uint32_t>(i * 2654435761u) ^ (static_cast<std::uint32_t>(src + 1) * 0x9E3779B9u);
}

__global__ void fill_words(std::uint32_t* p, std::size_t words, int src, bool poison) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = poison ? ~word_of(src, i) : word_of(src, i);
}

__global__ void count_wrong(const std::uint32_t* p, std::size_t words, int src, unsigned long long* wrong) {
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    bad += p[i] != word_of(src, i);
  if (bad) atomicAdd(wrong, bad);
}

// blockIdx.y picks the destination; the blocks of one destination stride over the whole source.
__global__ void push_to_all(const uint4* __restrict__ from, destinations d, std::size_t vectors) {
  uint4* __restrict__ to = d.to[blockIdx.y];
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < vectors;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    to[i] = from[i];
}

struct gpu {
  int id = 0;
  int sms = 0;
  void* src = nullptr;
  std::vector<void*> recv;            // recv[k]: what GPU k sent here (nullptr for k == id)
  std::vector<cudaStream_t> streams;  // streams[0] times; streams[1 + k] carries ce's copies to GPU k
  cudaEvent_t start = nullptr, stop = nullptr;
  std::vector<cudaEvent_t> joined;      // one per destination stream
  unsigned long long* wrong = nullptr;  // device counter of mismatched words
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bare_all_to_all BYTES [ITERATIONS] [REPETITIONS] [MODES=sm,ce]\n");
    return 2;
  }
  const std::size_t bytes = std::strtoull(argv[1], nullptr, 10) / sizeof(uint4) * sizeof(uint4);
  const int iters = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  const int reps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  const std::string modes = argc > 4 ? argv[4] : "sm,ce";
  if (bytes == 0) {
    std::fprintf(stderr, "bare_all_to_all: BYTES must be at least 16\n");
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) {
    std::fprintf(stderr, "bare_all_to_all: fewer than two CUDA GPUs are visible\n");
    return 77;
  }
  if (count - 1 > kMaxPeers) {
    std::fprintf(stderr, "bare_all_to_all: more than %d GPUs\n", kMaxPeers + 1);
    return 2;
  }
  try {
    for (int a = 0; a < count; ++a)
      for (int b = 0; b < count; ++b) {
        if (a == b) continue;
        int can = 0;
        CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
        if (!can) {
          std::fprintf(stderr, "bare_all_to_all: GPU %d cannot access GPU %d's memory\n", a, b);
          return 3;
        }
        gpu_bench::enable_peer_access(a, b);
      }
    std::vector<gpu> g(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      gpu& x = g[static_cast<std::size_t>(i)];
      x.id = i;
      CUDA_CHECK(cudaSetDevice(i));
      CUDA_CHECK(cudaDeviceGetAttribute(&x.sms, cudaDevAttrMultiProcessorCount, i));
      CUDA_CHECK(cudaMalloc(&x.src, bytes));
      fill_words<<<x.sms * 4, kThreads>>>(static_cast<std::uint32_t*>(x.src), bytes / 4, i, false);
      CUDA_CHECK(cudaGetLastError());
      x.recv.assign(static_cast<std::size_t>(count), nullptr);
      for (int k = 0; k < count; ++k)
        if (k != i) CUDA_CHECK(cudaMalloc(&x.recv[static_cast<std::size_t>(k)], bytes));
      x.streams.resize(static_cast<std::size_t>(count) + 1);
      for (auto& s : x.streams) CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      x.joined.resize(static_cast<std::size_t>(count));
      for (auto& e : x.joined) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreate(&x.start));
      CUDA_CHECK(cudaEventCreate(&x.stop));
      CUDA_CHECK(cudaMalloc(&x.wrong, sizeof(unsigned long long)));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    const double per_gpu_bytes = static_cast<double>(bytes) * (count - 1) * iters;

    std::size_t from = 0;
    while (from < modes.size()) {
      const std::size_t comma = modes.find(',', from);
      const std::string mode = modes.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
      from = comma == std::string::npos ? modes.size() : comma + 1;
      if (mode != "sm" && mode != "ce") {
        std::fprintf(stderr, "bare_all_to_all: unknown mode %s (sm or ce)\n", mode.c_str());
        return 2;
      }
      // Poison every destination, so that the check sees only what this mode's copies wrote.
      for (gpu& x : g) {
        CUDA_CHECK(cudaSetDevice(x.id));
        for (int k = 0; k < count; ++k)
          if (k != x.id)
            fill_words<<<x.sms * 4, kThreads>>>(static_cast<std::uint32_t*>(x.recv[static_cast<std::size_t>(k)]),
                                                bytes / 4, k, true);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
      }
      auto enqueue = [&](gpu& x) {
        CUDA_CHECK(cudaSetDevice(x.id));
        cudaStream_t s0 = x.streams[0];
        CUDA_CHECK(cudaEventRecord(x.start, s0));
        if (mode == "sm") {
          destinations d{};
          int n = 0;
          for (int k = 0; k < count; ++k)
            if (k != x.id)
              d.to[n++] = static_cast<uint4*>(g[static_cast<std::size_t>(k)].recv[static_cast<std::size_t>(x.id)]);
          const dim3 grid(static_cast<unsigned>(std::max(1, 4 * x.sms / n)), static_cast<unsigned>(n));
          for (int r = 0; r < iters; ++r)
            push_to_all<<<grid, kThreads, 0, s0>>>(static_cast<const uint4*>(x.src), d, bytes / sizeof(uint4));
          CUDA_CHECK(cudaGetLastError());
        } else {
          for (int k = 0; k < count; ++k) {
            if (k == x.id) continue;
            cudaStream_t s = x.streams[static_cast<std::size_t>(k) + 1];
            CUDA_CHECK(cudaStreamWaitEvent(s, x.start, 0));
            for (int r = 0; r < iters; ++r)
              CUDA_CHECK(cudaMemcpyPeerAsync(g[static_cast<std::size_t>(k)].recv[static_cast<std::size_t>(x.id)], k,
                                             x.src, x.id, bytes, s));
            CUDA_CHECK(cudaEventRecord(x.joined[static_cast<std::size_t>(k)], s));
            CUDA_CHECK(cudaStreamWaitEvent(s0, x.joined[static_cast<std::size_t>(k)], 0));
          }
        }
        CUDA_CHECK(cudaEventRecord(x.stop, s0));
      };
      std::vector<std::vector<double>> spans(static_cast<std::size_t>(count));
      std::vector<double> totals, walls;
      for (int rep = -1; rep < reps; ++rep) {  // rep -1: untimed
        const auto t0 = std::chrono::steady_clock::now();
        for (gpu& x : g) enqueue(x);
        double longest = 0;
        for (gpu& x : g) {
          CUDA_CHECK(cudaEventSynchronize(x.stop));
        }
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        for (gpu& x : g) {
          float ms = 0;
          CUDA_CHECK(cudaEventElapsedTime(&ms, x.start, x.stop));
          if (rep >= 0) spans[static_cast<std::size_t>(x.id)].push_back(ms * 1e-3);
          longest = std::max(longest, ms * 1e-3);
        }
        if (rep >= 0) {
          totals.push_back(per_gpu_bytes * count / longest / 1e9);
          walls.push_back(per_gpu_bytes * count / wall / 1e9);
        }
      }
      // Every received buffer, checked by the GPU that holds it.
      unsigned long long wrong = 0;
      for (gpu& x : g) {
        CUDA_CHECK(cudaSetDevice(x.id));
        CUDA_CHECK(cudaMemset(x.wrong, 0, sizeof(unsigned long long)));
        for (int k = 0; k < count; ++k)
          if (k != x.id)
            count_wrong<<<x.sms * 4, kThreads>>>(static_cast<const std::uint32_t*>(x.recv[static_cast<std::size_t>(k)]),
                                                 bytes / 4, k, x.wrong);
        CUDA_CHECK(cudaGetLastError());
        unsigned long long w = 0;
        CUDA_CHECK(cudaMemcpy(&w, x.wrong, sizeof w, cudaMemcpyDeviceToHost));
        wrong += w;
      }
      std::printf(
          "{\"mode\": \"%s\", \"gpus\": %d, \"bytes\": %zu, \"iterations\": %d, \"repetitions\": %d, "
          "\"gbps_total\": %.3f, \"gbps_wall\": %.3f, \"gbps_gpu\": [",
          mode.c_str(), count, bytes, iters, reps, median(totals), median(walls));
      for (int i = 0; i < count; ++i)
        std::printf("%s%.3f", i ? ", " : "", per_gpu_bytes / median(spans[static_cast<std::size_t>(i)]) / 1e9);
      std::printf("], \"gbps_total_repetitions\": [");
      for (std::size_t r = 0; r < totals.size(); ++r) std::printf("%s%.3f", r ? ", " : "", totals[r]);
      std::printf("], \"wrong_words\": %llu, \"verified\": %s}\n", wrong, wrong == 0 ? "true" : "false");
      std::fflush(stdout);
      if (wrong != 0) {
        std::fprintf(stderr, "bare_all_to_all: %llu words arrived wrong in mode %s\n", wrong, mode.c_str());
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bare_all_to_all: %s\n", e.what());
    return 1;
  }
  return 0;
}
