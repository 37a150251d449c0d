#include "harness/run/preflight.hpp"

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/context/context_format.hpp"
#include "harness/context/host_facts.hpp"
#include "harness/cuda/check.hpp"
#include "harness/run/registry.hpp"
#include "harness/run/timeline.hpp"

namespace gpu_bench {

// One line on stderr and no output file: the GPU is missing, or unusable by this build.
int check_gpu(int device) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc == cudaErrorInsufficientDriver) {
    // The runtime says this both when the driver is too old and when there is no driver at all.
    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (libcuda == nullptr) {
      std::fprintf(stderr,
                   "gpu_bench: no CUDA GPU is visible (no NVIDIA driver is installed: libcuda.so.1 not found)\n");
      return 1;
    }
    dlclose(libcuda);
    int runtime = 0, driver = 0;
    (void)cudaRuntimeGetVersion(&runtime);
    (void)cudaDriverGetVersion(&driver);
    std::fprintf(stderr,
                 "gpu_bench: the NVIDIA driver supports CUDA %s but this build needs CUDA %s; update the driver\n",
                 gpu_bench::format_cuda_version(driver).c_str(), gpu_bench::format_cuda_version(runtime).c_str());
    return 1;
  }
  if (rc != cudaSuccess || count == 0) {
    std::fprintf(stderr, "gpu_bench: no CUDA GPU is visible (%s)\n",
                 rc == cudaSuccess ? "the driver reports 0 devices" : cudaGetErrorString(rc));
    return 1;
  }
  if (device >= count) {
    std::fprintf(stderr, "gpu_bench: --device=%d does not exist: %d GPU%s visible (0 to %d)\n", device, count,
                 count == 1 ? " is" : "s are", count - 1);
    return 2;
  }
  const cudaError_t set = cudaSetDevice(device);
  if (set != cudaSuccess) {
    std::fprintf(stderr, "gpu_bench: cannot use GPU %d: %s\n", device, cudaGetErrorString(set));
    return 1;
  }
  return 0;
}

// A --sizes list whose largest size cannot be held: a case of a selected family holds its buffers_of_size
// buffers of it, on the GPU or of host memory (a copy two: d2d and bidir on the GPU, bidir of pinned host
// memory; a Latency case one), so both must have room for that many. Checked before any case runs, so a
// run is refused in one line rather than failing case after case.
std::string sizes_that_do_not_fit(const options& o, const std::string& filter, const std::vector<std::string>& names) {
  if (o.sizes_spec == "pow4" || o.sizes.empty()) return {};
  const std::uint64_t largest = *std::max_element(o.sizes.begin(), o.sizes.end());
  const size_need need = memory_for_size(largest, filter, names);
  if (need.buffers == 0) return {};
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const std::string what =
      need.buffers == 1 ? "--sizes asks for " + format_bytes(largest) + ", and a case holds one buffer of that size"
                        : "--sizes asks for copies of " + format_bytes(largest) + ", and a case holds " +
                              (need.buffers == 2 ? std::string("two") : std::to_string(need.buffers)) +
                              " buffers of that size (" + format_bytes(need.bytes) + ")";
  if (need.bytes > free_b)
    return what + ", but GPU " + std::to_string(o.device) + " has " + format_bytes(free_b) + " free of " +
           format_bytes(total_b) + "; give smaller sizes";
  if (const auto avail = host_mem_available(); avail && need.bytes > *avail)
    return what + ", but the host has " + format_bytes(*avail) + " available; give smaller sizes";
  return {};
}

// A --sizes list with a size under the smallest a selected family's cases take (its min_bytes): refused
// before any case runs, as each such case could only fail. A named sweep is each family's to trim.
std::string sizes_below_family_minimum(const options& o, const std::string& filter,
                                       const std::vector<std::string>& names) {
  if (o.sizes_spec == "pow4" || o.sizes_spec == "pow2" || o.sizes.empty()) return {};
  const std::uint64_t smallest = *std::min_element(o.sizes.begin(), o.sizes.end());
  for (const family_descriptor& f : families()) {
    if (smallest >= f.min_bytes) continue;
    std::vector<std::string> own;
    for (const std::string& n : names)
      if (n.rfind(f.name + "/", 0) == 0) own.push_back(n);
    if (count_filter_matches(filter, own) > 0)
      return "--sizes asks for " + format_bytes(smallest) + ", and a " + f.name + " case takes at least " +
             format_bytes(f.min_bytes) + "; give larger sizes, or a --benchmark_filter without " + f.name;
  }
  return {};
}

step_result take_our_flags(run_state& run, int& argc, char** argv) {
  try {
    run.opts = gpu_bench::parse_options(argc, argv);
  } catch (const gpu_bench::usage_error& e) {
    std::fprintf(stderr, "gpu_bench: %s\n", e.what());
    return 2;
  }
  gpu_bench::set_current_options(run.opts);
  if (!run.opts.timeline_path.empty()) gpu_bench::timeline::instance().enable(run.opts.timeline_path);
  return go_on;
}

// The filter and repetitions Google Benchmark will use; --preset=gate's filter in place of the user's.
step_result take_filter(run_state& run, int argc, char** argv) {
  run.benchmark_args.assign(argv, argv + argc);
  for (const auto& a : run.benchmark_args) {
    if (a.rfind("--benchmark_filter=", 0) == 0) run.filter = a.substr(19);
    if (a.rfind("--benchmark_repetitions=", 0) == 0) run.repetitions = std::max(1L, std::atol(a.c_str() + 24));
  }
  if (run.opts.preset == "gate") {
    if (!run.filter.empty()) {
      std::fprintf(stderr, "gpu_bench: --preset=gate selects its own cases; drop --benchmark_filter\n");
      return 2;
    }
    run.filter = gpu_bench::gate_filter();
    run.benchmark_args.push_back("--benchmark_filter=" + run.filter);
  }
  return go_on;
}

// Every file the run writes can be written, and the flags that need one have it.
step_result check_outputs(const run_state& run, const gpu_bench::atomic_output& out) {
  std::string why_not = out.problem();
  if (why_not.empty() && !run.opts.timeline_path.empty())
    why_not = gpu_bench::cannot_write(run.opts.timeline_path, "--timeline");
  if (why_not.empty() && run.opts.record_samples && !out.active())
    why_not = "--samples=on writes the samples into the --benchmark_out file; give one";
  if (!why_not.empty()) {
    std::fprintf(stderr, "gpu_bench: %s\n", why_not.c_str());
    return 2;
  }
  return go_on;
}

step_result initialize_benchmark(run_state& run) {
  // The case samples itself inside one Google Benchmark iteration per repetition.
  run.benchmark_args.push_back(gpu_bench::benchmark_min_time_arg(gpu_bench::benchmark_has_iteration_counts()));
  std::vector<char*> args;
  for (auto& a : run.benchmark_args) args.push_back(a.data());
  int nargs = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&nargs, args.data());
  if (nargs > 1) {
    std::fprintf(stderr, "gpu_bench: unknown flag '%s' (see --help)\n", args[1]);
    return 2;
  }
  return go_on;
}

}  // namespace gpu_bench
