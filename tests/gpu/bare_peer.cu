// The reference the Peer family is held to: a bare event-timed cudaMemcpyPeerAsync loop between two GPUs
// with peer access enabled both ways, with none of gpu_bench's machinery. Each direction is issued on a
// stream of its source GPU, as Peer does. Prints one JSON object:
//   oneway_per_copy_* : an event pair around each SRC -> DST copy, synchronised each time
//   oneway_batched_*  : one event pair around `iterations` back-to-back copies
//   bidir_per_copy_*  : SRC -> DST on SRC's stream and DST -> SRC on DST's stream at once; the start event on
//                       SRC's stream, DST's stream waiting on it and joined back before the stop event
//   bidir_batched_*   : the same around `iterations` copies each way
// Rates count bytes moved: N one way, 2N both ways; GB = 1e9 bytes.
// usage: bare_peer SRC DST BYTES ITERATIONS; exits 77 when fewer than two GPUs are visible.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"

namespace {

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: bare_peer SRC DST BYTES ITERATIONS\n");
    return 2;
  }
  const int src = std::atoi(argv[1]);
  const int dst = std::atoi(argv[2]);
  const std::size_t bytes = std::strtoull(argv[3], nullptr, 10);
  const int iters = std::max(1, std::atoi(argv[4]));
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) {
    std::fprintf(stderr, "bare_peer: fewer than two CUDA GPUs are visible\n");
    return 77;
  }
  try {
    int can_ab = 0, can_ba = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can_ab, src, dst));
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can_ba, dst, src));
    if (!can_ab || !can_ba) {
      std::fprintf(stderr, "bare_peer: GPUs %d and %d cannot access each other's memory\n", src, dst);
      return 3;
    }
    gpu_bench::enable_peer_access(src, dst);
    gpu_bench::enable_peer_access(dst, src);

    // On each GPU: the buffer it sends from and the one it receives into, a stream, and its events.
    void *a_send = nullptr, *a_recv = nullptr, *b_send = nullptr, *b_recv = nullptr;
    cudaStream_t sa, sb;
    cudaEvent_t start, stop, joined;
    CUDA_CHECK(cudaSetDevice(dst));
    CUDA_CHECK(cudaMalloc(&b_send, bytes));
    CUDA_CHECK(cudaMalloc(&b_recv, bytes));
    CUDA_CHECK(cudaMemset(b_send, 2, bytes));
    CUDA_CHECK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
    CUDA_CHECK(cudaSetDevice(src));
    CUDA_CHECK(cudaMalloc(&a_send, bytes));
    CUDA_CHECK(cudaMalloc(&a_recv, bytes));
    CUDA_CHECK(cudaMemset(a_send, 1, bytes));
    CUDA_CHECK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaDeviceSynchronize());

    auto forward = [&] { CUDA_CHECK(cudaMemcpyPeerAsync(b_recv, dst, a_send, src, bytes, sa)); };
    auto backward = [&] { CUDA_CHECK(cudaMemcpyPeerAsync(a_recv, src, b_send, dst, bytes, sb)); };
    // `copies` rounds of the copies between one pair of events: one direction, or both forked and joined.
    auto timed_s = [&](bool bidir, int copies) {
      CUDA_CHECK(cudaEventRecord(start, sa));
      if (bidir) CUDA_CHECK(cudaStreamWaitEvent(sb, start, 0));
      for (int i = 0; i < copies; ++i) {
        forward();
        if (bidir) backward();
      }
      if (bidir) {
        CUDA_CHECK(cudaEventRecord(joined, sb));
        CUDA_CHECK(cudaStreamWaitEvent(sa, joined, 0));
      }
      CUDA_CHECK(cudaEventRecord(stop, sa));
      CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      return static_cast<double>(ms) * 1e-3;
    };
    double rates[4] = {};  // oneway per copy, oneway batched, bidir per copy, bidir batched
    for (int bidir = 0; bidir < 2; ++bidir) {
      for (int i = 0; i < 3; ++i) (void)timed_s(bidir != 0, 1);  // warm-up
      std::vector<double> per_copy;
      for (int i = 0; i < iters; ++i) per_copy.push_back(timed_s(bidir != 0, 1));
      const double batched = timed_s(bidir != 0, iters) / iters;
      const double moved = static_cast<double>(bytes) * (bidir ? 2.0 : 1.0) / 1e9;
      rates[2 * bidir] = moved / mean(per_copy);
      rates[2 * bidir + 1] = moved / batched;
    }
    std::printf(
        "{\"src\": %d, \"dst\": %d, \"bytes\": %zu, \"iterations\": %d, \"oneway_per_copy_gbps\": %.4f, "
        "\"oneway_batched_gbps\": %.4f, \"bidir_per_copy_gbps\": %.4f, \"bidir_batched_gbps\": %.4f}\n",
        src, dst, bytes, iters, rates[0], rates[1], rates[2], rates[3]);
    CUDA_CHECK(cudaFree(a_send));
    CUDA_CHECK(cudaFree(a_recv));
    CUDA_CHECK(cudaSetDevice(dst));
    CUDA_CHECK(cudaFree(b_send));
    CUDA_CHECK(cudaFree(b_recv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bare_peer: %s\n", e.what());
    return 1;
  }
  return 0;
}
