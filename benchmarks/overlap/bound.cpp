#include "benchmarks/overlap/bound.hpp"

#include <algorithm>
#include <vector>

#include "harness/measure/planted.hpp"

namespace gpu_bench {
namespace {

// One sample of `measure`, taken twice where it lasts under a millisecond, the second kept: a short sample
// right after another kind of work pays for what that work left behind (another stream's engine, another
// kernel), which its own back-to-back samples never do.
template <typename Measure>
sample settled(Measure measure) {
  const sample first = measure();
  return first.seconds < 1e-3 ? measure() : first;
}

}  // namespace

paired_bound measure_paired_bound(bound_stages& st, pipeline_run& run, int chunks) {
  std::vector<stage_times> turns;
  std::vector<double> pipeline_s;
  pipeline::op_marks marks(chunks);
  case_plan plan;
  plan.measure = [&] {
    const double p = settled([&] { return run.once(); }).seconds;
    stage_times turn{
        settled([&] { return st.in.measure(); }).seconds, settled([&] { return st.out.measure(); }).seconds,
        settled([&] { return st.both.measure(); }).seconds, settled([&] { return st.kernel.measure(); }).seconds};
    if (st.bidir) {
      const sample two_ways = settled([&] { return st.bidir->measure(); });
      turn.bidir_in_s = two_ways.spans.at(0);
      turn.bidir_out_s = two_ways.spans.at(1);
    }
    turns.push_back(turn);
    // The pipeline once more with its operations bracketed, for their spans alone: an event between every
    // two operations on 8 or 16 streams slowed the pipeline itself by up to a fifth on an H100 (streams
    // beyond the hardware queues share them, and the events order them), so the efficiency's own pipeline
    // (p above) carries none.
    run.p.marks = &marks;
    const double marked = run.once().seconds;
    run.p.marks = nullptr;
    turns.push_back(own_ops_turn(marks.spans(), chunks));
    pipeline_s.push_back(p);
    return sample(p + marked + turn.in_s + turn.out_s + turn.both_s + turn.kernel_s +
                  std::max(turn.bidir_in_s, turn.bidir_out_s));
  };
  // The case's own samples have just run on these buffers and streams: the turns need no warm-up turn, and
  // a stage slowed by a first use falls in one turn of five, which the fastest does not see.
  plan.already_warm = true;
  sampling_rules rules = calibration_rules(5);
  rules.min_time_s = 0.02;
  rules.budget_s = 0.3;     // five turns, unless one alone outlasts this (then three)
  rules.noise_pct = 100.0;  // and no more than five: the turns are paired, not a median to narrow
  (void)calibrate(plan, rules);
  paired_bound out;
  if (turns.empty()) return out;
  out.fastest = fastest_stages(turns);
  if (planted("overlap_bound")) {
    const bound_lines l = overlap_bound_lines(out.fastest, chunks);
    out.ideal_s = std::max({l.kernels, l.in, l.out});
  } else {
    out.ideal_s = overlap_ideal_s(out.fastest, chunks);
  }
  out.efficiency = efficiency_over_turns(out.ideal_s, pipeline_s);
  return out;
}

}  // namespace gpu_bench
