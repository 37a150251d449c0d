#include "harness/run/flags.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "harness/run/flag_values.hpp"
#include "harness/run/sizes.hpp"

namespace gpu_bench {
namespace {

using namespace flag_values;

__attribute__((format(printf, 1, 2))) std::string formatted(const char* format, ...) {
  char buf[2048];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  if (n < 0 || static_cast<std::size_t>(n) >= sizeof buf) throw std::logic_error("a flag's text is too long");
  return buf;
}

std::vector<flag> make_flags() {
  using S = flag_section;
  return {
      {"--device", true, take_device, "--device takes a value: --device=N or --device=all", S::own, "--device=N",
       "the GPU to measure (default 0)", "the GPU to measure (default 0)"},
      {"--device", true, nullptr, "", S::own, "--device=all",
       "every single-GPU case once on each visible GPU in turn, its name ending in\n"
       "/device:N (all of GPU 0's cases, then GPU 1's, ...); listing them needs a GPU.\n"
       "Peer, PeerLatency and AllHost use every visible GPU whichever --device is given.",
       "each single-GPU case once on every visible GPU, its name ending in `/device:N`: about N times the "
       "default's time (`docs/multi_gpu.md`)"},
      {"--sizes", true, take_sizes, "", S::own, "--sizes=SPEC",
       "sizes for Transfer, HostBlocking, Overlap, Alloc, Latency, Peer and AllHost: pow4\n"
       "(default; 4 B to 1 GiB in powers of 4 for Transfer, each other family its own\n"
       "sweep), pow2 (the dense sweep), or a list such as 4,64K,1M,256M (multiples of 4\n"
       "bytes; Latency's footprints at least 128 B)",
       "`pow4` (default: 4 B to 1 GiB in powers of 4 for Transfer), `pow2`, or a list such as `4,64K,1M,256M`"},
      {"--gate_timeout_ms", true,
       [](options& o, const std::string& v) {
         o.gate_timeout_s = static_cast<double>(parse_int(v, "--gate_timeout_ms", 10, 600000)) / 1000.0;
       },
       "", S::own, "--gate_timeout_ms=MS", "how long the gate holds a stream before the case fails (default 2000)",
       "how long the gate may hold a stream (default 2000)"},
      {"--gate", true,
       [](options& o, const std::string& v) {
         check_word(v, "--gate", {"on", "off"}, "on or off");
         o.gate = v == "on";
       },
       "--gate takes a value: --gate=on or --gate=off", S::own, "--gate=off",
       "never hold a stream behind the gate (default on): GPU times then include the\n"
       "host's enqueue where it is slower than the GPU; for tools under which an enqueue\n"
       "waits for the GPU (compute-sanitizer's initcheck)",
       "never hold a stream behind the gate (for compute-sanitizer's initcheck)"},
      {"--full", false, [](options& o, const std::string&) { o.full = true; }, "", S::own, "--full",
       "every combination of every family's axes, not the default subset",
       "every combination of every family's axes, not the default subset"},
      {"--on-throttle", true,
       [](options& o, const std::string& v) {
         check_word(v, "--on-throttle", {"warn", "skip", "fail"}, "warn, skip or fail");
         o.on_throttle = v;
       },
       "", S::own, "--on-throttle=POLICY",
       "warn (default), skip or fail a case run while power or heat held the clocks down",
       "`warn` (default), `skip` or `fail`: what a case does that ran while power or heat held the clocks down"},
      {"--timeline", true,
       [](options& o, const std::string& v) {
         if (v.empty()) throw usage_error("--timeline takes a file name: --timeline=FILE");
         o.timeline_path = v;
       },
       "", S::own, "--timeline=FILE",
       "write one iteration of each selected Overlap case, every copy and kernel on\n"
       "its stream, as Chrome trace JSON (chrome://tracing, Perfetto, gpu-bench-plot)",
       "one sample of each selected Overlap case, every copy and kernel, as Chrome trace JSON"},
      {"--preset", true,
       [](options& o, const std::string& v) {
         check_word(v, "--preset", {"default", "nightly", "gate"}, "default, nightly or gate");
         o.preset = v;
       },
       needs_value("--preset"), S::own, "--preset=NAME",
       "default (the default matrix), nightly (the same, named so in the context), or\n"
       "gate: pinned h2d, d2h and bidir at 256 MiB, d2d, pinned 4 B latency, and peer\n"
       "pairs where there are several GPUs (a short node check; no --benchmark_filter)",
       "`default` (the default matrix), `nightly` (the same, named so in the context), `gate` (a short node "
       "check; takes no `--benchmark_filter`)"},
      {"--rounds", true,
       [](options& o, const std::string& v) { o.rounds = static_cast<int>(parse_int(v, "--rounds", 1, 20)); },
       needs_value("--rounds"), S::own, "--rounds=N",
       formatted("measure every case in N rounds, rounds 1 to N-1 in processes of their own run\n"
                 "one after the other (each in the last round's order), the last in this one (default\n"
                 "%d, 1 to 20). A case's time is the median of its rounds' medians, or from five\n"
                 "rounds the mean of their fastest half (rounds other traffic slowed cannot move\n"
                 "it); noise_pct is the half-width of a 95%% prediction interval for the next run's\n"
                 "figure, from the rounds' spread moderated by that of the cases of its family,\n"
                 "memory kind, direction and size band (never narrower than one round's own\n"
                 "interval or the timer's tick); detectable_pct is the smallest change\n"
                 "gpu-bench-compare calls against a run like it (at least 1%%). With --rounds=1,\n"
                 "noise_pct is the 95%% confidence interval of this process's median alone, which\n"
                 "says nothing of the next run, and there is no detectable_pct (docs/methodology.md)",
                 kDefaultRounds),
       formatted("rounds, each a process of its own (default %d); with `--rounds=1`, `noise_pct` says nothing "
                 "of the next run",
                 kDefaultRounds)},
      {"--link_rounds", true,
       [](options& o, const std::string& v) { o.link_rounds = static_cast<int>(parse_int(v, "--link_rounds", 1, 20)); },
       needs_value("--link_rounds"), S::own, "--link_rounds=N",
       formatted("rounds for copies at the host link's throughput (pinned and registered copies of\n"
                 "1 MiB and more, and AllHost's), where more than --rounds (default %d): others'\n"
                 "traffic on a shared link moves their time over seconds, so their figure needs\n"
                 "more moments of it. Their extra rounds run them alone, between the others. Cheaper\n"
                 "cases ride in them too, first in every round: allocations under 1 GiB, copies under\n"
                 "256 MiB but managed ones, batches of copies under 64 KiB, events, launches",
                 kDefaultLinkRounds),
       formatted("rounds for the copies at the host link's throughput (pinned and registered copies of 1 MiB "
                 "and more, AllHost), where more than `--rounds` (default %d)",
                 kDefaultLinkRounds)},
      {"--link_max_rounds", true,
       [](options& o, const std::string& v) {
         o.link_max_rounds = static_cast<int>(parse_int(v, "--link_max_rounds", 1, 20));
       },
       needs_value("--link_max_rounds"), S::own, "--link_max_rounds=N",
       formatted("a link-bound case whose rounds disagree takes more rounds, up to N in all\n"
                 "(default %d, 1 to 20), until its detectable_pct is projected to come to\n"
                 "--target_detectable; they run after the others, before the last round",
                 kDefaultLinkMaxRounds),
       formatted("more rounds for a link-bound case whose rounds disagree: up to N (default %d), until "
                 "`detectable_pct` comes to `--target_detectable`",
                 kDefaultLinkMaxRounds)},
      {"--target_detectable", true,
       [](options& o, const std::string& v) {
         o.target_detectable_pct = parse_seconds(v, "--target_detectable", 1, 100);
       },
       needs_value("--target_detectable"), S::own, "--target_detectable=PCT",
       formatted("the detectable_pct those extra rounds aim at (default %g)", kDefaultTargetDetectablePct),
       formatted("the `detectable_pct` those extra rounds aim at (default %g)", kDefaultTargetDetectablePct)},
      {"--host_rounds", true,
       [](options& o, const std::string& v) { o.host_rounds = static_cast<int>(parse_int(v, "--host_rounds", 1, 20)); },
       needs_value("--host_rounds"), S::own, "--host_rounds=N",
       "rounds for the costlier cases timed by the host's own work (Batch, HostBlocking's\n"
       "256 MiB copies), where that is more than --rounds (default: as --rounds). The\n"
       "CPU's state moves them between processes; the extra rounds run those cases alone,\n"
       "between the others. The cheaper ones take --link_rounds instead",
       "rounds for Batch and HostBlocking's 256 MiB copies, where more than `--rounds` (default: as `--rounds`)"},
      {"--placements", true,
       [](options& o, const std::string& v) { o.placements = static_cast<int>(parse_int(v, "--placements", 1, 32)); },
       needs_value("--placements"), S::own, "--placements=N",
       formatted("a copy under 1 MiB but pageable and managed ones takes its samples in turn from\n"
                 "N sets of host buffer, device buffer and streams (default %d, 1 to 32): its figure\n"
                 "averages where buffers land, not one draw of it (docs/methodology.md)",
                 kDefaultPlacements),
       formatted("placements (host buffer, device buffer, streams) a copy under 1 MiB, not pageable or managed, takes "
                 "its samples from in turn (default %d; 1: one)",
                 kDefaultPlacements)},
      {"--noise", true, [](options& o, const std::string& v) { o.noise_pct = parse_seconds(v, "--noise", 0.01, 100); },
       needs_value("--noise"), S::own, "--noise=PCT",
       formatted("stop sampling a case in a round once the relative half-width of the 95%%\n"
                 "confidence interval of its median is at most PCT over the square root of the\n"
                 "variance factor of the rounds' center (0.449 for 3 rounds: their center then\n"
                 "carries PCT of it), or one timer tick (default %g)",
                 kDefaultNoisePct),
       formatted("stop sampling a case in a round once its median's 95%% interval is narrow enough that the "
                 "rounds' center carries PCT (default %g)",
                 kDefaultNoisePct)},
      {"--max_time_per_case", true,
       [](options& o, const std::string& v) {
         o.max_time_per_case_s = parse_seconds(v, "--max_time_per_case", 0.001, 3600);
       },
       needs_value("--max_time_per_case"), S::own, "--max_time_per_case=S",
       formatted("stop sampling a case after S seconds of wall time over all its rounds, or once\n"
                 "the untimed part of its samples alone took a quarter of that (default %g); a case\n"
                 "takes at least %d samples in all, and %d in each round, unless one sample\n"
                 "alone outlasts its round's share of S, which its label says",
                 kDefaultMaxTimePerCaseS, kMinSamples, kMinRoundSamples),
       formatted("stop sampling a case after S seconds over all its rounds (default %g)", kDefaultMaxTimePerCaseS)},
      {"--samples", true,
       [](options& o, const std::string& v) {
         check_word(v, "--samples", {"on", "off"}, "on or off");
         o.record_samples = v == "on";
       },
       needs_value("--samples"), S::own, "--samples=on",
       "write every sample of the last round into the --benchmark_out file\n"
       "(sample_times_s), and every earlier round's (earlier_sample_times_s); each\n"
       "round's median is there whenever there are several (round_times_s)",
       "write every sample of every round into the `--benchmark_out` file"},
      {"--verify", true,
       [](options& o, const std::string& v) {
         check_word(v, "--verify", {"end", "each"}, "end or each");
         o.verify_each = v == "each";
       },
       needs_value("--verify"), S::own, "--verify=each", "check the data after every sample (default: after the last)",
       "check the data after every sample (default: after the last)"},
      {"--progress", true,
       [](options& o, const std::string& v) {
         check_word(v, "--progress", {"on", "off", "auto"}, "on, off or auto");
         o.progress = v;
       },
       needs_value("--progress"), S::own, "--progress=WHEN",
       "progress lines on stderr, at most one every 10 s per round: auto (default) and on\n"
       "print them whether stderr is a terminal or a log, off prints none",
       "progress lines on stderr: `auto` (default) and `on` print them, `off` none"},
      {"--cpu", true, take_cpu, "--cpu takes a value: --cpu=N, --cpu=fast, --cpu=auto or --cpu=off", S::own,
       "--cpu=WHICH",
       "the CPU the thread that drives the GPU runs on: fast (default; before each sample\n"
       "of a case the host's own work times, paces or stages, moves to the CPU of the\n"
       "GPU's NUMA node whose clock reads fastest where its own reads slow; other cases\n"
       "run unpinned), auto (each case starts on that CPU), a CPU number (pinned for the\n"
       "whole run), or off (the kernel moves it) (docs/methodology.md)",
       "the CPU of the thread that drives the GPU: `fast` (default: a case the host's own work times, paces or "
       "stages samples on a CPU in its fast state), `auto` (the fastest CPU at each case's start), a CPU number, or "
       "`off` (`docs/methodology.md`)"},
      {"--health_poll", true, take_health_poll, "--health_poll takes a value: --health_poll=MS or --health_poll=off",
       S::own, "--health_poll=MS",
       formatted("how often NVML reads a case's GPUs while it runs (clocks, their reasons, the\n"
                 "PCIe link), milliseconds (default %d); off reads them only at its start and end,\n"
                 "as every case that varies with the host's state is read (docs/methodology.md)",
                 kDefaultHealthPollMs),
       formatted("how often NVML reads a case's GPUs while it runs, ms (default %d); `off`: only at its start and "
                 "end, as for the cases that vary with the host's state",
                 kDefaultHealthPollMs)},
      {"--families", false, [](options& o, const std::string&) { o.list_families = true; }, "", S::own, "--families",
       "one line per family: name, scope (single_gpu or multi_gpu), and a filter\n"
       "selecting a few small cases that cover its code paths",
       "one line per family: name, scope, and its smoke-test filter"},
      {"--help", false, [](options& o, const std::string&) { o.help = true; }, "", S::own, "--help", "this text",
       "every flag, family, axis and counter"},
      {"-h", false, [](options& o, const std::string&) { o.help = true; }, "", S::own, "", "", ""},
      // A round of a run is a process that the run's own process starts with this flag (rounds.hpp).
      {"--round", true, take_round, "", S::own, "", "", ""},
      {"--round_walls", true, [](options& o, const std::string& v) { o.round_walls = v; }, "", S::own, "", "", ""},
      // scripts/flags_md.py writes the README's flag table from what this prints.
      {"--flags_markdown", false, [](options& o, const std::string&) { o.flags_markdown = true; }, "", S::own, "", "",
       ""},
      {"--benchmark_filter", true, nullptr, "", S::google_benchmark, "--benchmark_filter=REGEX",
       "run the cases whose names match, e.g. 'Transfer/dir:h2d/mem:pinned'", ""},
      {"--benchmark_list_tests", false, nullptr, "", S::google_benchmark, "--benchmark_list_tests",
       "list the case names (no GPU needed, except with --device=all)", ""},
      {"--list_gpus", true,
       [](options& o, const std::string& v) { o.list_gpus = static_cast<int>(parse_int(v, "--list_gpus", 1, 64)); },
       needs_value("--list_gpus"), S::google_benchmark, "--list_gpus=N",
       "with --benchmark_list_tests: the cases of a machine of N GPUs, every pair\n"
       "of one link class (no GPU needed, --device=all included)",
       "with `--benchmark_list_tests`: the cases of a machine of N GPUs, with no GPU (`docs/multi_gpu.md`)"},
      {"--benchmark_repetitions", true, nullptr, "", S::google_benchmark, "--benchmark_repetitions=N",
       "repeat each case N times and report mean, median, stddev, cv", ""},
      {"--benchmark_out", true, nullptr, "", S::google_benchmark, "--benchmark_out=FILE --benchmark_out_format=json",
       "write the results with the GPU context", ""},
      {"--benchmark_min_time", true, take_min_time, "", S::google_benchmark, "--benchmark_min_time=SECONDS",
       "at least this much timed sample time per case (a plain number); where the samples are\n"
       "mostly untimed, twice that much wall time (or --max_time_per_case, if longer)",
       "at least SECONDS of timed samples per case (twice that of wall time where they are mostly untimed), or `Nx` "
       "for N samples"},
  };
}

// Where each section's help column starts after the two spaces of indentation, and the gap after a spelling
// wider than that column: as --help has always laid them out.
struct layout {
  std::size_t column;
  std::size_t gap;
};
layout layout_of(flag_section section) {
  return section == flag_section::own ? layout{22, 2} : layout{30, 3};
}

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

const std::vector<flag>& flags() {
  static const std::vector<flag> table = make_flags();
  return table;
}

bool take_flag(options& o, const std::string& arg) {
  std::string value;
  for (const flag& f : flags()) {
    if (f.take == nullptr) continue;
    if (!f.takes_value && arg == f.name) {
      f.take(o, {});
      return true;
    }
    if (f.takes_value && take_value(arg, f.name, value)) {
      f.take(o, value);
      return true;
    }
  }
  for (const flag& f : flags())
    if (f.takes_value && arg == f.name && !f.without_value.empty()) throw usage_error(f.without_value);
  return false;
}

std::string flags_help(flag_section section) {
  const layout l = layout_of(section);
  const std::string indent(2 + l.column, ' ');
  std::string out;
  for (const flag& f : flags()) {
    if (f.section != section || f.spelling.empty()) continue;
    out += "  " + f.spelling;
    out += std::string(f.spelling.size() < l.column ? l.column - f.spelling.size() : l.gap, ' ');
    for (const char c : f.help) {
      out += c;
      if (c == '\n') out += indent;
    }
    out += '\n';
  }
  return out;
}

std::string flags_markdown() {
  std::string out = "| flag | meaning |\n| --- | --- |\n";
  for (const flag& f : flags())
    if (!f.summary.empty()) out += "| `" + markdown_cell(f.spelling) + "` | " + markdown_cell(f.summary) + " |\n";
  return out;
}

options parse_options(int& argc, char** argv) {
  options o;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (take_flag(o, arg)) continue;
    if (flag_is_true(arg, "--benchmark_list_tests")) o.list_only = true;
    argv[out++] = argv[i];
  }
  argc = out;
  argv[argc] = nullptr;
  if (o.list_gpus > 0 && !o.list_only)
    throw usage_error("--list_gpus=N lists the cases of a machine of N GPUs; give it with --benchmark_list_tests");
  if (o.sizes.empty()) o.sizes = parse_size_spec(o.sizes_spec);
  return o;
}

}  // namespace gpu_bench
