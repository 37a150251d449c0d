// Where does a copy's time change between independent runs? Measures pinned copies in several rounds inside
// one process, where each round renews one thing a new process would also renew, so the spread between
// rounds can be set beside the spread between processes (docs/methodology.md, "Why each round is a process";
// the runs: docs/notes/variance_sources.md). The conditions:
//   same     nothing renewed: the spread one process sees
//   stream   a new stream (and its events) each round
//   buffers  new pinned and device buffers each round, made before the old ones are freed so they differ
//   cpu      the host thread moved to another CPU each round
//   context  cudaDeviceReset, then everything made anew
// Each round times every copy between its own pair of events, 8 pairs queued behind a kernel that holds the
// stream for 1 ms (no host gap inside a pair: what a gated gpu_bench case measures), and prints the median.
// One JSON object a line: {"condition", "round", "dir", "bytes", "median_us", "copies"}.
//
// With `bidir`, it asks the same of a bidirectional copy of 64 MiB (one h2d and one d2h at once, each on a
// stream of its own, as Transfer's dir:bidir), whose figure varies between processes more than any other
// copy's on some hosts. Each round is a pause of PAUSE_S seconds, then the copy 16 times and each direction
// alone 16 times, under two conditions: `later` (the same buffers, so only time passes between rounds) and
// `buffers` (new pinned and device buffers each round). If `later` spreads as much as `buffers`, what moves
// the figure comes and goes in time (traffic of others on the host link) and no placement can fix it.
// A third condition, `streams`, makes the two streams afresh each round after round % 8 other streams (kept
// until the round ends): a process creates its streams in an order its cases decide, and the driver spreads
// streams over its hardware queues and copy engines in creation order, so if the figure follows that count
// the harness, not the link, chooses it.
// One JSON object a line: {"condition", "round", "streams_before", "bidir_us", "h2d_us", "d2h_us",
// "h2d_alone_us", "d2h_alone_us"}.
// usage: variance_probe [ROUNDS] [DEVICE]
//        variance_probe bidir [ROUNDS] [DEVICE] [PAUSE_S]
#include <cuda_runtime_api.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "harness/cuda/check.hpp"
#include "tests/gpu/hold_kernel.cuh"
#include "tests/gpu/skip_without_gpu.hpp"

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

constexpr std::size_t kBidirBytes = 64u << 20;
constexpr int kBidirCopies = 16;

struct two_streams {
  cudaStream_t s[2] = {nullptr, nullptr};
  cudaEvent_t start = nullptr, done[2] = {nullptr, nullptr};
  two_streams() {
    for (auto& x : s) CUDA_CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&start));
    for (auto& e : done) CUDA_CHECK(cudaEventCreate(&e));
  }
  ~two_streams() {
    for (auto& e : done) (void)cudaEventDestroy(e);
    (void)cudaEventDestroy(start);
    for (auto& x : s) (void)cudaStreamDestroy(x);
  }
  two_streams(const two_streams&) = delete;
  two_streams& operator=(const two_streams&) = delete;
};

double middle(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double elapsed_us(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms * 1e3;
}

// One copy per leg, each leg on its own stream, both released at once by an event behind a 1 ms hold;
// returns each leg's time from the release to its end. `in` is copied to the GPU, `out` back to the host.
std::vector<double> legs_us(const buffers* in, const buffers* out, two_streams& t) {
  hold<<<1, 1, 0, t.s[0]>>>(1000ull * 1000);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(t.start, t.s[0]));
  CUDA_CHECK(cudaStreamWaitEvent(t.s[1], t.start, 0));
  if (in) CUDA_CHECK(cudaMemcpyAsync(in->dev, in->host, kBidirBytes, cudaMemcpyHostToDevice, t.s[0]));
  if (out) CUDA_CHECK(cudaMemcpyAsync(out->host, out->dev, kBidirBytes, cudaMemcpyDeviceToHost, t.s[1]));
  for (int i = 0; i < 2; ++i) CUDA_CHECK(cudaEventRecord(t.done[i], t.s[i]));
  for (auto x : t.s) CUDA_CHECK(cudaStreamSynchronize(x));
  std::vector<double> us;
  if (in) us.push_back(elapsed_us(t.start, t.done[0]));
  if (out) us.push_back(elapsed_us(t.start, t.done[1]));
  return us;
}

void print_bidir_round(const char* condition, int round, const buffers& in, const buffers& out, two_streams& t,
                       int streams_before = 0) {
  std::vector<double> both, h2d, d2h, h2d_alone, d2h_alone;
  for (int k = -1; k < kBidirCopies; ++k) {  // the first of each is a warm-up, not kept
    const auto b = legs_us(&in, &out, t);
    const auto i = legs_us(&in, nullptr, t);
    const auto o = legs_us(nullptr, &out, t);
    if (k < 0) continue;
    both.push_back(std::max(b[0], b[1]));
    h2d.push_back(b[0]);
    d2h.push_back(b[1]);
    h2d_alone.push_back(i[0]);
    d2h_alone.push_back(o[0]);
  }
  std::printf(
      "{\"condition\": \"%s\", \"round\": %d, \"streams_before\": %d, \"bidir_us\": %.2f, \"h2d_us\": %.2f, "
      "\"d2h_us\": %.2f, \"h2d_alone_us\": %.2f, \"d2h_alone_us\": %.2f}\n",
      condition, round, streams_before, middle(both), middle(h2d), middle(d2h), middle(h2d_alone), middle(d2h_alone));
  std::fflush(stdout);
}

void bidir_probe(int rounds, double pause_s) {
  const auto pause = std::chrono::duration<double>(pause_s);
  two_streams t;
  buffers in, out;
  for (int r = 0; r < rounds; ++r) {
    std::this_thread::sleep_for(pause);
    print_bidir_round("later", r, in, out, t);
  }
  for (int r = 0; r < rounds; ++r) {
    buffers fresh_in, fresh_out;
    in.release();
    out.release();
    in = fresh_in;
    out = fresh_out;
    std::this_thread::sleep_for(pause);
    print_bidir_round("buffers", r, in, out, t);
  }
  for (int r = 0; r < rounds; ++r) {
    const int before = r % 8;
    std::vector<cudaStream_t> others(static_cast<std::size_t>(before));
    for (auto& x : others) CUDA_CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    {
      two_streams fresh;
      std::this_thread::sleep_for(pause);
      print_bidir_round("streams", r, in, out, fresh, before);
    }
    for (auto x : others) CUDA_CHECK(cudaStreamDestroy(x));
  }
  in.release();
  out.release();
}
}  // namespace

int main(int argc, char** argv) {
  const bool bidir = argc > 1 && std::strcmp(argv[1], "bidir") == 0;
  if (bidir) {
    --argc;
    ++argv;
  }
  const int rounds = argc > 1 ? std::atoi(argv[1]) : (bidir ? 12 : 6);
  const int device = argc > 2 ? std::atoi(argv[2]) : 0;
  const double pause_s = argc > 3 ? std::atof(argv[3]) : 2.0;
  if (!gpu_bench::test::gpu_visible("variance_probe")) return gpu_bench::test::kSkipCode;
  try {
    CUDA_CHECK(cudaSetDevice(device));
    if (bidir) {
      bidir_probe(rounds, pause_s);
      return 0;
    }
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
