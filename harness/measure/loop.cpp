#include "harness/measure/loop.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>

#include "harness/context/health.hpp"
#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/measure/stats.hpp"
#include "harness/measure/streams.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "harness/run/rounds.hpp"
#include "harness/run/thread_cpu.hpp"

namespace gpu_bench {
namespace {

using clock_type = std::chrono::steady_clock;

struct running {
  std::string name;
  int repetition = 0;
  int rounds = 0;     // the rounds this case takes (rounds_of_case); 0 outside a registered case's run
  double span_s = 0;  // the least wall time each of its rounds samples for
  std::chrono::steady_clock::time_point started;
  const health_sampler* health = nullptr;
  std::vector<std::string> notes;
  double sampling_wall_s = 0;
  double calibration_wall_s = 0;
};
std::map<std::string, int> g_runs_of;  // runs started per case name
running g_running;
double g_timed_s = 0;              // every reported sample's time, calibrations' included
double g_calibration_timed_s = 0;  // of which calibrations'
std::vector<recorded_run> g_recorded;

// The rounds of the case running now: --rounds where no registered case runs (a unit test's plan).
int running_rounds() {
  return g_running.rounds > 0 ? g_running.rounds : current_options().rounds;
}

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

sample take(const case_plan& plan, bool reset_output) {
  // Under --cpu=fast, a case its family's fast_cpu rule names samples on a fast CPU. A preparation that moves
  // many pages through the host runs off that CPU, and the thread goes back to it after.
  if (plan.prepare_on_any_cpu)
    release_fast_cpu();
  else
    hold_fast_cpu();
  if (reset_output && plan.reset_output) plan.reset_output();
  if (plan.prepare) plan.prepare();
  if (plan.prepare_on_any_cpu) hold_fast_cpu();
  return plan.measure();
}

// Untimed: a sample of every placement and at least a millisecond, so first-touch costs and a link waking
// from a low-power state stay out (streams, buffers and kernels are made and loaded before any case).
void warm_up(const case_plan& plan) {
  const auto until = clock_type::now() + std::chrono::milliseconds(1);
  const int first = std::max(1, plan.placements);
  for (int i = 0; i < std::max(1000, first) && (i < first || clock_type::now() < until); ++i) (void)take(plan, false);
}

struct sampled {
  std::vector<sample> kept;
  int throttled = 0;
  bool one_sample_over_budget = false;
  bool short_of_min_time = false;  // stopped by the wall-time cap before --benchmark_min_time's timed time
  std::string failure;             // a --verify=each check that failed
};

// Samples until the rules say stop. Samples taken while NVML saw the clocks held down by power or heat
// are dropped (and counted): a figure describes the GPU at its clocks.
sampled sample_until(const case_plan& plan, const sampling_rules& rules, bool verify_each) {
  constexpr std::size_t kMaxSamples = 10'000'000;
  sampled out;
  std::vector<double> seconds;
  std::vector<int> placements;
  std::vector<std::pair<double, double>> windows;  // each kept sample's wall window, seconds since t0
  const auto t0 = clock_type::now();
  double timed = 0;
  std::size_t next_check = static_cast<std::size_t>(std::max(1, rules.min_samples));
  std::size_t checked = 0;  // samples already screened for throttling
  while (out.kept.size() < kMaxSamples) {
    const double begin = seconds_since(t0);
    sample s = take(plan, verify_each);
    const double end = seconds_since(t0);
    if (verify_each && plan.verify) {
      out.failure = plan.verify();
      if (!out.failure.empty()) return out;
    }
    timed += s.seconds;
    out.kept.push_back(std::move(s));
    windows.emplace_back(begin, end);
    if (end - begin > rules.budget_s) out.one_sample_over_budget = true;
    const std::size_t n = out.kept.size();
    // A minimum of timed time holds a case no longer than twice that time, or the budget if larger, of wall
    // time: so only samples mostly untimed fall short of it, which sampling to it could keep for hours
    // (microseconds timed of milliseconds of wall).
    const bool timed_enough = timed >= rules.min_time_s || end >= std::max(rules.budget_s, 2 * rules.min_time_s);
    const bool enough_time = timed_enough && end >= rules.min_span_s;
    if (out.one_sample_over_budget && n >= 3 && enough_time) break;
    if (n < static_cast<std::size_t>(rules.min_samples) || !enough_time) continue;
    if (end >= rules.budget_s) break;
    // Samples that are mostly host work around the timed part (a gate and a sync around a few microseconds
    // of copy, thousands of enqueues, the untimed half of an allocation pair, a managed buffer moved back)
    // buy a round little precision for their cost: such a round stops once that untimed time alone has
    // spent a quarter of its share of the budget. Its figure's interval comes from the rounds' spread anyway.
    if (end - timed >= rules.budget_s / 4) break;
    if (n < next_check) continue;
    next_check = n + std::max<std::size_t>(1, n / 8);
    if (g_running.health) {
      for (std::size_t i = checked; i < out.kept.size();) {
        const auto w = windows[i];
        const double margin = g_running.health->period_s();  // a reading may lag the sample by a period
        if (g_running.health->held_down_between(t0, w.first - margin, w.second + margin)) {
          out.kept.erase(out.kept.begin() + static_cast<std::ptrdiff_t>(i));
          windows.erase(windows.begin() + static_cast<std::ptrdiff_t>(i));
          ++out.throttled;
        } else {
          ++i;
        }
      }
      checked = out.kept.size();
      if (out.kept.size() < static_cast<std::size_t>(rules.min_samples)) continue;
    }
    seconds.clear();
    placements.clear();
    for (const sample& x : out.kept) {
      seconds.push_back(x.seconds);
      placements.push_back(x.placement);
    }
    const placed_median m = median_over_placements(seconds, placements);
    // Samples that spread over a tick or two can never narrow below it: more of them only cost time.
    const double tick_pct = 100.0 * rules.tick_s / m.center;
    if (m.noise_pct <= std::max(rules.noise_pct, tick_pct)) break;
  }
  out.short_of_min_time = timed < rules.min_time_s;
  return out;
}

// Every sample of the case's rounds, each earlier round's (recorded by its process) and this one's: one
// sample's spread over every process that measured the case, as its p50, p90 and p99, in microseconds.
void report_sample_percentiles(benchmark::State& state, const std::vector<double>& own_s) {
  std::vector<double> pooled;
  for (const auto& round : prior_round_samples(g_running.name, g_running.repetition))
    pooled.insert(pooled.end(), round.begin(), round.end());
  pooled.insert(pooled.end(), own_s.begin(), own_s.end());
  const std::vector<double> q = percentiles(std::move(pooled), {0.50, 0.90, 0.99});
  state.counters["sample_p50_us"] = q[0] * 1e6;
  state.counters["sample_p90_us"] = q[1] * 1e6;
  state.counters["sample_p99_us"] = q[2] * 1e6;
}

void set_label(benchmark::State& state) {
  std::string label;
  for (const auto& n : g_running.notes) label += (label.empty() ? "" : "; ") + n;
  if (!label.empty()) state.SetLabel(label);
}

}  // namespace

sample_set::sample_set(std::vector<sample> s) : samples_(std::move(s)) {
  const std::vector<double> seconds = values([](const sample& x) { return x.seconds; });
  std::vector<int> placements;
  for (const sample& x : samples_) placements.push_back(x.placement);
  const placed_median m = median_over_placements(seconds, placements);
  median_s_ = m.center;
  own_median_s_ = median_s_;
  fastest_s_ = seconds.empty() ? 0 : *std::min_element(seconds.begin(), seconds.end());
  noise_pct_ = m.noise_pct;
}

double sample_set::median_of(const std::function<double(const sample&)>& f) const {
  std::vector<double> v = values(f);
  std::sort(v.begin(), v.end());
  return median_of_sorted(v);
}

double sample_set::mean_host_s() const {
  if (samples_.empty()) return 0;
  double sum = 0;
  for (const auto& s : samples_) sum += s.host_s;
  return sum / static_cast<double>(samples_.size());
}

std::vector<double> sample_set::values(const std::function<double(const sample&)>& f) const {
  std::vector<double> v;
  v.reserve(samples_.size());
  for (const auto& s : samples_) v.push_back(f(s));
  return v;
}

void sample_set::adopt_rounds(double center_s, double noise_pct, double detectable_pct,
                              std::vector<double> round_times_s, const spread_prior& prior) {
  median_s_ = center_s;
  noise_pct_ = noise_pct;
  detectable_pct_ = detectable_pct;
  round_times_s_ = std::move(round_times_s);
  prior_ = prior;
}

double sample_set::sum_s() const {
  double sum = 0;
  for (const auto& s : samples_) sum += s.seconds;
  return sum;
}

sampling_rules rules_from_options() {
  const options& o = current_options();
  sampling_rules r;
  const int rounds = std::max(1, running_rounds());
  // The figure is the center of the rounds' medians (center_of_rounds): its share of within-round noise is one
  // round's times sqrt(c_R) (center_variance_factor), so each round needs only --noise over that for the
  // figure to meet --noise.
  r.noise_pct = o.noise_pct / std::sqrt(center_variance_factor(rounds));
  r.budget_s = o.max_time_per_case_s / rounds;
  r.min_samples = rounds == 1 ? o.min_samples : std::max(kMinRoundSamples, (o.min_samples + rounds - 1) / rounds);
  r.min_time_s = o.min_time_s / rounds;
  r.min_span_s = g_running.span_s;
  r.verify_each = o.verify_each;
  return r;
}

namespace {

double timer_tick_s(timer_kind timer) {
  if (timer == timer_kind::host_clock) return std::chrono::duration<double>(clock_type::duration(1)).count();
  try {
    return event_tick_s();
  } catch (const cuda_error&) {
    // No GPU to ask: the samples then come from elsewhere (a unit test's plan), and carry no event tick.
    return 0.0;
  }
}

// This round's figure, combined with the earlier rounds' where this process runs the last of several.
void combine_with_prior_rounds(sample_set& set, double tick_s) {
  if (!(set.time_s() > 0)) return;  // no time to be relative to (nothing measurable): noise_pct stays as it is
  // What this round's own samples and the timer's tick resolve: no interval is narrower.
  const double floor = std::max(set.noise_pct() / 100.0, tick_s / set.time_s());
  const options& o = current_options();
  if (o.rounds < 2 || o.round != 0) {
    set.adopt_rounds(set.time_s(), 100.0 * floor, 0.0, {}, {});
    return;
  }
  std::vector<double> times = prior_round_times(g_running.name, g_running.repetition);
  times.push_back(set.time_s());
  // A few rounds can agree by chance: their spread is moderated by that of the cases shown to vary alike.
  const spread_prior prior = case_spread_prior(g_running.name, tick_s);
  const round_figure fig = combine_rounds(times, floor, prior);
  set.adopt_rounds(fig.center, 100.0 * fig.half_width, times.size() > 1 ? 100.0 * fig.detectable_half_width : 0.0,
                   times, prior);
  if (static_cast<int>(times.size()) < running_rounds())
    g_running.notes.push_back(std::to_string(times.size()) + " of " + std::to_string(running_rounds()) + " rounds");
}

}  // namespace

std::optional<sample_set> run_case(benchmark::State& state, const case_plan& plan) {
  sampling_rules rules = rules_from_options();
  rules.tick_s = timer_tick_s(plan.timer);
  // Each placement in a round's median at least twice: one sample of each would leave the median to one.
  rules.min_samples = std::max(rules.min_samples, 2 * plan.placements);
  g_running.notes.clear();
  if (plan.timer == timer_kind::host_clock) g_running.notes.emplace_back("host clock");
  g_running.notes.insert(g_running.notes.end(), plan.notes.begin(), plan.notes.end());
  const auto sampling_started = clock_type::now();
  if (!plan.already_warm) warm_up(plan);
  std::optional<sample_set> set;
  sampled taken;
  for (auto _ : state) {
    taken = sample_until(plan, rules, rules.verify_each);
    if (!taken.failure.empty()) {
      fail_case(state, taken.failure);  // before leaving the loop, as Google Benchmark requires
      break;
    }
    set.emplace(std::move(taken.kept));
    combine_with_prior_rounds(*set, rules.tick_s);
    // Never zero: Google Benchmark 1.7 would run the function again to reach its minimum time.
    state.SetIterationTime(std::max(set->time_s(), 1e-12));
  }
  g_running.sampling_wall_s += seconds_since(sampling_started);
  if (!taken.failure.empty() || !set) return std::nullopt;
  if (plan.verify && !rules.verify_each) {
    if (const std::string bad = plan.verify(); !bad.empty()) {
      fail_case(state, bad);
      return std::nullopt;
    }
  }
  state.counters["samples"] = static_cast<double>(set->size());
  state.counters["noise_pct"] = set->noise_pct();
  if (set->detectable_pct() > 0) state.counters["detectable_pct"] = set->detectable_pct();
  if (!set->round_times_s().empty()) state.counters["rounds"] = static_cast<double>(set->round_times_s().size());
  if (taken.throttled > 0) state.counters["throttled_samples"] = taken.throttled;
  std::vector<double> times = set->values([](const sample& s) { return s.seconds; });
  report_sample_percentiles(state, times);
  if (taken.one_sample_over_budget) g_running.notes.emplace_back("one sample exceeds --max_time_per_case");
  if (taken.short_of_min_time)
    g_running.notes.emplace_back("its samples are mostly untimed: less timed time than --benchmark_min_time");
  set_label(state);
  g_timed_s += set->sum_s();
  // An earlier round's process writes its samples for the last round's percentiles.
  const options& o = current_options();
  const bool keep_samples = o.record_samples || o.round > 0;
  if (keep_samples || !set->round_times_s().empty()) {
    g_recorded.push_back({g_running.name, g_running.repetition, keep_samples ? std::move(times) : std::vector<double>{},
                          set->round_times_s(), set->round_prior()});
    if (o.record_samples) {
      g_recorded.back().earlier_times_s = prior_round_samples(g_running.name, g_running.repetition);
      if (plan.placements > 1)
        for (const sample& s : set->samples()) g_recorded.back().placements.push_back(s.placement);
    }
  }
  return set;
}

sample_set calibrate(const case_plan& plan, const sampling_rules& rules) {
  // A round run for its medians alone (not the last): what a calibration feeds (a bound, a reference, a
  // counter beside the headline) is reported from the last round only, so it is not measured here.
  if (current_options().round > 0) return sample_set{};
  const auto started = clock_type::now();
  if (!plan.already_warm) warm_up(plan);
  sample_set set(sample_until(plan, rules, false).kept);
  g_running.calibration_wall_s += seconds_since(started);
  g_timed_s += set.sum_s();
  g_calibration_timed_s += set.sum_s();
  return set;
}

double calibrated_once(const std::string& key, const std::function<case_plan()>& make_plan) {
  static std::map<std::pair<int, std::string>, double> measured;
  const auto k = std::make_pair(current_device(), key);
  if (const auto it = measured.find(k); it != measured.end()) return it->second;
  return measured[k] = calibrate(make_plan(), rules_from_options()).time_s();
}

void add_note(benchmark::State& state, const std::string& note) {
  g_running.notes.push_back(note);
  set_label(state);
}

void set_running_case(const std::string& name, const health_sampler* health, round_kind rounds, double span_s) {
  if (health) {  // a run starts
    g_running.repetition = g_runs_of[name]++;
    g_running.rounds = rounds_of_case(rounds);
    g_running.started = clock_type::now();
    g_running.sampling_wall_s = g_running.calibration_wall_s = 0;
  } else if (g_running.name == name) {  // the run ends: what it cost, set-up and checks included
    // run_case recorded this run's times last, if it recorded any.
    if (g_recorded.empty() || g_recorded.back().name != name || g_recorded.back().repetition != g_running.repetition)
      g_recorded.push_back({name, g_running.repetition, {}, {}, {}});
    g_recorded.back().wall_s = seconds_since(g_running.started);
    g_recorded.back().sampling_wall_s = g_running.sampling_wall_s;
    g_recorded.back().calibration_wall_s = g_running.calibration_wall_s;
  }
  g_running.name = name;
  g_running.health = health;
  if (!health) g_running.rounds = 0;  // outside a case's run, --rounds
  g_running.span_s = health ? span_s : 0;
  g_running.notes.clear();
}

double timed_seconds_total() {
  return g_timed_s;
}

double calibration_timed_seconds_total() {
  return g_calibration_timed_s;
}

const std::vector<recorded_run>& recorded_runs() {
  return g_recorded;
}

}  // namespace gpu_bench
