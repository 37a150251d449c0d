// Does the host's cost of a CUDA call change within one process, or only between processes? Events' and
// SyncPlacement's figures split by process (an event record at 0.21 or 0.38 us on an H200's host): if the
// state that sets them comes and goes within a process, a case sampled at several moments sees its mix; if
// a process keeps it for life, only more processes do. Two phases, each SECONDS long, a tick every PERIOD_S:
//   own   the thread where the scheduler puts it: the CPU it is on, one steady-clock read's cost, and the host
//         time of cudaEventRecord (timing off) and of cudaStreamQuery on an idle stream
//   cpu   the same on every CPU this process may use, pinned there in turn: which CPUs are slow at a moment
// Each cost is the median of 15 batches of 200 calls. One JSON object a line:
// {"phase", "t_s", "cpu", "clock_read_ns", "record_us", "query_us"}.
// usage: host_state_probe [SECONDS] [PERIOD_S] [DEVICE]
#include <cuda_runtime_api.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "harness/cuda/check.hpp"
#include "tests/gpu/skip_without_gpu.hpp"

namespace {
using clock_type = std::chrono::steady_clock;

// The median over 15 batches of the time one call of `f` takes, in nanoseconds.
template <typename F>
double per_call_ns(F f) {
  std::vector<double> per_call;
  for (int b = 0; b < 15; ++b) {
    const auto t0 = clock_type::now();
    for (int i = 0; i < 200; ++i) f();
    per_call.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / 200);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

struct calls {
  cudaStream_t stream = nullptr;
  cudaEvent_t event = nullptr;
  calls() {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  }
  ~calls() {
    (void)cudaEventDestroy(event);
    (void)cudaStreamDestroy(stream);
  }
  calls(const calls&) = delete;
  calls& operator=(const calls&) = delete;
};

void tick(const char* phase, double t_s, calls& c) {
  const int cpu = sched_getcpu();
  const double clock_ns = per_call_ns([] { (void)clock_type::now(); });
  const double record_ns = per_call_ns([&] { CUDA_CHECK(cudaEventRecord(c.event, c.stream)); });
  CUDA_CHECK(cudaStreamSynchronize(c.stream));
  const double query_ns = per_call_ns([&] {
    const cudaError_t e = cudaStreamQuery(c.stream);
    if (e != cudaSuccess) CUDA_CHECK(e);
  });
  std::printf(
      "{\"phase\": \"%s\", \"t_s\": %.3f, \"cpu\": %d, \"clock_read_ns\": %.2f, \"record_us\": %.4f, "
      "\"query_us\": %.4f}\n",
      phase, t_s, cpu, clock_ns, record_ns / 1e3, query_ns / 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
  const double period_s = argc > 2 ? std::atof(argv[2]) : 0.25;
  const int device = argc > 3 ? std::atoi(argv[3]) : 0;
  if (seconds <= 0 || period_s <= 0) {
    std::fprintf(stderr, "host_state_probe: SECONDS and PERIOD_S must be positive\n");
    return 2;
  }
  if (!gpu_bench::test::gpu_visible("host_state_probe")) return gpu_bench::test::kSkipCode;
  try {
    CUDA_CHECK(cudaSetDevice(device));
    calls c;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) throw std::runtime_error("sched_getaffinity failed");
    std::vector<int> cpus;
    for (int i = 0; i < CPU_SETSIZE; ++i)
      if (CPU_ISSET(i, &allowed)) cpus.push_back(i);
    const auto period = std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(period_s));
    const auto length = std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(seconds));
    auto start = clock_type::now();
    for (auto next = start; next - start < length; next += period) {
      std::this_thread::sleep_until(next);
      tick("own", std::chrono::duration<double>(clock_type::now() - start).count(), c);
    }
    std::fflush(stdout);
    start = clock_type::now();
    for (auto next = start; next - start < length; next += period) {
      std::this_thread::sleep_until(next);
      const double t_s = std::chrono::duration<double>(clock_type::now() - start).count();
      for (int cpu : cpus) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) throw std::runtime_error("sched_setaffinity failed");
        tick("cpu", t_s, c);
      }
      if (sched_setaffinity(0, sizeof allowed, &allowed) != 0) throw std::runtime_error("sched_setaffinity failed");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "host_state_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
