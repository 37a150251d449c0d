#pragma once
// The one timed loop every case runs through. A family says how to take one sample, what to do before
// each, and how to check the data; the loop owns the rest: warm-up, how many samples (until the median's
// confidence interval is as narrow as --noise asks, or the case's time budget is spent, never fewer than
// the minimum), samples taken while the clocks were held down, the manual time Google Benchmark reports
// (the median sample; over several placements, median_over_placements), the samples, noise_pct and sample percentile
// counters, verification, and the case's label. No family calls SetIterationTime. docs/methodology.md gives the method.
#include <benchmark/benchmark.h>

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/measure/stats.hpp"
#include "harness/run/rounds.hpp"

namespace gpu_bench {

class health_sampler;

// Which clock a case's samples come from; a host-timed case says so in its label.
enum class timer_kind { gpu_events, host_clock };

// One timed sample.
struct sample {
  sample() = default;
  explicit sample(double s, double host = 0) : seconds(s), host_s(host) {}
  double seconds = 0;             // the case's measured time, by its timer
  double host_s = 0;              // how long issuing the work held the calling thread (event-timed cases)
  double wall_s = 0;              // from the first enqueue to the host seeing the work complete (event-timed cases)
  std::vector<double> spans;      // each stream's own start-to-stop time (event timer)
  std::array<double, 2> extra{};  // figures a family documents
  int placement = 0;              // which of the case's placements it ran on (case_plan::placements)
};

// The samples behind a case's figures, in the order taken.
class sample_set {
 public:
  sample_set() = default;
  explicit sample_set(std::vector<sample> s);
  std::size_t size() const { return samples_.size(); }
  const std::vector<sample>& samples() const { return samples_; }
  // The case's time, the median sample (over several placements, the geometric mean of each one's median:
  // median_over_placements): what its rate and latency counters derive from.
  double time_s() const { return median_s_; }
  // This process's own median, whatever the rounds: what a ratio to a calibration of this process (a
  // bound, a one-stream reference) must use, as both sides then share the process's buffers and state.
  double own_time_s() const { return own_median_s_; }
  // The fastest sample: the best case a bound is made of.
  double fastest_s() const { return fastest_s_; }
  double median_of(const std::function<double(const sample&)>& f) const;
  double mean_host_s() const;
  std::vector<double> values(const std::function<double(const sample&)>& f) const;
  double noise_pct() const { return noise_pct_; }
  // The smallest change gpu-bench-compare calls against a run like this one; 0 for a single round.
  double detectable_pct() const { return detectable_pct_; }
  double sum_s() const;
  // Where the case ran in several rounds: its figure becomes the rounds' center, noise_pct the interval the
  // next run's figure falls in (combine_rounds) and detectable_pct the smallest change a comparison calls;
  // the samples stay this round's. `prior`: the spread prior the interval moderated the rounds with.
  void adopt_rounds(double center_s, double noise_pct, double detectable_pct, std::vector<double> round_times_s,
                    const spread_prior& prior);
  const std::vector<double>& round_times_s() const { return round_times_s_; }
  const spread_prior& round_prior() const { return prior_; }

 private:
  std::vector<sample> samples_;
  double median_s_ = 0;
  double own_median_s_ = 0;
  double fastest_s_ = 0;
  double noise_pct_ = 0;
  double detectable_pct_ = 0;
  std::vector<double> round_times_s_;
  spread_prior prior_;
};

// How one case is measured.
struct case_plan {
  timer_kind timer = timer_kind::gpu_events;
  std::function<void()> prepare;        // untimed, before every sample (warm-up included)
  bool prepare_on_any_cpu = false;      // prepare moves many pages through the host: it runs off the CPU
                                        // that --cpu=fast holds, and the sample back on it
  std::function<void()> reset_output;   // untimed, before every reported sample under --verify=each, before
                                        // prepare: leaves the output in a state the check rejects, so each
                                        // sample's check sees what that sample wrote
  std::function<sample()> measure;      // one sample
  std::function<std::string()> verify;  // "" or the sentence the case fails with: after the last sample,
                                        // and after every sample with --verify=each
  std::vector<std::string> notes;       // for the case's label, e.g. "ungated"
  bool already_warm = false;            // no warm-up: its work has just run in this state (a bound sampled
                                        // right after its case), or leaves nothing that a warm-up would
                                        // settle (pinning and unpinning host memory)
  int placements = 1;                   // how many placements `measure` takes its samples from in turn: the
                                        // warm-up takes one sample of each, and a round at least two of each
};

// When sampling stops.
struct sampling_rules {
  double noise_pct = 0.5;  // stop once noise_pct is at or below this ...
  double budget_s = 0.5;   // ... or once this much wall time went into sampling, or half of it into the
                           // untimed part of the samples
  int min_samples = 10;    // never before this many, unless one sample alone outlasts the budget
  double min_time_s = 0;   // and never before this much timed sample time
  double min_span_s = 0;   // nor before this much wall time since the first sample
  bool verify_each = false;
  double tick_s = 0;  // the timer's resolution: an interval within one tick is as narrow as it gets
};
// The rules --noise, --max_time_per_case, --benchmark_min_time and --verify give, for one round of the
// running case: the budget, the minimum of samples and of timed time split between its rounds.
sampling_rules rules_from_options();

// Runs a reported case: warm-up, samples, verification. Returns the samples, or nullopt when the case
// failed (already reported through fail_case).
std::optional<sample_set> run_case(benchmark::State& state, const case_plan& plan);

// The same sampling for something a case needs beside its own figure (a baseline, a bound, a reference),
// under `rules`: nothing is verified or reported as a case's own figure, but its samples count in the run's
// timed time (the counters they feed are reported beside the case's figure). In a round that is not
// the last (whose process writes no results) it measures nothing and returns no samples: the counters it
// feeds come from the last round.
sample_set calibrate(const case_plan& plan, const sampling_rules& rules);

// The median of a calibration, under the options' rules, of the plan `make_plan` gives: measured once per
// GPU and `key` in a process, for a reference several cases compare with. `make_plan` runs only then.
double calibrated_once(const std::string& key, const std::function<case_plan()>& make_plan);

// Adds a note to the running case's label ("; "-joined after the loop's own).
void add_note(benchmark::State& state, const std::string& note);

// What the loop needs to know of the case running now; the registry sets it around every case (`health`
// null as it ends). `rounds` says which rounds it takes (rounds_of_case); `span_s` is the least wall time each
// of its rounds samples for (registry.hpp's link_span), 0 for none.
void set_running_case(const std::string& name, const health_sampler* health, round_kind rounds = round_kind::full,
                      double span_s = 0);

// The sum of every sample this process timed and reported on, warm-ups aside: every case's samples and
// every calibration's (the run's gpu_bench.timed_s, with the earlier rounds' added)...
double timed_seconds_total();
// ... and of which calibrations' (gpu_bench.calibration_timed_s).
double calibration_timed_seconds_total();

// Every case run of this process, as the JSON's run_name and repetition_index name it (the case's name and
// how many runs of it came before): its sample and round times where recorded, and its wall time.
struct recorded_run {
  std::string name;
  int repetition = 0;
  std::vector<double> times_s;        // with --samples=on (and in an earlier round's process), this round's samples
  std::vector<double> round_times_s;  // each round's median, where there were several
  spread_prior round_prior;           // what their spread was moderated with (dof 0: nothing)
  double wall_s = -1;                 // from its start to its end: set-up, calibrations, sampling and checks
  double sampling_wall_s = 0;         // of which warm-up and sampling of the case itself
  double calibration_wall_s = 0;      // of which calibrations (bounds, baselines, references) measured for it
  std::vector<std::vector<double>> earlier_times_s{};  // with --samples=on, each earlier round's samples
  std::vector<int> placements{};  // with --samples=on, the placement of each of times_s where it took several
};
const std::vector<recorded_run>& recorded_runs();

}  // namespace gpu_bench
