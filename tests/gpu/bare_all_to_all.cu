// A reference for PeerPattern with none of gpu_bench's machinery: GPUs push BYTES to other GPUs at once, with
// peer access enabled for every ordered pair. PATTERN: all_pairs (every GPU to every other, in steps: in step
// k every GPU s copies to GPU (s + k) mod N), one_to_all (GPU 0 to every other), all_to_one (every other to
// GPU 0). Modes:
//   sm         one copy kernel per source GPU, launched on one stream of it, whose blocks are split evenly
//              between its destinations: each block writes its share of the source buffer through the peer
//              mapping into one destination's buffer (the source is read locally).
//   ce         one cudaMemcpyPeerAsync per copy, each on a stream of its own of the source GPU between events
//              of that stream, issued as a program issues them: in the pattern's order, each starting as soon
//              as it is issued.
//   ce_by_gpu  the same copies issued GPU after GPU: all of GPU 0's (in destination order), then GPU 1's, ...
// Each copy (or kernel) runs ITERATIONS times back to back. A GPU's span: from its first stream's start event
// to its last stream's stop event (events of one GPU share a clock). A GPU's rate: the bytes it sent over
// its span; the total: every byte sent over the longest GPU's span (events of different GPUs cannot be
// compared); the wall rate: every byte over the host's time from the first enqueue to the last GPU done.
// GB = 1e9 bytes. Repeated REPETITIONS times after one untimed round; each figure is the median
// repetition's, and every repetition's total is printed. Every destination is filled with poison first and
// checked word by word against the pattern its source holds after the repetitions.
// Prints one JSON object per line, one per mode.
// usage: bare_all_to_all BYTES [ITERATIONS=5] [REPETITIONS=5] [MODES=sm,ce] [PATTERN=all_pairs]; exits 77
// with fewer than two GPUs, 3 where a pair cannot map each other's memory.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"

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
  std::vector<void*> recv;               // recv[k]: what GPU k sent here (nullptr for k == id)
  std::vector<cudaStream_t> streams;     // streams[0] carries sm's kernel; streams[1 + k] ce's copies to GPU k
  std::vector<cudaEvent_t> start, stop;  // per stream, as streams
  std::vector<bool> used;                // per stream: whether this repetition put work on it
  unsigned long long* wrong = nullptr;   // device counter of mismatched words
};

// The pattern's copies (source, destination) in the order a program issues them.
std::vector<std::pair<int, int>> pattern_copies(const std::string& pattern, int count) {
  std::vector<std::pair<int, int>> v;
  if (pattern == "one_to_all") {
    for (int d = 1; d < count; ++d) v.emplace_back(0, d);
  } else if (pattern == "all_to_one") {
    for (int s = 1; s < count; ++s) v.emplace_back(s, 0);
  } else {
    for (int step = 1; step < count; ++step)
      for (int s = 0; s < count; ++s) v.emplace_back(s, (s + step) % count);
  }
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bare_all_to_all BYTES [ITERATIONS] [REPETITIONS] [MODES=sm,ce] [PATTERN]\n");
    return 2;
  }
  const std::size_t bytes = std::strtoull(argv[1], nullptr, 10) / sizeof(uint4) * sizeof(uint4);
  const int iters = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  const int reps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  const std::string modes = argc > 4 ? argv[4] : "sm,ce";
  const std::string pattern = argc > 5 ? argv[5] : "all_pairs";
  if (pattern != "all_pairs" && pattern != "one_to_all" && pattern != "all_to_one") {
    std::fprintf(stderr, "bare_all_to_all: unknown pattern %s (all_pairs, one_to_all or all_to_one)\n",
                 pattern.c_str());
    return 2;
  }
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
      x.start.resize(x.streams.size());
      x.stop.resize(x.streams.size());
      for (auto& e : x.start) CUDA_CHECK(cudaEventCreate(&e));
      for (auto& e : x.stop) CUDA_CHECK(cudaEventCreate(&e));
      CUDA_CHECK(cudaMalloc(&x.wrong, sizeof(unsigned long long)));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    const auto copies = pattern_copies(pattern, count);
    std::vector<double> sent(static_cast<std::size_t>(count), 0.0);  // bytes each GPU sends per repetition
    for (const auto& c : copies) sent[static_cast<std::size_t>(c.first)] += static_cast<double>(bytes) * iters;
    double all_bytes = 0;
    for (double b : sent) all_bytes += b;

    std::size_t from = 0;
    while (from < modes.size()) {
      const std::size_t comma = modes.find(',', from);
      const std::string mode = modes.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
      from = comma == std::string::npos ? modes.size() : comma + 1;
      if (mode != "sm" && mode != "ce" && mode != "ce_by_gpu") {
        std::fprintf(stderr, "bare_all_to_all: unknown mode %s (sm, ce or ce_by_gpu)\n", mode.c_str());
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
      // One copy, or with sm one kernel per source GPU to all of its destinations, between its stream's events.
      auto issue_copy = [&](int from, int to) {
        gpu& x = g[static_cast<std::size_t>(from)];
        CUDA_CHECK(cudaSetDevice(x.id));
        const std::size_t k = static_cast<std::size_t>(to) + 1;
        cudaStream_t s = x.streams[k];
        CUDA_CHECK(cudaEventRecord(x.start[k], s));
        for (int r = 0; r < iters; ++r)
          CUDA_CHECK(cudaMemcpyPeerAsync(g[static_cast<std::size_t>(to)].recv[static_cast<std::size_t>(from)], to,
                                         x.src, from, bytes, s));
        CUDA_CHECK(cudaEventRecord(x.stop[k], s));
        x.used[k] = true;
      };
      auto issue_kernel = [&](gpu& x) {
        destinations d{};
        int n = 0;
        for (const auto& c : copies)
          if (c.first == x.id)
            d.to[n++] = static_cast<uint4*>(g[static_cast<std::size_t>(c.second)].recv[static_cast<std::size_t>(x.id)]);
        if (n == 0) return;
        CUDA_CHECK(cudaSetDevice(x.id));
        cudaStream_t s0 = x.streams[0];
        CUDA_CHECK(cudaEventRecord(x.start[0], s0));
        const dim3 grid(static_cast<unsigned>(std::max(1, 4 * x.sms / n)), static_cast<unsigned>(n));
        for (int r = 0; r < iters; ++r)
          push_to_all<<<grid, kThreads, 0, s0>>>(static_cast<const uint4*>(x.src), d, bytes / sizeof(uint4));
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventRecord(x.stop[0], s0));
        x.used[0] = true;
      };
      std::vector<std::vector<double>> spans(static_cast<std::size_t>(count));
      std::vector<double> totals, walls;
      for (int rep = -1; rep < reps; ++rep) {  // rep -1: untimed
        for (gpu& x : g) x.used.assign(x.streams.size(), false);
        const auto t0 = std::chrono::steady_clock::now();
        if (mode == "sm") {
          for (gpu& x : g) issue_kernel(x);
        } else if (mode == "ce") {
          for (const auto& c : copies) issue_copy(c.first, c.second);
        } else {
          for (int s = 0; s < count; ++s)
            for (const auto& c : copies)
              if (c.first == s) issue_copy(c.first, c.second);
        }
        for (gpu& x : g)
          for (std::size_t k = 0; k < x.streams.size(); ++k)
            if (x.used[k]) CUDA_CHECK(cudaEventSynchronize(x.stop[k]));
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double longest = 0;
        for (gpu& x : g) {
          // From the GPU's first used stream's start: the earliest start and the latest stop.
          cudaEvent_t ref = nullptr;
          double first = 0, last = 0;
          for (std::size_t k = 0; k < x.streams.size(); ++k) {
            if (!x.used[k]) continue;
            if (!ref) ref = x.start[k];
            float b = 0, e = 0;
            CUDA_CHECK(cudaEventElapsedTime(&b, ref, x.start[k]));
            CUDA_CHECK(cudaEventElapsedTime(&e, ref, x.stop[k]));
            first = std::min(first, b * 1e-3);
            last = std::max(last, e * 1e-3);
          }
          if (!ref) continue;
          if (rep >= 0) spans[static_cast<std::size_t>(x.id)].push_back(last - first);
          longest = std::max(longest, last - first);
        }
        if (rep >= 0) {
          totals.push_back(all_bytes / longest / 1e9);
          walls.push_back(all_bytes / wall / 1e9);
        }
      }
      // Every received buffer, checked by the GPU that holds it.
      unsigned long long wrong = 0;
      for (gpu& x : g) {
        CUDA_CHECK(cudaSetDevice(x.id));
        CUDA_CHECK(cudaMemset(x.wrong, 0, sizeof(unsigned long long)));
        for (const auto& c : copies)
          if (c.second == x.id)
            count_wrong<<<x.sms * 4, kThreads>>>(
                static_cast<const std::uint32_t*>(x.recv[static_cast<std::size_t>(c.first)]), bytes / 4, c.first,
                x.wrong);
        CUDA_CHECK(cudaGetLastError());
        unsigned long long w = 0;
        CUDA_CHECK(cudaMemcpy(&w, x.wrong, sizeof w, cudaMemcpyDeviceToHost));
        wrong += w;
      }
      std::printf(
          "{\"mode\": \"%s\", \"pattern\": \"%s\", \"gpus\": %d, \"bytes\": %zu, \"iterations\": %d, "
          "\"repetitions\": %d, \"gbps_total\": %.3f, \"gbps_wall\": %.3f, \"gbps_gpu\": [",
          mode.c_str(), pattern.c_str(), count, bytes, iters, reps, median(totals), median(walls));
      for (int i = 0; i < count; ++i) {
        const auto& v = spans[static_cast<std::size_t>(i)];
        std::printf("%s%.3f", i ? ", " : "", v.empty() ? 0.0 : sent[static_cast<std::size_t>(i)] / median(v) / 1e9);
      }
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
