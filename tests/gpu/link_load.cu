// Loads the host link the way other tenants of a shared machine do: bursts of copies in both directions at
// once (pinned, 64 MiB each, back to back on two streams), each burst and each quiet gap between them
// lasting a random 20 to 300 ms, until SECONDS have passed or the process is stopped (SIGTERM, SIGINT). The
// GPU tests run beside it to show that a loaded machine fails no test of sound code (docs/testing.md).
// Prints one JSON line when it stops: the time it ran, the share of it spent in bursts, the bytes moved.
// usage: link_load SECONDS [SEED] [DEVICE]
#include <cuda_runtime_api.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "harness/cuda/check.hpp"
#include "tests/gpu/skip_without_gpu.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) {
  g_stop = 1;
}

using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: link_load SECONDS [SEED] [DEVICE]\n");
    return 2;
  }
  const double seconds = std::atof(argv[1]);
  const unsigned seed = argc > 2 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)) : 1u;
  const int device = argc > 3 ? std::atoi(argv[3]) : 0;
  if (!gpu_bench::test::gpu_visible("link_load")) return gpu_bench::test::kSkipCode;
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  try {
    constexpr std::size_t kBytes = std::size_t{64} << 20;
    CUDA_CHECK(cudaSetDevice(device));
    void *host_in = nullptr, *host_out = nullptr, *dev_in = nullptr, *dev_out = nullptr;
    CUDA_CHECK(cudaMallocHost(&host_in, kBytes));
    CUDA_CHECK(cudaMallocHost(&host_out, kBytes));
    CUDA_CHECK(cudaMalloc(&dev_in, kBytes));
    CUDA_CHECK(cudaMalloc(&dev_out, kBytes));
    cudaStream_t up, down;
    CUDA_CHECK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> span(0.02, 0.3);
    const auto t0 = clock_type::now();
    double busy_s = 0, moved = 0;
    while (!g_stop && since(t0) < seconds) {
      const auto burst_start = clock_type::now();
      const double burst = span(rng);
      while (!g_stop && since(burst_start) < burst) {
        CUDA_CHECK(cudaMemcpyAsync(dev_in, host_in, kBytes, cudaMemcpyHostToDevice, up));
        CUDA_CHECK(cudaMemcpyAsync(host_out, dev_out, kBytes, cudaMemcpyDeviceToHost, down));
        CUDA_CHECK(cudaStreamSynchronize(up));
        CUDA_CHECK(cudaStreamSynchronize(down));
        moved += 2.0 * kBytes;
      }
      busy_s += since(burst_start);
      const auto gap_start = clock_type::now();
      const double gap = span(rng);
      while (!g_stop && since(gap_start) < gap) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const double ran = since(t0);
    std::printf("{\"ran_s\": %.2f, \"busy_share\": %.3f, \"gb_moved\": %.1f}\n", ran, ran > 0 ? busy_s / ran : 0.0,
                moved / 1e9);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "link_load: %s\n", e.what());
    return 1;
  }
  return 0;
}
