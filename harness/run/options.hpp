#pragma once
// gpu_bench's own flags, taken out of argv before Google Benchmark sees the rest.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpu_bench {

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Sampling stops once a case's noise_pct (the relative half-width of the 95% confidence interval of its
// median) is at or below the target, or its time budget is spent; never before kMinSamples samples.
inline constexpr double kDefaultNoisePct = 0.5;
// Chosen so the whole default matrix stays within 5 minutes on one H100: most cases reach the noise target
// long before it, and the budget caps the ones a shared host link keeps noisy.
inline constexpr double kDefaultMaxTimePerCaseS = 0.5;
// At 30 samples the 95% interval of the median lies between the 10th and 21st: a third of the samples may
// be outliers on either side without moving it. Long cases are cheap to sample this much more, which also
// keeps most of a run's time in measurement rather than in set-up.
inline constexpr int kMinSamples = 30;

// Each case is measured in this many rounds, each in its own process (harness/run/rounds.hpp): the
// variance between runs enters per process, so only rounds in separate processes can say how far the next
// run may differ. Three is the fewest that give an interval a case's own rounds can vouch for; the
// sampling budget and the minimum of samples are split between the rounds.
inline constexpr int kDefaultRounds = 3;
// Copies at the host link's throughput (a family's link_bound cases) take this many rounds instead: on a
// link that others' traffic shares, their time moves with that traffic over seconds to minutes, so their
// figure needs more moments of the link than of anything else. The extra rounds hold only those cases, and
// cost about a second each on one H100.
inline constexpr int kDefaultLinkRounds = 5;
// A link-bound case whose rounds disagree takes more of them, up to this many in all, until the change
// compare could detect in it is projected to come to kDefaultTargetDetectablePct (rounds_needed). Fifteen
// rounds give a case whose rounds spread by 3.5% (a bidirectional copy on a busy link) a detectable change
// near 2.7%; the extra rounds hold only the cases that need them.
inline constexpr int kDefaultLinkMaxRounds = 15;
// The detectable change, percent, that extra rounds aim at: a change 1.33 times the detectable one is called
// in about three of four comparisons, so 2% changes are seen where the rounds allow 1.5%.
inline constexpr double kDefaultTargetDetectablePct = 1.5;
// A round's own minimum of samples, whatever the split: its median must stand on enough samples to
// resist a burst of other traffic.
inline constexpr int kMinRoundSamples = 10;

// A copy under 1 MiB (Transfer, SmallCopy) rotates its samples over this many placements: host buffer,
// device buffer and streams of its own each. Such a copy's fixed cost follows where its host buffer landed
// (h2d, up to 6% between buffers of one process) and which of the driver's queues its stream took (d2d), a
// draw renewed in every process. A mix of eight halves the spread between rounds that one draw gives
// (docs/notes/variance_sources.md).
inline constexpr int kDefaultPlacements = 8;

// How often, milliseconds, a case's GPUs are read by NVML while it runs (clocks, clock reasons, PCIe link):
// what ties a throttled reading to the samples beside it (health.hpp).
inline constexpr int kDefaultHealthPollMs = 10;

// --cpu's words: no pinning; the fastest CPU at each case's start; or, before each sample of a case its
// family's fast_cpu rule names, the fastest CPU whenever the thread's own reads slow (thread_cpu.hpp).
inline constexpr int kCpuOff = -1;
inline constexpr int kCpuAuto = -2;
inline constexpr int kCpuFast = -3;

struct options {
  int device = 0;            // --device=N; under --device=all, 0 (the first GPU, whose facts head the context)
  bool all_devices = false;  // --device=all: every single-GPU case once on each visible GPU
  std::string sizes_spec = "pow4";
  std::vector<std::uint64_t> sizes;  // parsed from sizes_spec
  double gate_timeout_s = 2.0;
  bool gate = true;                     // --gate=off: the gate never holds a stream (every case ungated)
  bool full = false;                    // --full: every combination of every family's axes, not the default subset
  std::string timeline_path;            // --timeline=FILE
  std::string on_throttle = "warn";     // --on-throttle={warn,skip,fail}
  double noise_pct = kDefaultNoisePct;  // --noise=PCT
  double max_time_per_case_s = kDefaultMaxTimePerCaseS;  // --max_time_per_case=S
  double min_time_s = 0;                        // --benchmark_min_time=S: at least this much timed sample time per case
  int min_samples = kMinSamples;                // --benchmark_min_time=Nx raises it to N
  int rounds = kDefaultRounds;                  // --rounds=N
  int link_rounds = kDefaultLinkRounds;         // --link_rounds=N: rounds of a link-bound case (at least --rounds)
  int link_max_rounds = kDefaultLinkMaxRounds;  // --link_max_rounds=N: at most, for those whose rounds disagree
  int host_rounds = 0;  // --host_rounds=N: rounds of the cases a family's host_rounds rule names (0: --rounds)
  int placements = kDefaultPlacements;  // --placements=N: placements a copy under 1 MiB rotates over (1: one)
  double target_detectable_pct = kDefaultTargetDetectablePct;  // --target_detectable=PCT
  int round = 0;                   // --round=K/N: this process is round K of N, run by the one that runs the last
  std::string round_walls;         // --round_walls=FILE: each case's wall in the run's latest full round
  bool record_samples = false;     // --samples=on: every sample's time into the --benchmark_out file
  bool verify_each = false;        // --verify=each: check the data after every sample, not only after the last
  std::string progress = "auto";   // --progress={on,off,auto}: progress lines on stderr (progress_shown)
  std::string preset = "default";  // --preset={default,nightly,gate}
  int cpu = kCpuFast;  // --cpu=N, auto, fast or off: where the thread that drives the GPU runs (thread_cpu.hpp)
  int health_poll_ms = kDefaultHealthPollMs;  // --health_poll=MS or off (0): how often a case's GPUs are read
  bool help = false;
  bool flags_markdown = false;  // --flags_markdown: the README's flag table (scripts/flags_md.py); no GPU needed
  bool list_families = false;   // --families: one line per family (name, scope, smoke filter); no GPU needed
  bool list_only = false;       // --benchmark_list_tests: no GPU needed
  // --list_gpus=N, with --benchmark_list_tests only: list the cases a machine of N GPUs registers, every pair
  // of them of one link class, without asking CUDA or NVML (no GPU needed, --device=all included).
  int list_gpus = 0;
};

// Whether the Google Benchmark this was built against (1.8 and later) takes "1x"-style iteration counts.
bool benchmark_has_iteration_counts();

// The --benchmark_min_time that makes Google Benchmark run each repetition's function once: the case's
// sampling happens inside (harness/measure/loop). 1.8 takes "1x"; 1.7 a time the first run always exceeds.
std::string benchmark_min_time_arg(bool iteration_counts);

// Parses and removes gpu_bench's flags from argv (argc is updated); Google Benchmark's flags stay. Each flag
// is parsed by its entry in flags() (harness/run/flags.hpp). Throws usage_error with one sentence for a
// malformed value.
options parse_options(int& argc, char** argv);

// A family's own size sweep, unless the user gave --sizes.
std::vector<std::uint64_t> sizes_or(std::vector<std::uint64_t> family_default);

// The process-wide options, set once by main before the families register.
const options& current_options();
void set_current_options(options o);

}  // namespace gpu_bench
