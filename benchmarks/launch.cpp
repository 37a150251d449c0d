// Launch: the cost of launching K empty kernels, one stream launch each or one replay of a CUDA graph
// holding all K. GPU time from events behind the gate (the launches are all queued before the GPU starts);
// host time is how long issuing them held the CPU. Both are reported per kernel.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/cuda/check.hpp"
#include "harness/measure/gate.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/rates.hpp"
#include "harness/measure/streams.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "harness/run/registry.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {
namespace {

// A captured graph of `kernels` empty launches, instantiated once per run.
class empty_graph {
 public:
  explicit empty_graph(int kernels) {
    cuda_stream capture;
    CUDA_CHECK(cudaStreamBeginCapture(capture.get(), cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < kernels; ++k) kernels::empty(capture.get());
    CUDA_CHECK(cudaStreamEndCapture(capture.get(), &graph_));
    CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  ~empty_graph() {
    if (exec_) CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_));
    if (graph_) CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph_));
  }
  empty_graph(const empty_graph&) = delete;
  empty_graph& operator=(const empty_graph&) = delete;
  void launch(cudaStream_t s) const { CUDA_CHECK(cudaGraphLaunch(exec_, s)); }
  std::size_t nodes() const {
    std::size_t n = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &n));
    return n;
  }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Which of the driver's queues a stream took moves a small copy's fixed cost (docs/methodology.md, "Small
// copies and their placement"). The samples take --placements streams in turn, each a set of its own, so that
// a round's figure is not one queue's draw.
void run_launch(benchmark::State& state, bool graph, int kernels_n) {
  std::vector<stream_set*> places;
  for (int p = 0; p < current_options().placements; ++p) places.push_back(&stream_set::cached(1, p));
  std::size_t at = 0;
  stream_set& ss = *places.front();
  std::unique_ptr<empty_graph> g;
  if (graph) {
    g = std::make_unique<empty_graph>(kernels_n);
    if (g->nodes() != static_cast<std::size_t>(kernels_n))
      return fail_case(
          state, "the captured graph holds " + std::to_string(g->nodes()) + " nodes, not " + std::to_string(kernels_n));
    g->launch(ss.origin());  // the first launch uploads the graph: not what is measured
    ss.synchronize();
  }
  auto enqueue = [&] {
    const cudaStream_t s = places[at]->origin();
    if (graph) {
      g->launch(s);
    } else {
      for (int k = 0; k < kernels_n; ++k) kernels::empty(s);
    }
  };
  case_plan plan;
  plan.placements = static_cast<int>(places.size());
  plan.measure = [&] {
    sample s = places[at]->measure(true, enqueue);
    s.placement = static_cast<int>(at);
    at = (at + 1) % places.size();
    return s;
  };
  const auto t = run_case(state, plan);
  if (!t) return;
  state.counters["per_kernel_us"] = t->time_s() / kernels_n * 1e6;
  if (places.size() > 1) state.counters["placements"] = static_cast<double>(places.size());
  state.counters["host_per_kernel_us"] = t->mean_host_s() / kernels_n * 1e6;
  report_rates(state, *t, case_rates{});
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "Launch";
  f.summary = "launching empty kernels: stream launches against one CUDA graph replay";
  f.axes = {{"op", "{empty_kernel,graph_replay}"}, {"kernels", "{1,10,100}"}};
  f.help = f.name_pattern() +
           "    empty_kernel: K launches of an empty kernel on one stream; graph_replay: one cudaGraphLaunch of a\n"
           "    graph captured from the same K launches. GPU time behind the gate, so the launches are all queued\n"
           "    before the GPU starts; samples take --placements streams in turn (the figure: the geometric mean\n"
           "    of each one's median). counters: per_kernel_us (GPU), host_per_kernel_us, host_blocked_us,\n"
           "    placements.\n";
  f.headline = "per_kernel_us";
  f.unit = "us";
  f.better_is = better::lower;
  f.kind = headline_kind::time;
  f.host_link = "no";
  f.fast_cpu = "yes";
  f.machine_variance = "yes";
  f.small_rounds = "yes";
  f.machine_variance_cause = kHostCpuStateCause;
  f.plot = "x=kernels;series=op";
  f.scope = family_scope::single_gpu;
  f.smoke = "^Launch/.*kernels:10/";
  f.register_cases = [] {
    for (bool graph : {false, true})
      for (int k : {1, 10, 100}) {
        case_name name("Launch");
        name.add("op", graph ? "graph_replay" : "empty_kernel").add("kernels", k);
        register_case(name, [graph, k](benchmark::State& st) { run_launch(st, graph, k); });
      }
  };
}};

}  // namespace
}  // namespace gpu_bench
