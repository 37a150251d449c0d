// Where does a pageable copy's spread between processes come from? The CPU stages every pageable copy, so
// the candidates are the CPU the thread runs on (a virtual CPU's host core, and its fast or slow state at the
// moment) and where the buffer's pages landed. Phases, each timing every copy with CUDA events around
// cudaMemcpyAsync on one stream, the median of its repetitions:
//   cpu    the thread pinned on every CPU it may use, in turn, PASSES times over: one buffer for all, touched
//          at the start; then a buffer allocated and touched on that CPU ("fresh"). A CPU's cost that holds
//          from pass to pass is the CPU's own; one that moves is its state at the moment.
//   own    the thread where the scheduler puts it, as gpu_bench's pageable cases run, PASSES times.
// Also a host memcpy of 16 MiB between two pageable buffers, the CPU's own copy rate.
// MODE renew asks instead which renewal moves them, the thread free throughout. Each pass is a context of its
// own (after cudaDeviceReset), which times the copies three times 0.2 s apart from one buffer touched at the
// process's start ("same", the moment alone renewed), then once from a buffer allocated and touched in that
// pass ("fresh"). Where the passes' contexts differ as much as processes do, the state is the context's (the
// driver stages through buffers of its own); where "fresh" moves and "same" holds, it is where the pages landed.
// MODE held is renew with the thread held in the fast state as gpu_bench's --cpu=fast holds it: the check
// before every copy, so what is left between moments is what a held round still meets.
// One JSON object a line: {"phase", "pass", "cpu", "clock_read_ns", "case", "us"}; "cpu" is where the
// thread was when the case ended. In renew and held modes also "context" (the pass), "moment" (0 to 2, "same"
// only) and "held" (0 or 1).
// usage: pageable_probe [PASSES] [DEVICE] [cpu|renew|held]
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

#include "harness/context/host_facts.hpp"
#include "harness/cuda/check.hpp"
#include "harness/run/options.hpp"
#include "harness/run/thread_cpu.hpp"
#include "tests/gpu/skip_without_gpu.hpp"

namespace {
using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One steady-clock read's cost on this CPU now, the median of 15 batches of 200.
double clock_read_ns() {
  return gpu_bench::steady_clock_read_ns(15, 200);
}

// Page-aligned malloc'd memory, every page touched by the calling thread.
struct pageable {
  char* p = nullptr;
  explicit pageable(std::size_t bytes) {
    if (posix_memalign(reinterpret_cast<void**>(&p), 4096, bytes) != 0) throw std::runtime_error("posix_memalign");
    std::memset(p, 1, bytes);
  }
  ~pageable() { std::free(p); }
  pageable(const pageable&) = delete;
  pageable& operator=(const pageable&) = delete;
};

struct gpu {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  void* dev = nullptr;
  explicit gpu(std::size_t bytes) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaMalloc(&dev, bytes));
    CUDA_CHECK(cudaMemset(dev, 2, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~gpu() {
    (void)cudaFree(dev);
    (void)cudaEventDestroy(stop);
    (void)cudaEventDestroy(start);
    (void)cudaStreamDestroy(stream);
  }
  gpu(const gpu&) = delete;
  gpu& operator=(const gpu&) = delete;

  // The median event time of `reps` copies, in microseconds.
  double copy_us(bool h2d, char* host, std::size_t bytes, int reps) {
    std::vector<double> us;
    for (int r = 0; r < reps; ++r) {
      gpu_bench::hold_fast_cpu();  // nothing unless held mode set the fast policy
      CUDA_CHECK(cudaEventRecord(start, stream));
      if (h2d)
        CUDA_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, stream));
      else
        CUDA_CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, stream));
      CUDA_CHECK(cudaEventRecord(stop, stream));
      CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      us.push_back(ms * 1e3);
    }
    return median(us);
  }
};

// Where a line is printed in renew mode: the context and moment it belongs to (-1: not that mode's).
int g_context = -1, g_moment = -1;
bool g_held = false;

void emit(const char* phase, int pass, double clock_ns, const std::string& name, double us) {
  std::printf("{\"phase\": \"%s\", \"pass\": %d, \"cpu\": %d, \"clock_read_ns\": %.2f, \"case\": \"%s\", \"us\": %.3f",
              phase, pass, sched_getcpu(), clock_ns, name.c_str(), us);
  if (g_context >= 0)
    std::printf(", \"context\": %d, \"moment\": %d, \"held\": %d", g_context, g_moment, g_held ? 1 : 0);
  std::printf("}\n");
}

constexpr std::size_t kLarge = 256u << 20;
constexpr std::size_t kMid = 16u << 20;

struct sized {
  std::size_t bytes;
  int reps;
  const char* label;
};
constexpr sized kSizes[] = {{4, 31, "4B"}, {1u << 20, 15, "1MiB"}, {kMid, 7, "16MiB"}, {kLarge, 3, "256MiB"}};

// Every copy of kSizes each way from `host`, and the CPU's own memcpy rate.
void measure(const char* phase, int pass, gpu& g, char* host, char* other) {
  const double clock_ns = clock_read_ns();
  for (const sized& s : kSizes) {
    emit(phase, pass, clock_ns, std::string("h2d_") + s.label, g.copy_us(true, host, s.bytes, s.reps));
    emit(phase, pass, clock_ns, std::string("d2h_") + s.label, g.copy_us(false, host, s.bytes, s.reps));
  }
  std::vector<double> us;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = clock_type::now();
    std::memcpy(other, host, kMid);
    us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
  }
  emit(phase, pass, clock_ns, "memcpy_16MiB", median(us));
}

void pin(int cpu) {
  if (const std::string why = gpu_bench::pin_thread_to_cpu(cpu); !why.empty()) throw std::runtime_error(why);
}

}  // namespace

// Renew mode: each pass a context of its own, timing from the process's buffer at three moments and from a
// buffer of its own.
void renew(int passes, int device) {
  pageable shared(kLarge), other(kMid);
  for (int pass = 0; pass < passes; ++pass) {
    if (pass > 0) CUDA_CHECK(cudaDeviceReset());
    CUDA_CHECK(cudaSetDevice(device));
    gpu g(kLarge);
    g.copy_us(true, shared.p, kLarge, 1);  // this context's staging set up before any figure
    g_context = pass;
    for (g_moment = 0; g_moment < 3; ++g_moment) {
      if (g_moment > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      measure("same", pass, g, shared.p, other.p);
    }
    g_moment = -1;
    pageable fresh(kLarge);
    measure("fresh", pass, g, fresh.p, other.p);
    std::fflush(stdout);
  }
}

int main(int argc, char** argv) {
  const int passes = argc > 1 ? std::atoi(argv[1]) : 3;
  const int device = argc > 2 ? std::atoi(argv[2]) : 0;
  const std::string mode = argc > 3 ? argv[3] : "cpu";
  if (passes <= 0 || (mode != "cpu" && mode != "renew" && mode != "held")) {
    std::fprintf(stderr, "pageable_probe: PASSES must be positive and MODE cpu, renew or held\n");
    return 2;
  }
  if (!gpu_bench::test::gpu_visible("pageable_probe")) return gpu_bench::test::kSkipCode;
  if (mode == "renew" || mode == "held") {
    try {
      if (mode == "held") {
        g_held = true;
        gpu_bench::set_thread_cpu_policy(gpu_bench::kCpuFast, gpu_bench::allowed_cpus());
        gpu_bench::place_thread_for_case(true);
      }
      renew(passes, device);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pageable_probe: %s\n", e.what());
      return 1;
    }
    return 0;
  }
  try {
    CUDA_CHECK(cudaSetDevice(device));
    const std::vector<int> cpus = gpu_bench::allowed_cpus();
    if (cpus.empty()) throw std::runtime_error("the kernel does not say which CPUs this process may use");
    cpu_set_t allowed;  // to let the thread go again for each pass's "own" phase
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) throw std::runtime_error("sched_getaffinity failed");
    gpu g(kLarge);
    pageable shared(kLarge), other(kMid);
    g.copy_us(true, shared.p, kLarge, 1);  // the driver's staging set up before any figure
    for (int pass = 0; pass < passes; ++pass) {
      if (sched_setaffinity(0, sizeof allowed, &allowed) != 0) throw std::runtime_error("sched_setaffinity failed");
      measure("own", pass, g, shared.p, other.p);
      for (int cpu : cpus) {
        pin(cpu);
        measure("cpu", pass, g, shared.p, other.p);
        pageable fresh(kMid);
        const double clock_ns = clock_read_ns();
        emit("fresh", pass, clock_ns, "h2d_16MiB", g.copy_us(true, fresh.p, kMid, 7));
        emit("fresh", pass, clock_ns, "d2h_16MiB", g.copy_us(false, fresh.p, kMid, 7));
      }
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pageable_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
