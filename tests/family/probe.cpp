// Probe: a family that exists only to prove the harness takes a new family from its own files alone. It
// fills N bytes of device memory with cudaMemsetAsync per sample; N bytes counted; GPU time from gated
// events; gbps = N / GPU time. Built into gpu_bench_probe (tests/CMakeLists.txt), never into gpu_bench.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/cuda/check.hpp"
#include "harness/cuda/handles.hpp"
#include "harness/measure/gate.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/rates.hpp"
#include "harness/measure/streams.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/run/registry.hpp"

namespace gpu_bench {
namespace {

void run_probe(benchmark::State& state, std::uint64_t bytes) {
  device_buffer& dst = buffer_cache::instance().device(bytes, buffer_slot::h2d);
  stream_set& streams = stream_set::cached(1);
  int value = 0;
  case_plan plan;
  plan.prepare = [&] { value = (value + 1) & 0xff; };
  plan.measure = [&] {
    return streams.measure(true, [&] { CUDA_CHECK(cudaMemsetAsync(dst.data(), value, bytes, streams.origin())); });
  };
  plan.verify = [&] {
    std::vector<unsigned char> back(bytes);
    CUDA_CHECK(cudaMemcpy(back.data(), dst.data(), bytes, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < back.size(); ++i)
      if (back[i] != static_cast<unsigned char>(value))
        return "data check failed: byte " + std::to_string(i) + " is " + std::to_string(back[i]) + ", not " +
               std::to_string(value);
    return std::string();
  };
  const auto set = run_case(state, plan);
  if (!set) return;
  case_rates rates;
  rates.bytes = static_cast<double>(bytes);
  rates.bytes_per_second = false;
  rates.host_blocked = host_time::none;
  report_rates(state, *set, rates);
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "Probe";
  f.summary = "a test family: cudaMemsetAsync of N bytes of device memory";
  f.axes = {{"op", "memset"}, {"bytes", "{65536,16777216}"}};
  f.help = f.name_pattern() + "    counters  gbps (N / GPU time, GB = 1e9 B).\n";
  f.headline = "gbps";
  f.unit = "GB/s";
  f.better_is = better::higher;
  f.kind = headline_kind::rate;
  f.host_link = "no";
  f.plot = "x=bytes;series=op";
  f.scope = family_scope::single_gpu;
  f.smoke = "^Probe/";
  f.register_cases = [] {
    for (std::uint64_t n : {std::uint64_t{64} << 10, std::uint64_t{16} << 20}) {
      case_name name("Probe");
      name.add("op", "memset").add("bytes", n);
      register_case(name, [n](benchmark::State& st) { run_probe(st, n); });
    }
  };
}};

}  // namespace
}  // namespace gpu_bench
